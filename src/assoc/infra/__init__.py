"""Infrastructure below the data flow: cache, atomic writes, text files, progress, memory, background imports.

Nothing here knows about stimuli, scorers or tables.
"""

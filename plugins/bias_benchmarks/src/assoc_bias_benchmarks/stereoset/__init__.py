"""StereoSet (Nadeem, Bethke & Reddy, 2021): its items (``items``) and the ``stereoset`` analysis (``analysis``).

The scorer that sends each item's requests to a model is added by the language-model layer's benchmark work; the
table it writes is :mod:`assoc_bias_benchmarks.choice_table`'s.
"""

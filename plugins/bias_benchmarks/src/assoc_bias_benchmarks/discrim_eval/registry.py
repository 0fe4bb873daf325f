SCORERS: tuple[str, ...] = ()
ANALYSES: tuple[str, ...] = ()
STIMULI: tuple[tuple[str, str, str], ...] = ()

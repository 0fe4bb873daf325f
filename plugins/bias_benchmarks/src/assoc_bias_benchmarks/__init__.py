"""The bias benchmarks for assoc: each benchmark is data plus the requests it sends (assoc.lm.requests).

Every benchmark lives in a subpackage of its own that declares what it registers (its bundled stimuli,
its scorer, its analyses; see :mod:`assoc_bias_benchmarks.plugin`), so that adding a benchmark adds a
subpackage and one name to :data:`assoc_bias_benchmarks.plugin.BENCHMARKS`.
"""

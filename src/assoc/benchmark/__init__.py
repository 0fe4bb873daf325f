"""Benchmarks as ``assoc benchmark run`` runs them: the :class:`Benchmark` a plugin registers, and one run of many.

* :mod:`assoc.benchmark.declaration`: :class:`Benchmark` (a scorer, default stimuli, an analysis), registered
  with the ``register_benchmarks`` hook;
* :mod:`assoc.benchmark.run`: :func:`run_benchmarks`, every chosen benchmark on every model, one summary;
* :mod:`assoc.benchmark.cli`: the ``assoc benchmark`` commands.

The names are imported on first use (the command line imports :mod:`assoc.benchmark.cli` at start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.infra.importhooks import public_face as _public_face

if TYPE_CHECKING:  # pragma: no cover
    from assoc.benchmark.declaration import Benchmark as Benchmark
    from assoc.benchmark.run import BenchmarkRun as BenchmarkRun
    from assoc.benchmark.run import run_benchmarks as run_benchmarks

__getattr__, __dir__ = _public_face(globals())

"""assoc's benchmarks: ``python -m benchmarks`` (see ``benchmarks/harness.py``) and the ``bench_*.py`` scripts."""

"""Import modules on a background thread while the calling thread does other work.

A scoring run needs pandas only at its end, to build the table, and importing it takes
about 0.3 s on a 2-core machine. The run's first steps spend their time in code that
releases the GIL (hashing a model's weights, reading files), so an import started when
the run starts finishes in their shadow instead of adding to the run's time. Measured
on the fmat study benchmark (``benchmarks/bench_fmat.py --workload study``): the first
``assoc.score`` call got about 0.25 s shorter.
"""

from __future__ import annotations

import importlib
import sys
import threading


def import_in_background(*names: str) -> threading.Thread | None:
    """Start importing the modules ``names`` (in order) on a thread; None when all are imported already.

    Safe to race with ordinary imports: Python's import system locks each module, so a
    thread that imports one of them meanwhile waits for it and gets the same module. An
    import that fails here is ignored; the caller's own import raises the real error. The
    thread is not a daemon, so the interpreter never exits in the middle of an import.
    """
    missing = [name for name in names if name not in sys.modules]
    if not missing:
        return None

    def work() -> None:
        for name in missing:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - reported by the caller's own import of the module
                return

    thread = threading.Thread(target=work, name="assoc-import-" + "-".join(missing), daemon=False)
    thread.start()
    return thread

"""How many threads torch computes with during a run: ``threads=``, ``--threads N``, ``$ASSOC_THREADS``.

torch runs each operator (a matrix product, a softmax) on a pool of *intra-op* threads, by default
one per physical core. On a machine that other jobs keep busy, those threads wait for each other
at every operator and burn CPU time while they wait; fewer threads can then be faster. assoc
leaves torch's default alone unless asked: :func:`resolve_threads` reads the setting (the
argument, else ``$ASSOC_THREADS``) and checks it before any work, and :func:`torch_threads` sets
it for the duration of a unit of work and restores the previous value afterwards, also after an
error. The scorers never call ``torch.set_num_threads`` themselves: the driver and every executor's
worker (:class:`assoc.executors.base.Worker`) do, so one setting applies to every scorer.

torch is never imported here: when it is not imported yet, the setting is applied right after
the scorer imports it (:func:`assoc.infra.importhooks.call_after_import`), so a scorer that does
not use torch never loads it.
"""

from __future__ import annotations

import contextlib
import contextvars
import numbers
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from assoc.errors import OptionError

#: The environment variable that gives the default number of threads (``threads=`` and ``--threads`` win).
THREADS_VARIABLE = "ASSOC_THREADS"


@dataclass(frozen=True)
class ThreadSetting:
    """The thread count asked for a run, and where it came from.

    Attributes
    ----------
    requested:
        torch's intra-op threads for the run, or ``None`` to leave torch's own default.
    source:
        ``"threads"`` (the argument or ``--threads``), ``"ASSOC_THREADS"`` (the environment variable)
        or ``None`` (nothing was asked).
    """

    requested: int | None = None
    source: str | None = None

    def record(self, used: Iterable[int | None]) -> dict[str, Any]:
        """What provenance records: the request, its source, and the threads torch used (see :func:`used_threads`)."""
        return {"requested": self.requested, "source": self.source, "torch": used_threads(used)}


def _positive_integer(value: Any, what: str) -> int:
    """``value`` (an integer, or its text) as a positive integer, or one :class:`OptionError` naming ``what``."""
    number = value
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit() or (text.startswith("+") and text[1:].isdigit()):
            number = int(text)
    if isinstance(number, bool) or not isinstance(number, numbers.Integral) or int(number) < 1:
        raise OptionError(
            f"{what} must be a positive integer (the number of threads torch computes with), got {value!r}"
        )
    return int(number)


def resolve_threads(threads: Any = None, *, what: str = "threads") -> ThreadSetting:
    """The thread setting of a run: ``threads`` when given, else ``$ASSOC_THREADS``, else torch's default.

    ``threads`` is a positive integer (text such as ``"2"`` from a command line is accepted);
    anything else, or a ``$ASSOC_THREADS`` that is not a positive integer, is an
    :class:`~assoc.errors.OptionError` naming the setting (``what``: ``"--threads"`` on the
    command line), raised before any work. An empty ``$ASSOC_THREADS`` counts as unset.

    The setting is parsed once, where it enters (the command line, or :func:`assoc.score` and
    :func:`assoc.compare`), and travels as this :class:`ThreadSetting` from there on: a
    ``ThreadSetting`` given here is returned as it is, neither parsed nor read from the
    environment again.
    """
    if isinstance(threads, ThreadSetting):
        return threads
    if threads is not None:
        return ThreadSetting(_positive_integer(threads, what), "threads")
    text = os.environ.get(THREADS_VARIABLE, "").strip()
    if not text:
        return ThreadSetting()
    return ThreadSetting(_positive_integer(text, f"${THREADS_VARIABLE}"), THREADS_VARIABLE)


def used_threads(values: Iterable[int | None]) -> int | list[int] | None:
    """One thread count from several workers' reports: the count when they agree, a sorted list when not.

    ``None`` entries (a worker in which torch was never imported) are left out; ``None`` when no
    worker reported a count (a scorer that does not use torch, or a run served wholly from the cache).
    """
    seen = sorted({int(value) for value in values if value is not None})
    if not seen:
        return None
    return seen[0] if len(seen) == 1 else seen


# The count asked of the innermost torch_threads block of this thread (None: nothing asked), for work
# that computes without torch (an ONNX Runtime session in a process without torch, assoc.lm.masked.torch_free).
_REQUESTED: contextvars.ContextVar[int | None] = contextvars.ContextVar("assoc_threads_requested", default=None)


def requested_threads() -> int | None:
    """The thread count the enclosing :func:`torch_threads` block asked for; None when none was asked.

    For runtimes other than torch that should follow the same setting (ONNX Runtime where torch
    is not imported).
    """
    return _REQUESTED.get()


class ThreadsUsed:
    """What :func:`torch_threads` observed: ``value`` is torch's intra-op thread count at the end of the block.

    ``None`` when torch was not imported by then (the block did no torch work).
    """

    value: int | None = None


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[ThreadsUsed]:
    """Run the block with ``torch.set_num_threads(threads)``, then restore the previous count.

    ``threads=None`` changes nothing and only observes. When torch is not imported yet, the
    count is set right after the block imports it (and restored to the default torch chose),
    so the block decides whether torch is loaded at all.

    torch keeps the count per thread once a thread has computed something (its OpenMP pool);
    a thread that starts computing later takes the last count set. Enter this block in the
    thread that does the work, as every executor's worker does.

    Yields
    ------
    ThreadsUsed
        Filled when the block ends: the intra-op thread count torch used in it.
    """
    used = ThreadsUsed()
    asked = _REQUESTED.set(threads)
    previous: list[int] = []
    finder: Any = None

    def apply() -> None:
        import torch

        previous.append(torch.get_num_threads())
        if threads is not None and threads != previous[0]:
            torch.set_num_threads(threads)

    if threads is not None:
        from assoc.infra.importhooks import call_after_import

        finder = call_after_import("torch", apply)
    try:
        yield used
    finally:
        _REQUESTED.reset(asked)
        if finder is not None:
            # Not imported during the block: the setting must not reach a later, unrelated import.
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(finder)
        torch = sys.modules.get("torch")
        if torch is not None and hasattr(torch, "get_num_threads"):
            used.value = int(torch.get_num_threads())
            if previous and torch.get_num_threads() != previous[0]:
                torch.set_num_threads(previous[0])

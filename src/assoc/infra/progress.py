"""Progress of long runs: a bar on a terminal, plain lines at a steady interval when standard error is not one.

Piped or redirected (a log file, a batch job, ``2>&1 | tee``), a run says its size before it starts
(``fmat: 960 items to do (12 units, 3 from the cache)``) and then one line every
:func:`interval` seconds (``$ASSOC_PROGRESS_INTERVAL``, default 10) with what is done of the total,
the rate and the time left. ``progress=False`` (``--no-progress``) shows neither.

After Ctrl-C, :func:`interruption_message` says how far the run got and whether a re-run resumes
(the command line prints it and exits with status 130).

Third-party libraries' bars and info logs are shown only with assoc's own bars, on a terminal
(:func:`quiet_libraries`).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from assoc.infra.importhooks import AfterImport

#: The run's progress setting while :func:`quiet_libraries` is active (``None``: none given).
_RUN_SETTING: contextvars.ContextVar[bool | None] = contextvars.ContextVar("assoc_progress", default=None)


#: Seconds between two plain progress lines when standard error is not a terminal (``$ASSOC_PROGRESS_INTERVAL``).
DEFAULT_INTERVAL = 10.0


def default_enabled() -> bool:
    """Whether progress with ``enabled=None`` is reported (as a bar on a terminal, as plain lines otherwise).

    Inside :func:`quiet_libraries` (every scorer's run, where ``progress=`` / ``--no-progress``
    applies): that run's setting, so bars a scorer's worker opens without being told
    (``load_worker`` has no ``progress`` argument) follow it too. Elsewhere: on.
    """
    setting = _RUN_SETTING.get()
    if setting is not None:
        return setting
    return True


def on_terminal() -> bool:
    """Whether standard error redraws a bar: an interactive terminal, or a Jupyter notebook's output.

    Elsewhere (a pipe, a log file) plain lines are written instead.
    """
    if getattr(sys.stderr, "isatty", lambda: False)():
        return True
    # a notebook kernel's stderr is no terminal, but tqdm.auto draws a widget there
    return "ipykernel" in sys.modules and type(sys.stderr).__module__.startswith("ipykernel")


def interval() -> float:
    """Seconds between plain progress lines: ``$ASSOC_PROGRESS_INTERVAL`` (a positive number), else 10."""
    text = os.environ.get("ASSOC_PROGRESS_INTERVAL", "")
    try:
        value = float(text)
    except ValueError:
        return DEFAULT_INTERVAL
    return value if value > 0 else DEFAULT_INTERVAL


def bar(
    iterable: Any = None,
    *,
    total: int | None = None,
    desc: str | None = None,
    enabled: bool | None = None,
    unit: str = "it",
    leave: bool = False,
    initial: int = 0,
    note: str = "",
    kept: str | None = None,
) -> Any:
    """Return a progress meter writing to standard error: a tqdm bar on a terminal, plain lines otherwise.

    ``enabled=None`` means :func:`default_enabled`. A disabled meter still supports
    ``update``/``close``/``set_postfix_str``/iteration, so callers never branch on it.

    Parameters
    ----------
    iterable, total, desc, unit, leave:
        As for tqdm.
    initial:
        Work already done before this run (e.g. read from the cache): counted in the total done,
        left out of the rate and the time left.
    note:
        Said with the size of the job in its first plain line (e.g. ``"12 units, 3 from the cache"``).
    kept:
        Where finished work is kept for a re-run to resume from (e.g. ``"the cache (.assoc-cache)"``),
        or ``None`` when nothing is kept: :func:`interruption_message` says it after Ctrl-C.
    """
    if enabled is None:
        enabled = default_enabled()
    if enabled and on_terminal():
        meter: Any = _terminal_bar()(
            iterable,
            total=total,
            desc=desc,
            unit=unit,
            leave=leave,
            file=sys.stderr,
            dynamic_ncols=True,
            initial=initial,
        )
    else:  # plain lines, or (disabled) a silent count that Ctrl-C's message still reads
        meter = _Lines(iterable, total=total, desc=desc or "", unit=unit, initial=initial, note=note, quiet=not enabled)
    _JOBS.opened(meter, desc or "", unit, kept)
    return meter


@functools.cache
def _terminal_bar() -> type:
    """The tqdm bar class (the notebook one in Jupyter) that tells :data:`_JOBS` when it closes."""
    from tqdm.auto import tqdm

    class TerminalBar(tqdm):
        def close(self) -> None:
            if _JOBS is not None:  # None while the interpreter shuts down (tqdm closes its bars in __del__)
                _JOBS.closed(self)
            super().close()

    return TerminalBar


def interruption_message() -> str:
    """What a run stopped by Ctrl-C got done and whether re-running it resumes, or ``""`` when no run was under way.

    It describes the outermost meter (:func:`bar`) of the run that was interrupted: finished work it counted,
    and where that work is kept (its ``kept``).
    """
    return _JOBS.message()


class _Job:
    """The outermost meter that is open (or was, when it closed unfinished): what Ctrl-C reports."""

    def __init__(self) -> None:
        # reentrant: a tqdm bar left open closes itself in __del__, which the garbage collector may run while
        # this thread holds the lock (inside opened/closed)
        self._lock = threading.RLock()
        self._open: list[Any] = []
        self._about: dict[int, tuple[str, str, str | None]] = {}
        self._last: tuple[Any, str, str, str | None] | None = None

    def opened(self, meter: Any, desc: str, unit: str, kept: str | None) -> None:
        with self._lock:
            if not self._open:
                self._last = None
            self._open.append(meter)
            self._about[id(meter)] = (desc, unit, kept)

    def closed(self, meter: Any) -> None:
        with self._lock:
            # by identity: tqdm's bars compare by their counts (``==``), so ``in`` and ``remove`` would mix them up
            place = next((i for i, m in enumerate(self._open) if m is meter), None)
            if place is None:
                return
            if place == 0:
                desc, unit, kept = self._about[id(meter)]
                total = getattr(meter, "total", None)
                if total is not None and meter.n < total:  # unfinished: what Ctrl-C (or an error) stopped
                    self._last = (meter, desc, unit, kept)
            del self._open[place]
            self._about.pop(id(meter), None)

    def message(self) -> str:
        with self._lock:
            if self._open:
                meter = self._open[0]
                desc, unit, kept = self._about[id(meter)]
            elif self._last is not None:
                meter, desc, unit, kept = self._last
            else:
                return ""
        total = getattr(meter, "total", None)
        done = f"{int(meter.n)} of {total}" if total is not None else f"{int(meter.n)}"
        text = f"{desc + ': ' if desc else ''}{done} {_plural(unit, total)} done"
        if kept:
            return f"{text}, kept in {kept}; run the same command again to resume (finished work is not redone)"
        return f"{text}; nothing is kept, so running the command again starts over"


_JOBS = _Job()


def _plural(unit: str, count: float | None) -> str:
    return unit if count == 1 or unit.endswith("s") else f"{unit}s"


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class _Lines:
    """A progress meter for a standard error that is not a terminal: plain lines at a steady interval.

    The outermost meter writes the size of the job when it opens; while any is open, one line every
    :func:`interval` seconds, written by a background thread (so a line comes even while one long step
    runs), describes the outermost meter, with the innermost one's count (and its postfix) after it. With ``quiet``
    it writes nothing and only counts (for :func:`interruption_message`).
    """

    def __init__(
        self, iterable: Any, *, total: int | None, desc: str, unit: str, initial: int, note: str, quiet: bool = False
    ):
        if total is None and iterable is not None:
            with contextlib.suppress(TypeError):
                total = len(iterable)
        self.iterable, self.total, self.desc, self.unit = iterable, total, desc, unit
        self.n: float = initial
        self.initial = initial
        self.postfix = ""
        self.started = time.monotonic()
        self._first: tuple[float, float] | None = None  # when the first step finished, and the count then
        self.disable = quiet
        outermost = not quiet and _TICKER.add(self)
        if outermost and total:
            about = f" ({note})" if note else ""
            already = f", {initial} done before" if initial else ""
            _write(f"{self._name()}{total} {_plural(unit, total)} to do{already}{about}")

    def _name(self) -> str:
        return f"{self.desc}: " if self.desc else ""

    def __iter__(self) -> Iterator[Any]:
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        finally:
            self.close()

    def __len__(self) -> int:
        return int(self.total or 0)

    def __enter__(self) -> _Lines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, n: float = 1) -> None:
        self.n += n
        if self._first is None and self.n > self.initial:
            self._first = (time.monotonic(), self.n)

    def rate(self) -> float:
        """Work per second since the first step finished (the start-up: imports, loading a model, is left out).

        Until a second step has finished: the work done over the time since the meter opened.
        """
        now = time.monotonic()
        if self._first is not None and self.n > self._first[1] and now > self._first[0]:
            return (self.n - self._first[1]) / (now - self._first[0])
        elapsed = now - self.started
        return (self.n - self.initial) / elapsed if elapsed > 0 else 0.0

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        self.postfix = text

    def refresh(self) -> None:
        """Nothing to redraw: lines are written at the interval."""

    def close(self) -> None:
        outermost = not self.disable and _TICKER.remove(self)
        _JOBS.closed(self)
        if outermost and self.total and self.n >= self.total and self.n > self.initial:
            _write(f"{self._name()}done, {int(self.n)} {_plural(self.unit, self.n)} in {_duration(self.elapsed())}")

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def line(self) -> str:
        """``desc: done/total unit (percent), rate, time left``."""
        fresh, elapsed, rate = self.n - self.initial, self.elapsed(), self.rate()
        if self.total:
            share = self.n / self.total
            text = f"{self._name()}{int(self.n)}/{self.total} {_plural(self.unit, self.total)} ({share:.0%})"
        else:
            text = f"{self._name()}{int(self.n)} {_plural(self.unit, self.n)}"
        text += f", {rate:.3g} {self.unit}/s" if fresh else ", starting"
        if self.total and fresh and rate > 0:
            text += f", about {_duration((self.total - self.n) / rate)} left"
        text += f", {_duration(elapsed)} so far"
        return text + (f" [{self.postfix}]" if self.postfix else "")


def _write(text: str) -> None:
    with contextlib.suppress(Exception):  # a closed or broken standard error must never stop the run
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


class _Ticker:
    """The open plain-line meters, and the one thread that writes their line at the interval."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._meters: list[_Lines] = []
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, meter: _Lines) -> bool:
        """Register ``meter``; return whether it is the outermost one."""
        with self._lock:
            self._meters.append(meter)
            if self._thread is None or not self._thread.is_alive():
                self._wake.clear()
                self._thread = threading.Thread(target=self._run, name="assoc-progress", daemon=True)
                self._thread.start()
            return len(self._meters) == 1

    def remove(self, meter: _Lines) -> bool:
        """Unregister ``meter``; return whether it was the outermost one."""
        with self._lock:
            if meter not in self._meters:
                return False
            outermost = self._meters[0] is meter
            self._meters.remove(meter)
            if not self._meters:
                self._wake.set()
            return outermost

    def _run(self) -> None:
        while not self._wake.wait(interval()):
            with self._lock:
                if not self._meters:
                    break
                text = self._meters[0].line()
                if len(self._meters) > 1:
                    inner = self._meters[-1]
                    total = f"/{inner.total}" if inner.total else ""
                    text += f"; {inner._name()}{int(inner.n)}{total} {_plural(inner.unit, inner.total or inner.n)}"
                    text += f" [{inner.postfix}]" if inner.postfix else ""  # what it waits for (retries, ...)
            _write(text)
        with self._lock:
            self._thread = None


_TICKER = _Ticker()


# Libraries whose bars and info logs reach standard error when a plugin loads a model. transformers and
# huggingface_hub have their own switches for bars; the others show bars only at INFO level or below.
LIBRARIES = ("huggingface_hub", "transformers", "sentence_transformers", "datasets", "gensim", "tokenizers")


@contextlib.contextmanager
def quiet_libraries(progress: bool | None = None) -> Iterator[None]:
    """Make third-party libraries' progress bars and info logs follow assoc's ``progress`` setting.

    With ``progress`` false, or ``None`` while standard error is not a terminal (their bars would
    write a line per redraw into a log; assoc's own progress is plain lines there), the libraries
    in :data:`LIBRARIES` show no progress bars (transformers' "Loading weights", Hugging Face
    downloads) and log warnings and errors only, for the duration of the block; their previous
    state is restored afterwards. A library first imported inside the block is quietened as soon
    as its import finishes, so a plugin does not need to import it early. With ``progress`` true
    (asked for explicitly) nothing changes.

    The core wraps every scorer's ``score`` in it; plugin authors use it around their own
    commands' work (``with assoc.infra.progress.quiet_libraries(progress): ...``). Inside the
    block, assoc's own bars with ``enabled=None`` follow ``progress`` too (:func:`default_enabled`).
    """
    libraries_shown = progress if progress is not None else default_enabled() and on_terminal()
    token = _RUN_SETTING.set(default_enabled() if progress is None else bool(progress))
    try:
        if libraries_shown:
            yield
        else:
            with _libraries_quiet():
                yield
    finally:
        _RUN_SETTING.reset(token)


@contextlib.contextmanager
def _libraries_quiet() -> Iterator[None]:
    restore: list[Callable[[], None]] = []

    def imported(name: str) -> None:
        if name == "transformers":
            # transformers starts with its bars off when huggingface_hub's are (we just turned those off):
            # restore it last, to follow huggingface_hub's restored state
            restore.insert(0, _quiet(name, follow_hub=True))
        else:
            restore.append(_quiet(name))

    hook = AfterImport(LIBRARIES, imported)
    for name in LIBRARIES:
        # transformers and huggingface_hub set their loggers' levels when imported: quieten them after that
        if name in sys.modules or name not in ("transformers", "huggingface_hub"):
            restore.append(_quiet(name))
    sys.meta_path.insert(0, hook)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(hook)
        for undo in reversed(restore):
            with contextlib.suppress(Exception):  # restoring a library's settings must never mask the real error
                undo()


def _quiet(name: str, follow_hub: bool = False) -> Callable[[], None]:
    """Quieten library ``name``; return the function that restores its settings."""
    undo: list[Callable[[], None]] = []
    # An explicit HF_HUB_DISABLE_PROGRESS_BARS is the user's choice: leave the bars alone
    # (huggingface_hub warns when asked to change them then).
    bars_set_by_user = "HF_HUB_DISABLE_PROGRESS_BARS" in os.environ
    if name == "transformers" and not bars_set_by_user:
        from transformers.utils import logging as hf_logging

        if follow_hub:
            from huggingface_hub.utils import are_progress_bars_disabled

            hf_logging.disable_progress_bar()
            undo.append(lambda: None if are_progress_bars_disabled() else hf_logging.enable_progress_bar())
        elif hf_logging.is_progress_bar_enabled():
            hf_logging.disable_progress_bar()
            undo.append(hf_logging.enable_progress_bar)
    elif name == "huggingface_hub" and not bars_set_by_user:
        from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

        if not are_progress_bars_disabled():
            disable_progress_bars()
            undo.append(enable_progress_bars)
    logger = logging.getLogger(name)
    if logger.getEffectiveLevel() < logging.WARNING:
        level = logger.level
        logger.setLevel(logging.WARNING)
        undo.append(lambda: logger.setLevel(level))

    def restore() -> None:
        for step in reversed(undo):
            step()

    return restore

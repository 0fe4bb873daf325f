"""Progress bars for long runs: shown on a terminal, silent when output is piped.

Third-party libraries' bars and info logs follow the same setting (:func:`quiet_libraries`).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

from assoc.infra.importhooks import AfterImport

#: The run's progress setting while :func:`quiet_libraries` is active (``None``: none given).
_RUN_SETTING: contextvars.ContextVar[bool | None] = contextvars.ContextVar("assoc_progress", default=None)


def default_enabled() -> bool:
    """Whether a bar with ``enabled=None`` shows.

    Inside :func:`quiet_libraries` (every scorer's run, where ``progress=`` / ``--no-progress``
    applies): that run's setting, so bars a scorer's worker opens without being told
    (``load_worker`` has no ``progress`` argument) follow it too. Elsewhere: on only when
    standard error is an interactive terminal.
    """
    setting = _RUN_SETTING.get()
    if setting is not None:
        return setting
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def bar(
    iterable: Any = None,
    *,
    total: int | None = None,
    desc: str | None = None,
    enabled: bool | None = None,
    unit: str = "it",
    leave: bool = False,
) -> Any:
    """Return a tqdm progress bar writing to standard error.

    ``enabled=None`` means "on when stderr is a terminal". A disabled bar still
    supports ``update``/``close``/iteration, so callers never branch on it.
    """
    from tqdm.auto import tqdm

    if enabled is None:
        enabled = default_enabled()
    return tqdm(
        iterable,
        total=total,
        desc=desc,
        disable=not enabled,
        unit=unit,
        leave=leave,
        file=sys.stderr,
        dynamic_ncols=True,
    )


# Libraries whose bars and info logs reach standard error when a plugin loads a model. transformers and
# huggingface_hub have their own switches for bars; the others show bars only at INFO level or below.
LIBRARIES = ("huggingface_hub", "transformers", "sentence_transformers", "datasets", "gensim", "tokenizers")


@contextlib.contextmanager
def quiet_libraries(progress: bool | None = None) -> Iterator[None]:
    """Make third-party libraries' progress bars and info logs follow assoc's ``progress`` setting.

    With ``progress`` false (``None``: false unless standard error is a terminal, as for
    :func:`bar`) the libraries in :data:`LIBRARIES` show no progress bars (transformers'
    "Loading weights", Hugging Face downloads) and log warnings and errors only, for the
    duration of the block; their previous state is restored afterwards. A library first
    imported inside the block is quietened as soon as its import finishes, so a plugin
    does not need to import it early. With ``progress`` true nothing changes.

    The core wraps every scorer's ``score`` in it; plugin authors use it around their own
    commands' work (``with assoc.infra.progress.quiet_libraries(progress): ...``). Inside the
    block, assoc's own bars with ``enabled=None`` follow ``progress`` too (:func:`default_enabled`).
    """
    if progress is None:
        progress = default_enabled()
    token = _RUN_SETTING.set(bool(progress))
    try:
        if progress:
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

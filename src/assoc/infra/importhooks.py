"""Run code right after a third-party library is first imported, without importing it.

Used where assoc must adjust a library that it does not want to import itself: the ``DataFrame.assoc``
accessor is registered when pandas is imported (:func:`assoc.table.accessor.register`), and libraries'
progress bars are quietened when they are imported during a run (:func:`assoc.infra.progress.quiet_libraries`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any


class AfterImport:
    """Calls ``callback(name)`` right after the top-level module ``name`` (one of ``names``) is first imported.

    A meta path finder by duck typing (``find_spec``), like :class:`CallbackLoader` is a loader: importing
    :mod:`importlib.abc` would cost every ``import assoc`` measurable start-up time.
    """

    def __init__(self, names: tuple[str, ...], callback: Callable[[str], None]) -> None:
        self.names = set(names)
        self.callback = callback
        self._finding: set[str] = set()

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        """The spec the other finders give for ``fullname``, its loader wrapped; ``None`` for other names."""
        if fullname not in self.names or fullname in self._finding:
            return None
        import importlib.util  # only when a watched module is imported for the first time

        self._finding.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._finding.discard(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = CallbackLoader(spec.loader, lambda: self.callback(fullname))  # type: ignore[assignment]  # a loader by duck typing
        return spec


def call_after_import(name: str, callback: Callable[[], None]) -> AfterImport | None:
    """Call ``callback()`` once ``name`` is imported: now if it is already, else right after its first import.

    Returns the finder put first on :data:`sys.meta_path` (``None`` when the callback ran at once);
    the finder stays there, inert, after the import (``find_spec`` is asked only for modules not
    yet imported).
    """
    if name in sys.modules:
        callback()
        return None
    finder = AfterImport((name,), lambda _name: callback())
    sys.meta_path.insert(0, finder)
    return finder


class CallbackLoader:
    """Runs the wrapped loader, then a callback; everything else is the wrapped loader's."""

    def __init__(self, loader: Any, callback: Callable[[], None]) -> None:
        self._loader = loader
        self._callback = callback

    def create_module(self, spec: Any) -> Any:
        """The wrapped loader's module."""
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        """Run the module with the wrapped loader, then the callback."""
        self._loader.exec_module(module)
        with contextlib.suppress(Exception):  # a library we cannot adjust must still import
            self._callback()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


def lazy_names(
    module: str, table: dict[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a package face whose names are imported on first use (PEP 562).

    ``table`` maps each public name to ``"module"`` (the same name there) or ``"module:name"``;
    a name is imported when first asked for and then stored in ``namespace`` (the face's
    ``globals()``), so later uses cost nothing. What ``import assoc`` and the service modules
    share: a face is cheap to import, and a plugin's start-up imports only what it uses.
    """
    import importlib

    def __getattr__(name: str) -> Any:
        if name in table:
            where, _, attribute = table[name].partition(":")
            value = getattr(importlib.import_module(where), attribute or name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__

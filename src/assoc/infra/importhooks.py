"""Run code right after a library is first imported, without importing it; and package faces that import lazily.

Used where assoc must adjust a library that it does not want to import itself: the ``DataFrame.assoc``
accessor is registered when pandas is imported (:func:`assoc.table.accessor.register`), and libraries'
progress bars are quietened when they are imported during a run (:func:`assoc.infra.progress.quiet_libraries`).

:func:`public_face` gives a package face (an ``__init__.py`` that re-exports its modules' names) its
``__all__`` and its lazy imports from the one place it declares each name: its imports.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any, NamedTuple


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


def public_face(namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` of a package face that declares each public name once, as an import.

    A face declares a public name by importing it under its own name, with ``as`` (PEP 484's
    re-export form, which mypy, pyright and ruff read as "public")::

        from assoc.table.files import read_table as read_table        # imported with the face

        if TYPE_CHECKING:
            from assoc.api import score as score                       # imported on first use

    An import under ``if TYPE_CHECKING:`` runs only for the type checker; here it names a lazy name,
    imported when first asked for and then stored in ``namespace`` (the face's ``globals()``), so
    that ``import assoc`` stays cheap (PEP 562). ``__all__`` is every declared name, in the order
    written, read from the face's source the first time it is asked for (by ``from face import *``,
    a test, the documentation); so there is no list to keep in step with the imports. Use it as the
    face's last line::

        __getattr__, __dir__ = public_face(globals())

    Names imported without ``as``, or under a private ``_name``, are the face's own helpers, not
    part of ``__all__``. See :func:`declared_names` for the rule.
    """
    import importlib

    module = namespace["__name__"]
    declared: list[FaceNames] = []

    def names() -> FaceNames:
        if not declared:
            source = namespace["__spec__"].loader.get_source(module)
            if source is None:
                raise ImportError(f"{module}: its public names are read from its source, which is not installed")
            declared.append(declared_names(source, module))
        return declared[0]

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            namespace["__all__"] = list(names().all)
            return namespace["__all__"]
        target = names().lazy.get(name)
        if target is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        where, _, attribute = target.partition(":")
        value = importlib.import_module(where)
        if attribute:
            value = getattr(value, attribute)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names().lazy))

    return __getattr__, __dir__


class FaceNames(NamedTuple):
    """The public names a face declares, in the order written (``all``).

    ``eager``: those imported with the face; ``lazy``: the others, name -> ``"module:attribute"``
    (``"module"`` alone for a module imported as a whole).
    """

    eager: list[str]
    lazy: dict[str, str]
    all: list[str]


def declared_names(source: str, package: str) -> FaceNames:
    """The public names the face ``package`` (an ``__init__.py``) declares in ``source``.

    A name is declared by an import, at the face's top level or under ``if TYPE_CHECKING:``, that
    gives it with ``as`` a name that is not private (``x as x``; ``__version__ as __version__``;
    a rename ``x as y`` declares ``y``). Relative imports are resolved against ``package``.
    """
    import ast

    eager: list[str] = []
    lazy: dict[str, str] = {}
    order: list[str] = []

    def public(alias: ast.alias) -> str | None:
        name = alias.asname
        if name is None or (name.startswith("_") and not (name.startswith("__") and name.endswith("__"))):
            return None
        return name

    def read(statements: list[ast.stmt], deferred: bool) -> None:
        for node in statements:
            if isinstance(node, ast.If) and _is_type_checking(node.test):
                read(node.body, True)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    name = public(alias)
                    if name is None:
                        continue
                    order.append(name)
                    if not deferred:
                        eager.append(name)
                    elif isinstance(node, ast.Import):
                        lazy[name] = alias.name
                    else:
                        lazy[name] = f"{_absolute(node, package)}:{alias.name}"

    read(ast.parse(source).body, False)
    return FaceNames(eager, lazy, order)


def _is_type_checking(test: Any) -> bool:
    import ast

    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _absolute(node: Any, package: str) -> str:
    """The module an ``ImportFrom`` node names, relative imports resolved inside ``package``."""
    if not node.level:
        return str(node.module)
    parts = package.split(".")
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))

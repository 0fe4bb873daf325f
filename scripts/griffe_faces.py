"""A Griffe extension for the documentation site (``mkdocs.yml``: the python handler's ``extensions``).

A package face of assoc keeps no ``__all__``: it declares each public name once, by its import
(``from m import x as x``), and :func:`assoc.infra.importhooks.public_face` makes ``__all__`` from
those imports when Python asks for it. Griffe reads source without running it, so this extension
gives such a face the same list as its exports, read from its source by the same rule
(:func:`assoc.infra.importhooks.declared_names`): cross-references such as ``assoc.read_table`` then
resolve as they do with a written ``__all__``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import griffe


class PublicFaces(griffe.Extension):
    """Sets the exports of every module that ends with ``__getattr__, __dir__ = _public_face(globals())``."""

    def on_module_members(self, *, mod: griffe.Module, **kwargs: Any) -> None:
        """Give a package face the exports its imports declare."""
        from assoc.infra.importhooks import declared_names

        path = mod.filepath
        if mod.exports is not None or not isinstance(path, Path) or path.name != "__init__.py":
            return
        source = path.read_text(encoding="utf-8")
        if "_public_face(globals())" in source:
            mod.exports = list(declared_names(source, mod.path).all)

"""Infrastructure below the data flow: cache, atomic writes, text files, progress, memory, background imports.

Nothing here knows about stimuli, scorers or tables. One of the three service modules of the
plugin API (docs/plugin-api.md): a plugin imports the names below from ``assoc.infra``, never
from its modules, which may move: the one on-disk cache (:class:`Cache`, :class:`Namespace`,
:func:`digest`, :func:`exclusive_lock`, :func:`default_root`, :class:`CacheWarning`), progress
bars (:func:`bar`), memory budgets (:class:`BytesLRU`, :func:`physical_memory`,
:func:`check_fits_memory`) and atomic files (:func:`atomic_write`, :func:`check_output_file`,
also at the top level of ``assoc``). Nothing is imported until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.infra.importhooks import lazy_names as _lazy_names

#: public name -> the module that defines it
_LAZY = {
    "BytesLRU": "assoc.infra.memory",
    "Cache": "assoc.infra.cache",
    "CacheWarning": "assoc.infra.cache",
    "Namespace": "assoc.infra.cache",
    "atomic_write": "assoc.infra.io",
    "bar": "assoc.infra.progress",
    "check_fits_memory": "assoc.infra.memory",
    "check_output_file": "assoc.infra.io",
    "default_root": "assoc.infra.cache",
    "digest": "assoc.infra.cache",
    "exclusive_lock": "assoc.infra.cache",
    "physical_memory": "assoc.infra.memory",
}

__all__ = [
    "BytesLRU",
    "Cache",
    "CacheWarning",
    "Namespace",
    "atomic_write",
    "bar",
    "check_fits_memory",
    "check_output_file",
    "default_root",
    "digest",
    "exclusive_lock",
    "physical_memory",
]


__getattr__, __dir__ = _lazy_names(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover
    from assoc.infra.cache import Cache, CacheWarning, Namespace, default_root, digest, exclusive_lock
    from assoc.infra.io import atomic_write, check_output_file
    from assoc.infra.memory import BytesLRU, check_fits_memory, physical_memory
    from assoc.infra.progress import bar

"""Infrastructure below the data flow: cache, atomic writes, text files, progress, memory, background imports.

Nothing here knows about stimuli, scorers or tables. One of the three service modules of the
plugin API (docs/plugin-api.md): a plugin imports the names below from ``assoc.infra``, never
from its modules, which may move: the one on-disk cache (:class:`Cache`, :class:`Namespace`,
:func:`digest`, :func:`exclusive_lock`, :func:`default_root`, :class:`CacheWarning`; the content
fingerprints of artefacts kept beside it: :func:`seal`, :func:`intact`, :func:`file_sha256`), progress
bars (:func:`bar`), memory budgets (:class:`BytesLRU`, :func:`physical_memory`,
:func:`check_fits_memory`), atomic files (:func:`atomic_write`, :func:`check_output_file`,
also at the top level of ``assoc``) and a user's text file read as UTF-8 with one clear line
when it is not (:func:`read_text`). Nothing is imported until a name is used.
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
    "file_sha256": "assoc.infra.cache",
    "intact": "assoc.infra.cache",
    "physical_memory": "assoc.infra.memory",
    "read_text": "assoc.infra.textfiles",
    "seal": "assoc.infra.cache",
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
    "file_sha256",
    "intact",
    "physical_memory",
    "read_text",
    "seal",
]


__getattr__, __dir__ = _lazy_names(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover
    from assoc.infra.cache import (
        Cache,
        CacheWarning,
        Namespace,
        default_root,
        digest,
        exclusive_lock,
        file_sha256,
        intact,
        seal,
    )
    from assoc.infra.io import atomic_write, check_output_file
    from assoc.infra.memory import BytesLRU, check_fits_memory, physical_memory
    from assoc.infra.progress import bar
    from assoc.infra.textfiles import read_text

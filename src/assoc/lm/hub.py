"""The local Hugging Face cache and the Hub: list, download, remove models, and fail fast offline.

What ``assoc models`` runs (the FMAT R package's ``BERT_info``/``BERT_download``/``BERT_remove``/
``set_cache_folder``). Everything goes through ``huggingface_hub`` and respects its variables:
``HF_HUB_CACHE`` (else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``) for the cache and
``HF_ENDPOINT`` for the Hub (a mirror). The environment is read at each call, not at import, so
a changed ``HF_HOME`` takes effect in the same process.

[`check_hub_reachable`][assoc.lm.check_hub_reachable] is the fast failure: the Hub's own client retries a connection
error for about a minute before it gives up; one short TCP connection attempt says within
seconds whether there is any point in asking.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from assoc.errors import ModelError, OptionError

DEFAULT_ENDPOINT = "https://huggingface.co"
#: Seconds to wait for a TCP connection to the Hub before calling it unreachable.
CONNECT_TIMEOUT = 3.0
#: Files a fill-mask model does not need (other frameworks' weights, exports): not downloaded.
IGNORED_FILES = ("*.h5", "*.msgpack", "*.ot", "tf_model*", "flax_model*", "*.onnx", "onnx/*", "openvino/*", "coreml/*")


def cache_dir() -> Path:
    """The Hugging Face Hub cache directory, as ``huggingface_hub`` resolves it from the environment."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    try:  # the library's own default (it may have been configured in this process)
        from huggingface_hub import constants

        return Path(constants.HF_HUB_CACHE).expanduser()
    except ImportError:  # pragma: no cover - assoc[mlm] installs huggingface_hub
        xdg = os.environ.get("XDG_CACHE_HOME")
        return (Path(xdg) if xdg else Path.home() / ".cache") / "huggingface" / "hub"


def endpoint() -> str:
    """The Hub's address: ``HF_ENDPOINT`` or ``https://huggingface.co``."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def offline() -> bool:
    """True when the environment says not to use the network (``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE``)."""
    return any(os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on") for v in _OFFLINE_VARIABLES)


_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def hub_reachable(timeout: float = CONNECT_TIMEOUT) -> bool:
    """Whether a TCP connection to the Hub's host opens within ``timeout`` seconds (False when offline)."""
    if offline():
        return False
    parts = urlsplit(endpoint())
    if not parts.hostname:
        return False
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return True
    except OSError:
        return False


def advice(model: str) -> str:
    """What to do about a model that is neither cached nor downloadable: the three ways forward."""
    return (
        f"download it where a network exists (assoc models download {model}), pass a local model "
        "directory, or build the tiny demo model (assoc models tiny DIR)"
    )


def check_hub_reachable(model: str, *, action: str = "load model") -> None:
    """Raise [`ModelError`][assoc.ModelError] at once when ``model`` would have to come from an unreachable Hub.

    Called for a Hub id that is not in the local cache; the message names the cache, the
    endpoint and what to do, instead of a minute of retries ending in a connection error.
    """
    if hub_reachable():
        return
    why = "offline mode is on (HF_HUB_OFFLINE)" if offline() else f"the Hub ({endpoint()}) cannot be reached"
    raise ModelError(
        f"cannot {action} {model!r}: it is not in the local Hugging Face cache ({cache_dir()}) and {why}: "
        f"{advice(model)}"
    )


@dataclass(frozen=True)
class CachedRevision:
    """One downloaded revision (commit) of a cached model."""

    commit: str
    refs: tuple[str, ...]
    size_on_disk: int
    n_files: int
    snapshot: Path


@dataclass(frozen=True)
class CachedModel:
    """One model repository in the local Hugging Face cache."""

    repo_id: str
    size_on_disk: int
    n_files: int
    last_accessed: float | None
    revisions: tuple[CachedRevision, ...]
    path: Path


def cached_models(directory: str | os.PathLike[str] | None = None) -> list[CachedModel]:
    """The models in the Hugging Face cache (``huggingface_hub.scan_cache_dir``), sorted by id.

    Datasets and Spaces in the same cache are left out. A cache directory that does not exist
    yet holds no models.
    """
    from huggingface_hub import scan_cache_dir

    root = Path(directory) if directory is not None else cache_dir()
    if not root.is_dir():
        return []
    info = scan_cache_dir(root)
    models = []
    for repo in info.repos:
        if repo.repo_type != "model":
            continue
        revisions = tuple(
            CachedRevision(
                commit=rev.commit_hash,
                refs=tuple(sorted(rev.refs)),
                size_on_disk=int(rev.size_on_disk),
                n_files=int(rev.nb_files),
                snapshot=Path(rev.snapshot_path),
            )
            for rev in sorted(repo.revisions, key=lambda r: r.commit_hash)
        )
        models.append(
            CachedModel(
                repo_id=repo.repo_id,
                size_on_disk=int(repo.size_on_disk),
                n_files=int(repo.nb_files),
                last_accessed=repo.last_accessed,
                revisions=revisions,
                path=Path(repo.repo_path),
            )
        )
    return sorted(models, key=lambda m: m.repo_id.lower())


def download_model(model: str, *, revision: str | None = None) -> Path:
    """Download ``model`` (a Hub id) into the local cache and return its snapshot directory.

    Only the files a fill-mask or sentence model needs are fetched (other frameworks' weights and
    exports are skipped: `IGNORED_FILES`). Fails within seconds, with what to do, when the Hub
    cannot be reached.
    """
    from huggingface_hub import snapshot_download

    model = model.strip()
    if not model or Path(model).expanduser().exists():
        raise OptionError(f"{model!r} is not a Hugging Face model id (a local directory needs no download)")
    check_hub_reachable(model, action="download model")
    try:
        path = snapshot_download(
            repo_id=model, revision=revision, cache_dir=str(cache_dir()), ignore_patterns=list(IGNORED_FILES)
        )
    except Exception as exc:  # repository not found, gated, revision unknown, HTTP errors: one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise ModelError(f"cannot download {model!r} from {endpoint()}: {type(exc).__name__}: {first}") from exc
    return Path(path)


def remove_model(model: str, *, revision: str | None = None) -> tuple[CachedModel, int]:
    """Delete ``model`` (all revisions, or the one ``revision`` names) from the cache; return it and the bytes freed."""
    from huggingface_hub import scan_cache_dir

    found = {m.repo_id: m for m in cached_models()}
    if model not in found:
        from assoc.errors import did_you_mean

        raise ModelError(
            f"model {model!r} is not in the local Hugging Face cache ({cache_dir()}){did_you_mean(model, found)}"
        )
    entry = found[model]
    commits = [r.commit for r in entry.revisions]
    if revision is not None:
        chosen = [r.commit for r in entry.revisions if r.commit.startswith(revision) or revision in r.refs]
        if not chosen:
            raise ModelError(f"model {model!r} has no cached revision {revision!r} (cached: {', '.join(commits)})")
        commits = chosen
    strategy: Any = scan_cache_dir(cache_dir()).delete_revisions(*commits)
    freed = int(strategy.expected_freed_size)
    strategy.execute()
    return entry, freed


def human_size(n: int) -> str:
    """Bytes as ``12.3 MB`` (decimal units, as ``huggingface-cli scan-cache`` prints them)."""
    size = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} TB"  # pragma: no cover - the loop returns

"""Find, identify and load a fill-mask model (Hugging Face id or local directory).

Nothing here imports torch or transformers at module import time.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from assoc.errors import ModelError, OptionError

from .options import DTYPES

# Fingerprints of local directories, keyed by (path, sizes, mtimes): hashing a large
# weight file once per process is enough.
_LOCAL_FINGERPRINTS: dict[tuple, str] = {}


def resolve_device(device: str) -> str:
    """Return a torch device string; ``"auto"`` picks CUDA when available, else CPU."""
    import torch

    device = (device or "cpu").strip().lower()
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise OptionError(f"device {device!r} requested but CUDA is not available (torch {torch.__version__})")
        return device
    if device == "mps":
        if not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
            raise OptionError("device 'mps' requested but it is not available")
        return device
    if device != "cpu":
        raise OptionError(f"unknown device {device!r}; use 'cpu', 'cuda', 'cuda:N', 'mps' or 'auto'")
    return device


def torch_dtype(dtype: str):
    """Map ``"float32" | "float16" | "bfloat16"`` to the torch dtype."""
    import torch

    if dtype not in DTYPES:
        raise OptionError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]


def looks_like_path(model: str) -> bool:
    """True when ``model`` can only be a file-system path (not a Hub id)."""
    return (model.startswith(("/", "./", "../", "~", "\\")) or model.count("/") > 1
            or Path(model).expanduser().exists())


def local_fingerprint(directory: Path) -> str:
    """sha256 over the relative names and contents of every file in ``directory``."""
    files = sorted(p for p in directory.rglob("*")
                   if p.is_file() and not any(part.startswith(".") for part in p.relative_to(directory).parts))
    stamp = tuple((str(p.relative_to(directory)), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    key = (str(directory.resolve()), stamp)
    if key in _LOCAL_FINGERPRINTS:
        return _LOCAL_FINGERPRINTS[key]
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(directory)).encode() + b"\0")
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        digest.update(b"\0")
    fingerprint = "sha256:" + digest.hexdigest()
    _LOCAL_FINGERPRINTS[key] = fingerprint
    return fingerprint


def hub_fingerprint(model_id: str, revision: str | None) -> str | None:
    """Commit hash of a Hub model in the local Hugging Face cache (works offline), or None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers depends on huggingface_hub
        return None
    try:
        found = try_to_load_from_cache(model_id, "config.json", revision=revision)
    except ValueError:  # not a valid Hub id: loading will say what is wrong
        return None
    if isinstance(found, str):
        # .../models--org--name/snapshots/<commit>/config.json
        return "hf:" + model_id + "@" + Path(found).parent.name
    return None


def load_parts(model: str, *, device: str, dtype: str, revision: str | None):
    """Load (tokenizer, model, fingerprint) or raise :class:`ModelError` naming the problem."""
    if not isinstance(model, str) or not model.strip():
        raise ModelError("model name is empty; give a Hugging Face id or a local directory")
    model = model.strip()
    tdtype = torch_dtype(dtype)
    device = resolve_device(device)
    path = Path(model).expanduser()
    if not path.is_dir() and looks_like_path(model):
        raise ModelError(f"model directory {model!r} does not exist")
    source = str(path) if path.is_dir() else model

    from transformers import AutoModelForMaskedLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    # transformers' own "Loading weights" bars would interleave with ours; scoring has its own progress.
    bars_were_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, revision=revision)
        lm = AutoModelForMaskedLM.from_pretrained(source, revision=revision, dtype=tdtype)
    except (OSError, ValueError, KeyError) as exc:
        offline = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
        where = ("a local directory" if path.is_dir() else
                 "a Hugging Face model id" + (" available in the local cache (offline mode is on)" if offline else ""))
        raise ModelError(f"cannot load fill-mask model {model!r} as {where}: {str(exc).splitlines()[0]}") from exc
    finally:
        if bars_were_on:
            hf_logging.enable_progress_bar()
    if tokenizer.mask_token is None or tokenizer.mask_token_id is None:
        raise ModelError(f"model {model!r} has no mask token: it is not a fill-mask (masked) language model")
    lm.eval()
    lm.to(device)
    return tokenizer, lm, model_fingerprint(model, revision), device


def model_fingerprint(model: str, revision: str | None) -> str:
    """A stable identity of a model's weights, computed without loading it.

    The sha256 of a local directory's files, else the Hub commit in the local Hugging Face
    cache, else ``hf:<id>@<revision>``.
    """
    path = Path(model.strip()).expanduser()
    if path.is_dir():
        return local_fingerprint(path)
    if looks_like_path(model.strip()):  # a missing directory: loading it will say so
        return f"path:{path}"
    return hub_fingerprint(model.strip(), revision) or f"hf:{model.strip()}@{revision or 'unknown-revision'}"

"""Options every masked-LM scorer (fmat, pll) shares: where and how the model runs, and the result cache."""

from __future__ import annotations

from assoc.options import Option

DTYPES = ("float32", "float16", "bfloat16")


def check_device(value: str) -> str:
    """``check`` for the ``device`` option: cpu, cuda, cuda:N, mps or auto."""
    value = value.strip().lower()
    if not (value in {"cpu", "auto", "mps"} or value == "cuda" or
            (value.startswith("cuda:") and value[5:].isdigit())):
        raise ValueError(f"must be 'cpu', 'cuda', 'cuda:N', 'mps' or 'auto', got {value!r}")
    return value


MODEL_OPTIONS: tuple[Option, ...] = (
    Option("device", str, "cpu", "'cpu', 'cuda', 'cuda:N', 'mps' or 'auto' (CUDA when available)",
           check=check_device),
    Option("dtype", str, "float32", "weights' precision; float16/bfloat16 are faster on GPUs but change "
           "log probabilities in the 3rd-4th digit (see docs/fmat.md)", choices=DTYPES),
    Option("revision", str, None, "Hugging Face revision (branch, tag or commit) of every model"),
    Option("cache", bool, True, "reuse and store results on disk so interrupted runs resume"),
    Option("cache_dir", str, None, "cache directory (default $ASSOC_CACHE_DIR or ~/.cache/assoc)"),
)

"""Options every masked-LM scorer (fmat, pll) shares: where and how the model runs, and the result cache."""

from __future__ import annotations

from assoc.scoring.options import CACHE_OPTIONS, Option, positive

DTYPES = ("float32", "float16", "bfloat16")

# Default token budget of one forward batch (rows x longest row). On a CPU, batches of about
# 1k tokens stay in cache and ran 1.2-1.5x faster than 4k-token batches (bert-base, 2 cores);
# GPUs want large batches. Memory is bounded by the budget either way.
CPU_BUDGET = 1024
GPU_BUDGET = 4096


def default_max_tokens(device: str) -> int:
    """The default batch budget for ``device``: :data:`CPU_BUDGET` on a CPU, :data:`GPU_BUDGET` otherwise."""
    return CPU_BUDGET if str(device).startswith("cpu") else GPU_BUDGET


def check_device(value: str) -> str:
    """``check`` for the ``device`` option: cpu, cuda, cuda:N, mps or auto."""
    value = value.strip().lower()
    if not (value in {"cpu", "auto", "mps"} or value == "cuda" or (value.startswith("cuda:") and value[5:].isdigit())):
        raise ValueError(f"must be 'cpu', 'cuda', 'cuda:N', 'mps' or 'auto', got {value!r}")
    return value


#: The batch-budget option of every masked-LM scorer (``None``: :func:`default_max_tokens` of the device).
MAX_TOKENS_OPTION = Option(
    "max_tokens",
    int,
    None,
    f"token budget of one forward batch (rows x longest row); default {CPU_BUDGET} on a "
    f"CPU (faster there: batches stay in cache), {GPU_BUDGET} on a GPU; lower it to use less memory",
    check=positive,
)

MODEL_OPTIONS: tuple[Option, ...] = (
    Option("device", str, "cpu", "'cpu', 'cuda', 'cuda:N', 'mps' or 'auto' (CUDA when available)", check=check_device),
    Option(
        "dtype",
        str,
        "float32",
        "weights' precision; float16/bfloat16 are faster on GPUs but change "
        "log probabilities in the 3rd-4th digit (see docs/fmat.md)",
        choices=DTYPES,
    ),
    Option("revision", str, None, "Hugging Face revision (branch, tag or commit) of every model"),
    Option(
        "unit_size",
        int,
        512,
        "filled queries per work unit: the grain of progress, resuming and scheduling "
        "on an executor (raise it on GPUs, where 512 queries take milliseconds; see docs/scale.md)",
        check=positive,
    ),
    *CACHE_OPTIONS,
)

"""Options every masked-LM scorer (fmat, pll) shares: where and how the model runs, and the result cache."""

from __future__ import annotations

from assoc.components.options import CACHE_OPTIONS, Option, positive
from assoc.errors import OptionError
from assoc.lm.models import DTYPES

#: what runs the forward passes: PyTorch, or ONNX Runtime in float32 or (opt-in) int8 (assoc.lm.masked.onnx)
BACKENDS = ("torch", "onnx", "onnx-int8")
#: the pip command that installs what the ONNX backends need
ONNX_INSTALL = "pip install 'assoc[onnx]'"

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


def check_backend(value: str) -> str:
    """``check`` for the ``backend`` option: one of :data:`BACKENDS`; the ONNX ones need onnxruntime and onnx."""
    if value not in BACKENDS:
        raise ValueError(f"must be one of {', '.join(BACKENDS)}, got {value!r}")
    if value != "torch":
        from assoc.lm.onnx import check_installed

        check_installed(value, ONNX_INSTALL)
    return value


def check_backend_settings(backend: str, *, device: str, dtype: str) -> None:
    """Refuse, with an :class:`~assoc.errors.OptionError`, a device or dtype ``backend`` does not run.

    The ONNX backends run float32 weights on the CPU (``device="cpu"``; ``"auto"`` is refused
    because it may pick a GPU).
    """
    if backend == "torch":
        return
    try:
        check_backend(backend)
    except ValueError as exc:
        raise OptionError(f"backend: {exc}") from None
    if str(device).strip().lower().split(":")[0] != "cpu":
        raise OptionError(
            f"backend {backend!r} runs on the CPU: set device='cpu' (got {device!r}) or use backend='torch'"
        )
    if dtype != "float32":
        raise OptionError(f"backend {backend!r} runs float32 weights: set dtype='float32' (got {dtype!r})")


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
        "backend",
        str,
        "torch",
        "what runs the forward passes: 'torch'; 'onnx' (ONNX Runtime, float32, CPU; checked against "
        "PyTorch within 1e-5) or 'onnx-int8' (opt-in, faster, changes log probabilities in the 2nd "
        "decimal); see docs/onnx.md",
        check=check_backend,
    ),
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

"""The options of every scorer that runs a language model: where and how the model runs, and its endpoint.

* :data:`MODEL_OPTIONS`: a model with local weights (the masked and causal kinds): ``device``
  (default ``auto``: CUDA when available, else the CPU; the resolved device is recorded in provenance
  and in every cache key), ``dtype``, ``revision``, ``backend`` (what runs the forward passes:
  PyTorch or ONNX Runtime), ``unit_size`` (items per work unit), ``batch_tokens`` (the forward
  batch's token budget; its former name ``max_tokens`` stays accepted with a deprecation warning on
  scorers without a chat side, where ``max_tokens`` means the cap on a reply's tokens, OpenAI's
  meaning), and the result cache (``cache``, ``cache_dir``).
* ``ENDPOINT_OPTIONS`` (:mod:`assoc.lm.remote.options`, beside the request engine that reads them): a
  model behind an HTTP endpoint (the remote kinds: chat models, inference servers): the address, the
  key's variable, concurrency, timeouts, retries and backoff, rate limits, and ``offline``.
* :func:`options_for`: the options a scorer that accepts some model kinds declares: the model options
  plus each kind's own (a causal LM's ``bos``, a masked LM's ``pll_metric``, ...), once each.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from assoc.components.options import CACHE_OPTIONS, Option, positive
from assoc.errors import OptionError
from assoc.lm.batching import CPU_BUDGET, GPU_BUDGET
from assoc.lm.identity import DTYPES

if TYPE_CHECKING:
    from assoc.lm.kinds import LanguageModel

#: what runs the forward passes: PyTorch, or ONNX Runtime in float32 or (opt-in) int8 (assoc.lm.masked.onnx)
BACKENDS = ("torch", "onnx", "onnx-int8")
#: the pip command that installs what the ONNX backends need
ONNX_INSTALL = "pip install 'assoc[onnx]'"


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

    The ONNX backends run float32 weights on the CPU: ``device="cpu"``, or ``"auto"``, which means the
    CPU for them (:func:`backend_device`).
    """
    if backend == "torch":
        return
    try:
        check_backend(backend)
    except ValueError as exc:
        raise OptionError(f"backend: {exc}") from None
    if backend_device(device, backend).split(":")[0] != "cpu":
        raise OptionError(
            f"backend {backend!r} runs on the CPU: set device='cpu' (got {device!r}) or use backend='torch'"
        )
    if dtype != "float32":
        raise OptionError(f"backend {backend!r} runs float32 weights: set dtype='float32' (got {dtype!r})")


def backend_device(device: str, backend: str) -> str:
    """The device ``device`` means for ``backend``: ``"auto"`` is the CPU for the ONNX backends (they run there).

    PyTorch's ``"auto"`` is left as it is (resolved when a model loads: CUDA when available, else the CPU),
    so a process that runs a kept ONNX export never imports torch to decide (:mod:`assoc.lm.masked.torch_free`).
    """
    text = str(device).strip().lower()
    return "cpu" if backend != "torch" and text == "auto" else text


#: The forward batch's budget (``None``: :func:`assoc.lm.batching.default_batch_tokens` of the device).
BATCH_TOKENS_OPTION = Option(
    "batch_tokens",
    int,
    None,
    f"token budget of one forward batch (rows x longest row); default {CPU_BUDGET} on a "
    f"CPU (faster there: batches stay in cache), {GPU_BUDGET} on a GPU; lower it to use less memory "
    "(formerly max_tokens)",
    check=positive,
    renamed_from=("max_tokens",),
)

MODEL_OPTIONS: tuple[Option, ...] = (
    Option(
        "device",
        str,
        "auto",
        "'auto' (CUDA when available, else the CPU), 'cpu', 'cuda', 'cuda:N' or 'mps'; the device used is "
        "recorded in the provenance and in every cache key",
        check=check_device,
    ),
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
        "decimal); masked LMs only, see docs/onnx.md",
        check=check_backend,
    ),
    Option(
        "unit_size",
        int,
        512,
        "items (filled queries, sentence pairs, ...) per work unit: the grain of progress, resuming and "
        "scheduling on an executor (raise it on GPUs, where 512 queries take milliseconds; see docs/scale.md)",
        check=positive,
    ),
    BATCH_TOKENS_OPTION,
    *CACHE_OPTIONS,
)


@dataclasses.dataclass(frozen=True)
class ModelSettings:
    """The model options a local kind reads, with :data:`MODEL_OPTIONS`' defaults for those not given."""

    device: str = "auto"
    dtype: str = "float32"
    revision: str | None = None
    backend: str = "torch"
    batch_tokens: int | None = None

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> ModelSettings:
        """The settings in ``options`` (a scorer's ``params``, or any mapping; unknown keys are ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in options.items() if k in names and (v is not None or k == "revision")})

    @property
    def device_for_backend(self) -> str:
        """The device as the backend reads it (:func:`backend_device`: ``auto`` is the CPU for ONNX)."""
        return backend_device(self.device, self.backend)


def options_for(
    kinds: Iterable[str | type[LanguageModel]], *, base: Iterable[Option] = MODEL_OPTIONS
) -> tuple[Option, ...]:
    """The options of a scorer that accepts the model ``kinds``: ``base`` and each kind's own, once each.

    A kind is a :class:`~assoc.lm.kinds.LanguageModel` subclass, or the name of one of the core's kinds
    (:data:`assoc.lm.kinds.CORE_KINDS`: ``"masked"``, ``"causal"``), so that a scorer class can list its
    options when its module is imported, before any plugin is loaded. An option two kinds declare is
    listed once (the first's). When a kind declares ``max_tokens`` (a chat reply's cap), ``batch_tokens``
    no longer accepts ``max_tokens`` as its former name.
    """
    from assoc.lm.kinds import core_kind

    chosen: dict[str, Option] = {option.name: option for option in base}
    for kind in kinds:
        cls = core_kind(kind) if isinstance(kind, str) else kind
        for option in cls.options:
            chosen.setdefault(option.name, option)
    if "max_tokens" in chosen and "batch_tokens" in chosen:
        chosen["batch_tokens"] = dataclasses.replace(chosen["batch_tokens"], renamed_from=())
    return tuple(chosen.values())

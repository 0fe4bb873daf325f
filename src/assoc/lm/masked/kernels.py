"""The linear layers' matrix products on a CPU, through oneDNN.

PyTorch's CPU build computes float32 ``torch.nn.functional.linear`` with MKL's sgemm.
MKL chooses its code path from the CPU vendor, not its features: on AMD CPUs it runs
its AVX2 kernels even where the CPU has AVX-512. oneDNN, which PyTorch also ships (the
``mkldnn`` operators), chooses from the instruction sets the CPU reports. Measured on a
2-core AMD EPYC (Zen 5, AVX-512) VM with torch 2.13.0, for the bert-base shapes the engine
runs (300-3,000 rows x 768 -> 768, 768 -> 3,072, 3,072 -> 768): MKL 200-240 GFLOP/s, oneDNN
450-550 GFLOP/s; the engine's whole 240-query synthetic workload went from 2.3 s to 1.3 s.
Both compute in float32 with float32 accumulation: results differ by summation order only
(up to 3e-6 in a log probability on that workload).

:func:`onednn_linear` is a context manager that sends every float32 CPU
``torch.nn.functional.linear`` call made inside it (by any module of any model) to
oneDNN's ``mkldnn::_linear_pointwise`` operator, with the weights as they are (no
packed copy, so no extra memory and nothing to invalidate when temporary tokens resize
the LM head). It is a :class:`torch.overrides.TorchFunctionMode`, which is thread-local:
other threads using the same model are not affected. The engine uses it only after
checking on the model's first batch that it reproduces the model's own forward pass
(:meth:`assoc.lm.masked.engine.MaskedLM.log_probs`).

``ASSOC_CPU_MATMUL=torch`` in the environment turns it off (PyTorch's own kernels);
``onednn`` or unset: oneDNN where it is available and passes the check.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from assoc.errors import OptionError

#: Environment variable choosing the CPU kernels of float32 linear layers.
CPU_MATMUL_VARIABLE = "ASSOC_CPU_MATMUL"
CPU_MATMUL_CHOICES = ("onednn", "torch")


def cpu_matmul_setting() -> str:
    """``"onednn"`` (the default) or ``"torch"``, from ``ASSOC_CPU_MATMUL``."""
    value = os.environ.get(CPU_MATMUL_VARIABLE, "").strip().lower() or "onednn"
    if value not in CPU_MATMUL_CHOICES:
        raise OptionError(
            f"{CPU_MATMUL_VARIABLE}={os.environ[CPU_MATMUL_VARIABLE]!r} is not one of {', '.join(CPU_MATMUL_CHOICES)}"
        )
    return value


def onednn_wanted(device: str, dtype: str) -> bool:
    """Whether the engine should try oneDNN for this device and dtype.

    Only float32 on a CPU (for float16/bfloat16 PyTorch already uses oneDNN on CPUs that
    support them), only when this PyTorch build has the operator, and not when
    ``ASSOC_CPU_MATMUL=torch``.
    """
    if str(device).split(":")[0] != "cpu" or dtype != "float32" or cpu_matmul_setting() != "onednn":
        return False
    import torch

    return bool(torch.backends.mkldnn.is_available()) and hasattr(torch.ops.mkldnn, "_linear_pointwise")


_MODE_CLASS: Any = None


def onednn_linear(enabled: bool = True) -> AbstractContextManager[Any]:
    """A context in which float32 CPU linear layers run on oneDNN (a no-op context when not ``enabled``)."""
    if not enabled:
        return nullcontext()
    return _mode_class()()


def _mode_class() -> Any:
    global _MODE_CLASS
    if _MODE_CLASS is None:
        import torch

        linear = torch.nn.functional.linear
        pointwise = torch.ops.mkldnn._linear_pointwise.default
        float32 = torch.float32

        class OneDNNLinear(torch.overrides.TorchFunctionMode):
            """Route float32 CPU ``F.linear`` to ``mkldnn::_linear_pointwise``; everything else runs as usual."""

            def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                kwargs = kwargs or {}
                if func is linear:
                    x, weight = args[0], args[1] if len(args) > 1 else kwargs["weight"]
                    bias = args[2] if len(args) > 2 else kwargs.get("bias")
                    if (
                        x.dtype == float32
                        and weight.dtype == float32
                        and x.device.type == "cpu"
                        and weight.device.type == "cpu"
                        and weight.dim() == 2
                        and weight.is_contiguous()
                        and x.dim() >= 1
                        and (bias is None or (bias.dtype == float32 and bias.device.type == "cpu"))
                    ):
                        shape = x.shape
                        out = pointwise(x.reshape(-1, shape[-1]).contiguous(), weight, bias, "none", [None], "")
                        return out.view(*shape[:-1], weight.shape[0])
                return func(*args, **kwargs)

        _MODE_CLASS = OneDNNLinear
    return _MODE_CLASS

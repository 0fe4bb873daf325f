"""The ``backend`` option: run a sentence-transformers model's transformer on ONNX Runtime.

``backend="torch"`` (the default) runs the model as sentence-transformers loads it.
``backend="onnx-int8"`` (opt-in) exports the transformer (the Hugging Face model inside the first
module) once with ``torch.onnx.export`` to an ONNX file in the assoc cache, checks that export in
float32 against the PyTorch model on a fixed set of probe texts of different lengths (so padding
is exercised; an export whose embeddings differ from PyTorch's by more than :data:`TOLERANCE`
anywhere is refused with a :class:`~assoc.errors.ModelError`, never used), and then runs a copy
with dynamic int8 quantisation of the linear layers' weights
(``onnxruntime.quantization.quantize_dynamic``, unsigned 8-bit weights per tensor: the setting for
CPUs with AVX2 but without VNNI) on ONNX Runtime's CPU provider. Tokenisation, length-sorted
batching, pooling and normalisation stay sentence-transformers' own. int8 is faster and not equal
to PyTorch: cosines move and part of each term's top-50 words change (measured for
all-MiniLM-L6-v2 in ``docs/onnx.md``).

The float32 export alone (``use_backend(model, "onnx", ...)``) equals PyTorch but was not faster
on the CPU measured, so it is not a value of the option; it serves the int8 check above and
``benchmarks/bench_onnx.py``.

Why sentence-transformers' own ``backend="onnx"`` is not used: it needs ``optimum-onnx``, whose
releases require ``transformers<4.58``, while sentence-transformers 6 requires transformers 5.

ONNX Runtime uses as many intra-op threads as PyTorch has at the time the model is loaded
(``torch.get_num_threads()``), one inter-op thread, and sequential execution.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assoc import ModelError, OptionError

#: values of the ``backend`` option. Float32 ONNX Runtime equals PyTorch but was not faster on the CPUs
#: measured (docs/onnx.md), so it is not an option: ``use_backend(..., "onnx")`` stays for the check
#: every int8 load makes and for ``benchmarks/bench_onnx.py``.
BACKENDS = ("torch", "onnx-int8")
#: what :func:`use_backend` runs: the options' ONNX backend and the float32 export it is checked through
EXPORTS = ("onnx", "onnx-int8")
#: the pip command that installs what the ONNX backends need
INSTALL = "pip install 'assoc-sbert-topwords[onnx]'"
#: largest |difference| of any embedding component from PyTorch's that the float32 export may have
TOLERANCE = 1e-5
#: texts of different lengths whose embeddings must match PyTorch's (one batch, so padding is exercised)
PROBE_TEXTS = (
    "a",
    "doctor",
    "This is a nurse.",
    "The quick brown fox jumps over the lazy dog near the riverbank at dawn.",
    "Stereotypes are beliefs about the characteristics, attributes and behaviours of members of groups.",
    "naïve café",
)


def check_backend(value: str) -> str:
    """``check`` of the ``backend`` option: the ONNX backends need onnxruntime and onnx installed."""
    if value != "torch":
        from assoc.lm import check_onnx_installed

        check_onnx_installed(value, INSTALL)
    return value


def use_backend(model: Any, backend: str, *, name: str, fingerprint: str, device: str, dtype: str, memo: Any) -> None:
    """Make the SentenceTransformer ``model`` run its transformer on ``backend`` (in place).

    ``memo``: the :class:`assoc.infra.cache.Cache` whose root holds the exported files (None:
    the default root). Raises :class:`~assoc.errors.OptionError` for a device or dtype the
    ONNX backends do not run, and :class:`~assoc.errors.ModelError` for a model they cannot
    export or an fp32 export that does not reproduce PyTorch's embeddings.
    """
    if backend == "torch":
        return
    if backend not in EXPORTS:
        raise OptionError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    check_backend(backend)
    if str(device).split(":")[0] != "cpu":
        raise OptionError(f"backend {backend!r} runs on the CPU; got device {device!r} (use backend='torch')")
    if dtype != "float32":
        raise OptionError(f"backend {backend!r} runs float32 weights; got dtype {dtype!r}")
    module = _transformer_module(model, name)
    hf = module.model if hasattr(module, "model") else module.auto_model
    # sentence-transformers >= 6 calls it preprocess (tokenize warns there)
    tokenize = getattr(model, "preprocess", None) or model.tokenize
    example = tokenize(["two texts", "of different lengths, so one is padded"])
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in example]
    # The float32 export is checked against PyTorch first, also for int8: an export that computes
    # something else would otherwise pass as quantisation error.
    path = _exported(hf, names, example, fingerprint=fingerprint, int8=False, memo=memo)
    reference = model.encode(list(PROBE_TEXTS), batch_size=len(PROBE_TEXTS), convert_to_numpy=True)
    attribute = "model" if hasattr(module, "model") else "auto_model"
    original = getattr(module, attribute)
    setattr(module, attribute, _runner(_session(path), hf.config, names))
    import numpy as np

    got = model.encode(list(PROBE_TEXTS), batch_size=len(PROBE_TEXTS), convert_to_numpy=True)
    delta = float(np.max(np.abs(got - reference)))
    if not delta <= TOLERANCE:  # also catches NaN
        setattr(module, attribute, original)
        import shutil

        shutil.rmtree(path.parent, ignore_errors=True)  # never leave a failing export for the next run to find
        raise ModelError(
            f"the ONNX export of {name!r} does not reproduce its PyTorch embeddings (max |difference| "
            f"{delta:.2e} > {TOLERANCE:g} on probe texts); use backend='torch'"
        )
    if backend == "onnx-int8":
        int8 = _exported(hf, names, example, fingerprint=fingerprint, int8=True, memo=memo)
        setattr(module, attribute, _runner(_session(int8), hf.config, names))


def _transformer_module(model: Any, name: str) -> Any:
    first = model[0] if len(model) else None
    if type(first).__name__ != "Transformer" or not (hasattr(first, "model") or hasattr(first, "auto_model")):
        raise ModelError(
            f"backend 'onnx' runs models whose first module is a sentence-transformers Transformer; "
            f"{name!r} starts with {type(first).__name__}"
        )
    return first


def _exported(hf: Any, names: list[str], example: Any, *, fingerprint: str, int8: bool, memo: Any) -> Path:
    """The ONNX file of ``hf`` in the cache, exported (and quantised) on first use.

    :func:`assoc.lm.onnx.cached_export` under the key (weights' fingerprint, input names).
    """
    import torch

    from assoc.lm import cached_export, export_module

    class Transformer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.hf = hf

        def forward(self, *inputs: Any) -> Any:
            return self.hf(**dict(zip(names, inputs, strict=True))).last_hidden_state

    def export(path: Path) -> None:
        # ``example``: two rows of different lengths, so the traced graph keeps the attention mask (a batch
        # without padding could let the model's mask code drop it)
        export_module(
            Transformer().eval(),
            [example[n].cpu() for n in names],
            path,
            input_names=names,
            output_name="last_hidden_state",
            dynamic_axes={n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]},
            advice="use backend='torch'",
        )

    root = Path(memo.root) if memo is not None and getattr(memo, "root", None) else None
    return cached_export({"fingerprint": fingerprint, "inputs": names}, export, int8=int8, root=root)


def _session(path: Path) -> Any:
    import torch

    from assoc.lm import inference_session

    return inference_session(path, torch.get_num_threads())


def _runner(sess: Any, config: Any, names: list[str]) -> Any:
    """A module standing in for the Hugging Face model inside sentence-transformers' Transformer."""
    import torch

    class OnnxTransformer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.config = config

        def forward(self, **features: Any) -> dict[str, Any]:
            feeds = {n: features[n].cpu().numpy() for n in names}
            return {"last_hidden_state": torch.from_numpy(sess.run(None, feeds)[0])}

    return OnnxTransformer()

"""ONNX Runtime machinery shared by every ``backend="onnx…"`` option (masked-LM engine, sbert scorers).

One implementation of what every ONNX backend needs: knowing whether the packages are installed
([`check_installed`][assoc.lm.check_onnx_installed]), exporting a PyTorch module once into the assoc cache, atomically
and keyed by everything the file depends on ([`cached_export`][assoc.lm.cached_export]), the dynamic int8 quantisation
([`quantize_int8`][assoc.lm.onnx.quantize_int8]) and an inference session with the thread settings assoc uses
([`inference_session`][assoc.lm.inference_session]). What a backend exports and how it checks the export against the
model's own PyTorch forward pass belong to the backend ([`assoc.lm.masked.onnx`][assoc.lm.masked.onnx],
``assoc_sbert_topwords.onnx``); docs/onnx.md has the measurements that decided which backends exist.

Nothing here imports torch, onnx or onnxruntime at module level.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from assoc.errors import ModelError
from assoc.infra.integrity import mismatch, seal

#: ONNX opset of every export (supported by onnxruntime >= 1.18 and torch's TorchScript exporter)
OPSET = 17
#: the packages the ONNX backends need: onnxruntime runs the file, onnx is what torch.onnx.export writes
#: with and what the int8 quantiser reads
PACKAGES = ("onnxruntime", "onnx")


def missing_packages() -> list[str]:
    """The packages of `PACKAGES` that are not installed (found without importing them)."""
    from importlib.util import find_spec

    return [name for name in PACKAGES if find_spec(name) is None]


def check_installed(backend: str, install: str) -> None:
    """Raise ``ValueError`` naming the missing packages and the pip command ``install`` when ``backend`` needs them.

    Used as (part of) an option's ``check``, so the error becomes the option's one-line
    [`OptionError`][assoc.OptionError] before any work starts.
    """
    missing = missing_packages()
    if missing:
        raise ValueError(f"backend {backend!r} needs {' and '.join(missing)}: {install}")


def versions() -> dict[str, str]:
    """The versions an export depends on: torch and transformers (what is traced), onnx and onnxruntime.

    Read from the installed distributions' metadata, so that finding a cached export imports
    none of them (torch and transformers take seconds, onnx and onnxruntime about half a second
    each, paid again by every process): a process that runs a cached export without torch
    (`assoc.lm.masked.torch_free`) finds it under the same key. torch's metadata version keeps its
    local part (``2.13.0+cpu``), which is part of what was traced.
    """
    return {
        "torch": _version("torch"),
        "transformers": _version("transformers"),
        "onnx": _version("onnx"),
        "onnxruntime": _version("onnxruntime"),
    }


@functools.cache
def _version(module: str) -> str:
    """``module``'s version from its distribution's metadata, else from the module itself.

    The fallback covers distributions named otherwise (``onnxruntime-gpu``, ``onnxruntime-openvino``
    install the module ``onnxruntime``). Read once per process: parsing a distribution's metadata
    costs about 20 ms, and a package upgraded while the process runs is not what it has imported.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(module)
    except PackageNotFoundError:
        import importlib

        return str(importlib.import_module(module).__version__)


def cached_export(
    key: Mapping[str, Any],
    export: Callable[[Path], None],
    *,
    int8: bool,
    root: Path | None,
    persist: bool = True,
) -> Path:
    """The ONNX file described by ``key``, written by ``export`` (and quantised) on first use.

    Parameters
    ----------
    key:
        Everything the file depends on, JSON-serialisable: the weights' fingerprint, what is
        exported and its inputs; `OPSET`, ``int8`` and [`versions`][assoc.lm.onnx.versions] are added here.
    export:
        Writes the float32 ONNX file to the path it is given (raise
        [`ModelError`][assoc.ModelError] when the model cannot be exported).
    int8:
        Quantise the float32 export with [`quantize_int8`][assoc.lm.onnx.quantize_int8] and return that file instead.
    root:
        The cache root (``<root>/models/onnx/<digest>/model.onnx``); None for the default root.
    persist:
        False for weights without a content-based fingerprint (or a run that writes nothing to
        its cache): the file is written to a new temporary directory each time, never reused
        under a name that does not identify the weights; the caller removes that directory
        (``path.parent``) once it is done with the file (e.g. once its session is open).

    Returns
    -------
    pathlib.Path
        The ONNX file. A finished file is never rewritten; a new one appears by an atomic rename
        of its directory, so a killed export leaves nothing that a later run could read, and two
        processes exporting the same key at once both end with one complete file. Its SHA-256 is
        recorded beside it when it is written and checked before every reuse
        ([`usable_export`][assoc.lm.onnx.usable_export]): a file that no longer matches (edited in
        place, truncated, unreadable) is reported in one warning line, removed and exported anew.
    """
    full_key = _full_key(key, int8)
    if not persist:
        work = Path(tempfile.mkdtemp(prefix="assoc-onnx-"))
        try:
            _write(work, export, int8)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return work / "model.onnx"
    path = export_location(key, int8=int8, root=root)
    destination = path.parent
    if path.exists() or destination.exists():
        if usable_export(path):
            return path
        discard_export(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{destination.name}.", dir=destination.parent))
    try:
        _write(work, export, int8)
        seal(work / "model.onnx")  # its content fingerprint, checked before every reuse (usable_export)
        (work / "key.json").write_text(json.dumps(full_key, indent=2, sort_keys=True, default=str), encoding="utf-8")
        try:
            os.replace(work, destination)
        except OSError:
            if not path.is_file():  # not another process that finished the same export first
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return path


def usable_export(path: Path, *, warn: bool = True) -> bool:
    """Whether the cached export ``path`` may be reused: it holds the content recorded when it was written.

    Never decided on size and modification time (both survive an edit in place): the file's SHA-256
    must equal the one [`cached_export`][assoc.lm.cached_export] recorded beside it
    (`assoc.infra.integrity.seal`), hashed once per process and file. A file edited, truncated,
    unreadable or without a record is not usable: with ``warn`` one warning line names it and says
    it is made again (the caller's duty: [`discard_export`][assoc.lm.onnx.discard_export] and export anew).
    """
    if not path.is_file():
        if path.parent.exists() and warn:
            from assoc.infra.cache import CacheWarning

            warnings.warn(f"cached ONNX export {path} is missing; it is made again", CacheWarning, stacklevel=3)
        return False
    problem = mismatch(path)
    if problem and warn:
        from assoc.infra.cache import CacheWarning

        warnings.warn(f"cached ONNX export {path} {problem}; it is made again", CacheWarning, stacklevel=3)
    return not problem


def discard_export(directory: Path) -> None:
    """Remove the export folder ``directory`` (a failed or damaged export); one line when it cannot be removed."""
    try:
        shutil.rmtree(directory)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ModelError(
            f"cannot remove the damaged ONNX export {directory} ({exc.strerror or type(exc).__name__}): remove "
            "that folder, or run with cache=False"
        ) from exc


def _full_key(key: Mapping[str, Any], int8: bool) -> dict[str, Any]:
    return {**key, "opset": OPSET, "int8": int8, **versions()}


def export_location(key: Mapping[str, Any], *, int8: bool, root: Path | None) -> Path:
    """Where `cached_export` keeps the file of ``key``: ``<root>/models/onnx/<digest>/model.onnx``.

    The digest is the first 24 hex digits of the SHA-256 of the full key (``key``, `OPSET`,
    ``int8`` and [`versions`][assoc.lm.onnx.versions]) as sorted JSON; ``root`` None is the default cache root.
    """
    if root is None:
        from assoc.infra.cache import default_root

        root = default_root()
    full_key = _full_key(key, int8)
    digest = hashlib.sha256(json.dumps(full_key, sort_keys=True, default=str).encode()).hexdigest()[:24]
    return Path(root) / "models" / "onnx" / digest / "model.onnx"


def _write(work: Path, export: Callable[[Path], None], int8: bool) -> None:
    """Write ``work/model.onnx``: the float32 export, or its int8 quantisation."""
    fp32 = work / "fp32.onnx"
    export(fp32)
    if int8:
        quantize_int8(fp32, work / "model.onnx")
        fp32.unlink()
    else:
        fp32.rename(work / "model.onnx")


def quantize_int8(source: Path, destination: Path) -> None:
    """Dynamic int8 quantisation of ``source``'s linear layers' weights into ``destination``.

    ``onnxruntime.quantization.quantize_dynamic`` with unsigned 8-bit weights, one scale per
    tensor; activations are quantised per batch at run time. Unsigned weights because on AVX2
    CPUs without VNNI, ONNX Runtime's uint8 x int8 kernels can saturate with signed weights.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Its advice to pre-process the model is for static quantisation: drop that one message, nothing else.
    def not_advice(record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()

    root_logger = logging.getLogger()
    root_logger.addFilter(not_advice)
    try:
        quantize_dynamic(str(source), str(destination), weight_type=QuantType.QUInt8, per_channel=False)
    finally:
        root_logger.removeFilter(not_advice)


def export_module(
    module: Any,
    example: Sequence[Any],
    path: Path,
    *,
    input_names: Sequence[str],
    output_name: str,
    dynamic_axes: Mapping[str, Mapping[int, str]],
    advice: str,
) -> None:
    """``torch.onnx.export`` of ``module`` (traced on ``example``) to ``path``; a ModelError when it cannot.

    The TorchScript exporter (``dynamo=False``) at `OPSET`, with the named dynamic axes.
    Tracer warnings are silenced: whether the export computes what the model computes is decided
    by the backend's check against the model's own forward pass, not by the tracer's guesses.
    ``advice`` ends the error message (e.g. "use backend='torch'").
    """
    import torch

    try:
        with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                module,
                tuple(example),
                str(path),
                dynamo=False,
                opset_version=OPSET,
                input_names=list(input_names),
                output_names=[output_name],
                dynamic_axes={name: dict(axes) for name, axes in dynamic_axes.items()},
            )
    except Exception as exc:  # noqa: BLE001 - any exporter failure: this model cannot use the backend
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise ModelError(f"cannot export the model to ONNX ({type(exc).__name__}: {first}); {advice}") from exc


def inference_session(path: Path, threads: int | None) -> Any:
    """An ONNX Runtime CPU session of ``path`` with ``threads`` intra-op threads.

    One inter-op thread and sequential execution (the graphs are one chain of layers), all graph
    optimisations on. Callers pass PyTorch's current thread count, so assoc's ``threads``
    setting applies to both runtimes; None (a process without torch and without a ``threads``
    setting) leaves ONNX Runtime's default, one thread per physical core, as PyTorch's default is.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    if threads is not None:
        options.intra_op_num_threads = max(1, int(threads))
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - onnxruntime's own classes (InvalidProtobuf, Fail, NoSuchFile, ...)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ModelError(
            f"ONNX Runtime cannot open {path} ({type(exc).__name__}: {first[:200]}); use backend='torch'"
        ) from exc

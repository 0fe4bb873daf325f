"""The masked-LM engine's ONNX Runtime backends: ``backend="onnx"`` (float32) and ``"onnx-int8"`` (opt-in).

``backend="torch"`` (the default) runs the forward passes in PyTorch (`assoc.lm.masked.engine`).
``backend="onnx"`` runs them on ONNX Runtime's CPU provider: the whole fill-mask model (encoder
and LM head) is exported once with ``torch.onnx.export``, with the LM head applied at the
requested positions only (as the engine does), into the assoc cache; the engine feeds it the
same batches (`assoc.lm.batching.plan_batches`) and takes the same float64 log-softmax.
On the CPU measured its forward passes were faster than the engine's own PyTorch path, with log
probabilities within 1e-5 of PyTorch's, which is why it is an option at all; opening the session
costs a process about as long as loading the model, so small studies in a fresh process gain
nothing (docs/onnx.md).

Two checks keep a wrong export from producing numbers:

* **Before an export is first used**, the log probabilities of `PROBE_TEXTS` (one padded
  batch of different lengths) over the whole vocabulary are computed by ONNX Runtime and, row
  by row, by the model's own PyTorch forward pass; any difference above `TOLERANCE` stops
  the run with a [`ModelError`][assoc.ModelError] (use ``backend="torch"``). A passed check is
  remembered in the cache's memo (`assoc.infra.cache.Cache.remember`) for that file's content (its
  SHA-256, hashed once per process), the onnxruntime version and the CPU architecture, as the
  engine remembers its fast-path checks; anything else, or a run with ``cache=False``, checks
  again. The export itself is reused only while it holds the content recorded when it was written
  ([`assoc.lm.onnx.cached_export`][assoc.lm.cached_export]): an edited or truncated file is made again.
* **In every process, on the first batch of real queries** (float32), the batch's first and last
  rows are computed again alone by the model's own forward pass, as the engine checks its own
  fast paths.

``backend="onnx-int8"`` (opt-in) quantises the checked float32 export's linear layers to 8 bits
([`assoc.lm.onnx.quantize_int8`][assoc.lm.onnx.quantize_int8]). It is faster still and **not** equal to PyTorch: log
probabilities move in the second decimal and part of each query's top-50 changes (docs/onnx.md).
Use it to explore, not for numbers you publish.

Limits (each refused with a one-line [`OptionError`][assoc.OptionError] before work starts): CPU
only, float32 weights only, models loaded by name or directory (not objects in memory), and not
with temporary tokens (fmat's ``oov="add_tokens"`` changes the vocabulary the export was made
with). ONNX Runtime uses as many intra-op threads as PyTorch has when the session opens (so
``threads=`` applies to both), one inter-op thread and sequential execution.
"""

from __future__ import annotations

import shutil
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assoc.errors import ModelError
from assoc.lm.masked.batch import log_softmax64, padded_batch

#: largest |difference| of a log probability from the model's own PyTorch forward pass that the float32
#: export may have (the engine's own fast paths are held to the same bound)
TOLERANCE = 1e-5
#: texts whose log probabilities at the mask (and at other positions) must match the model's own forward
#: pass; ``{mask}`` becomes the model's mask token. Different lengths, so one batch has padding.
PROBE_TEXTS = (
    "{mask}.",
    "The {mask} is here.",
    "Stereotypes are beliefs about the {mask} of members of groups, and they shape judgements.",
    "naïve café {mask} résumé",
)
# ``lm`` below is an :class:`assoc.lm.masked.engine.MaskedLM`, typed ``Any`` because the engine imports this
# module (the import graph stays one-way: engine -> onnx -> batch).

#: what the export computes (part of its cache key)
EXPORT_KIND = "masked-lm-logits-at-positions"


class OnnxForward:
    """An ONNX Runtime session computing the engine's forward pass: float64 log-softmax at picked positions.

    Built by [`onnx_forward`][assoc.lm.masked.onnx.onnx_forward]; ``backend`` is ``"onnx"`` or ``"onnx-int8"``, ``path``
    the ONNX file, ``threads`` the session's intra-op threads. ``checked_on_queries`` becomes True once a batch of real
    queries has been compared with the model's own forward pass.
    """

    def __init__(self, session: Any, backend: str, path: Path, threads: int):
        self.session = session
        self.backend = backend
        self.path = path
        self.threads = threads
        self.checked_on_queries = backend != "onnx"  # int8 is not equal to PyTorch: nothing to compare

    def log_softmax(self, ids: np.ndarray, attention: np.ndarray, picks: Sequence[tuple[int, int]]) -> np.ndarray:
        """Float64 log-softmax rows at the (batch row, position) ``picks`` of a right-padded batch."""
        length = ids.shape[1]
        flat = np.array([b * length + p for b, p in picks], dtype=np.int64)
        logits = self.session.run(None, {"input_ids": ids, "attention_mask": attention, "positions": flat})[0]
        return log_softmax64(logits)


# Sessions per weights object: {(backend, threads): OnnxForward}. The export and its check belong to the
# weights, so handles sharing a cached model share them; a new thread count opens a new session, which
# replaces the backend's session for the old count (each holds a copy of the weights).
_SESSIONS: weakref.WeakKeyDictionary[Any, dict[tuple[str, int], OnnxForward]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def onnx_forward(lm: Any, model: Any, backend: str) -> OnnxForward:
    """The checked ONNX Runtime session of ``lm``'s weights for ``backend``, opened on first use.

    Exports the model ([`export_path`][assoc.lm.masked.onnx.export_path]), checks the float32 export on `PROBE_TEXTS`
    against the model's own forward pass ([`check_export`][assoc.lm.masked.onnx.check_export]), and for ``"onnx-int8"``
    opens the quantised copy of the checked export. Raises [`ModelError`][assoc.ModelError] when the model cannot be
    exported or its export does not reproduce it.
    """
    import torch

    from assoc.lm.onnx import inference_session

    threads = torch.get_num_threads()
    with _LOCK:
        sessions = _SESSIONS.setdefault(model, {})
        found = sessions.get((backend, threads))
        if found is not None:
            return found
        for key in [k for k in sessions if k[0] == backend]:
            del sessions[key]
        fp32_path, fp32, persist = _checked_export(lm, model, threads)
        if persist:
            remember_for_torch_free(lm, model, fp32_path)
        try:
            runner = fp32
            if backend == "onnx-int8":
                int8_path, _ = export_path(lm, model, int8=True)
                try:
                    runner = OnnxForward(inference_session(int8_path, threads), backend, int8_path, threads)
                finally:
                    if not persist:
                        shutil.rmtree(int8_path.parent, ignore_errors=True)
        finally:
            if not persist:  # the session holds the model in memory; the file was for this process only
                shutil.rmtree(fp32_path.parent, ignore_errors=True)
        sessions[(backend, threads)] = runner
        return runner


def discard(runner: OnnxForward, model: Any) -> None:
    """Forget ``runner``'s session and remove its export from the cache: it failed a check on real queries."""
    with _LOCK:
        sessions = _SESSIONS.get(model, {})
        for key in [k for k, v in sessions.items() if v is runner]:
            del sessions[key]
    shutil.rmtree(runner.path.parent, ignore_errors=True)  # a temporary export is already gone


def _checked_export(lm: Any, model: Any, threads: int) -> tuple[Path, OnnxForward, bool]:
    """(float32 export, its checked session, whether the export is kept in the cache).

    An export found in the cache that fails the check is removed and made again once (a file
    damaged on disk, or written by a library whose output the key does not capture); a fresh
    export that fails it is removed and the :class:`~assoc.errors.ModelError` raised.
    """
    from assoc.infra.cache import Cache
    from assoc.lm.onnx import inference_session

    for attempt in (1, 2):
        cached = export_location_of(lm, model, int8=False)
        reused = cached is not None and cached.is_file()
        path, persist = export_path(lm, model, int8=False)
        try:
            runner = OnnxForward(inference_session(path, threads), "onnx", path, threads)
            memo_key = _check_memo_key(path) if persist else None
            memo = lm.memo if lm.memo is not None else Cache()  # None: the default cache root
            if memo_key is None or memo.recall("onnx-export-check", memo_key) is not True:
                check_export(lm, model, runner)
                if memo_key is not None:
                    memo.remember("onnx-export-check", memo_key, True)
        except Exception:
            if persist:  # never leave an export that failed for the next run to find
                shutil.rmtree(path.parent, ignore_errors=True)
            if reused and attempt == 1:
                continue
            raise
        return path, runner, persist
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def _check_memo_key(path: Path) -> list[Any]:
    """What a passed probe check of the export ``path`` depends on: the file's content, ONNX Runtime and the CPU.

    The SHA-256 of the file's bytes (`assoc.infra.integrity.file_sha256`: hashed once per process,
    so a file edited in place, even to the same size and modification time, never matches), the
    onnxruntime version and the machine architecture (ONNX Runtime picks kernels by CPU).
    """
    import platform

    from assoc.infra.integrity import file_sha256
    from assoc.lm.onnx import versions

    return ["sha256:" + file_sha256(path), versions()["onnxruntime"], platform.machine()]


#: the memo kind of what a process without torch needs to run a checked float32 export (:func:`remember_for_torch_free`)
TORCH_FREE_KIND = "onnx-torch-free"
#: the copy of the tokenizer as transformers built it, kept beside the float32 export
TOKENIZER_FILE = "tokenizer.json"
#: the layout of a :data:`TORCH_FREE_KIND` record
TORCH_FREE_VERSION = 1


def remember_for_torch_free(lm: Any, model: Any, path: Path) -> None:
    """Keep what a later process needs to run the checked float32 export ``path`` without torch or transformers.

    Called once the export has passed (or is remembered to have passed) its probe check, for
    exports kept in the cache. Writes the tokenizer as transformers built it beside the export
    (`TOKENIZER_FILE`, see `assoc.lm.masked.fast_tokenizer`) and remembers, under the
    weights' fingerprint (memo kind `TORCH_FREE_KIND`), the export's key, the engine's
    ``max_length``, ``pad_token_id`` and vocabulary size, the tokenizer's special settings and
    the model's `info`. Nothing is kept for a slow tokenizer or
    one whose copy does not tokenise `TOKENIZER_PROBES` exactly as
    transformers does: such a model always runs the ordinary path (`assoc.lm.masked.torch_free`).
    """
    from assoc.infra.cache import Cache
    from assoc.infra.integrity import mismatch, seal
    from assoc.infra.io import atomic_write
    from assoc.lm.masked.fast_tokenizer import FastTokenizer, same_as_transformers, serialise

    serialised = serialise(lm.tokenizer)
    if serialised is None:
        return
    text, special = serialised
    if not same_as_transformers(lm.tokenizer, FastTokenizer.from_str(text, **special)):
        return
    info = {k: v for k, v in lm.info().items() if k not in ("model", "device", "dtype", "backend", "fingerprint")}
    record = {
        "version": TORCH_FREE_VERSION,
        "export_key": _export_key(lm, model),
        "max_length": int(lm.max_length),
        "pad_token_id": int(lm.pad_token_id),
        "vocab_size": int(lm.vocab_size),
        "tokenizer": special,
        "info": info,
    }
    target = path.parent / TOKENIZER_FILE
    if not (target.is_file() and target.read_text(encoding="utf-8") == text):
        with atomic_write(target, "w", encoding="utf-8") as handle:
            handle.write(text)
        seal(target)
    elif mismatch(target):  # the same text, kept by an assoc that recorded no fingerprint: record it now
        seal(target)
    memo = lm.memo if lm.memo is not None else Cache()  # None: the default cache root
    if memo.recall(TORCH_FREE_KIND, [lm.fingerprint]) != record:
        memo.remember(TORCH_FREE_KIND, [lm.fingerprint], record)


def _export_key(lm: Any, model: Any) -> dict[str, Any]:
    return {
        "fingerprint": lm.fingerprint,
        "export": EXPORT_KIND,
        "model_class": type(model).__name__,
        "vocab_size": lm.vocab_size,
    }


def _persist(lm: Any) -> bool:
    memo = lm.memo
    return bool(lm.has_content_fingerprint() and (memo is None or memo.enabled))


def export_location_of(lm: Any, model: Any, *, int8: bool) -> Path | None:
    """Where the export of ``model`` is kept in the cache (None when it is not kept: `export_path`)."""
    from assoc.lm.onnx import export_location

    if not _persist(lm):
        return None
    return export_location(_export_key(lm, model), int8=int8, root=Path(lm.memo.root) if lm.memo is not None else None)


def export_path(lm: Any, model: Any, *, int8: bool) -> tuple[Path, bool]:
    """(the ONNX file of ``model``, whether it is kept in the cache) exported on first use.

    Kept under ``<cache root>/models/onnx/`` ([`assoc.lm.onnx.cached_export`][assoc.lm.cached_export]), keyed by the
    weights' fingerprint, the model class, the vocabulary size and the library versions, when the
    weights have a content-based fingerprint (a sha256 of local files or a Hub commit) and the
    run's cache is enabled; otherwise exported to a temporary directory that the caller removes.
    """
    from assoc.lm.onnx import cached_export

    persist = _persist(lm)
    root = Path(lm.memo.root) if lm.memo is not None else None
    path = cached_export(
        _export_key(lm, model), lambda target: export_model(lm, model, target), int8=int8, root=root, persist=persist
    )
    return path, persist


def export_model(lm: Any, model: Any, path: Path) -> None:
    """Write the float32 ONNX export of ``model`` to ``path``: logits at flat positions of a padded batch.

    Inputs ``input_ids`` and ``attention_mask`` (batch x sequence, int64, right-padded) and
    ``positions`` (n, int64: ``row * sequence + position``); output ``logits`` (n x vocabulary).
    The LM head runs at those positions only, through the same forward hook on the encoder the
    engine uses. A copy of the model is traced with the eager attention implementation (the
    scaled-dot-product kernels do not trace reliably), so the loaded model, which other handles
    may be using, is never changed.
    """
    import copy

    import torch

    from assoc.lm.onnx import export_module

    if model.base_model is model:
        raise ModelError(
            f"backend 'onnx' needs a model with an encoder separate from its LM head; {lm.name!r} "
            f"({type(model).__name__}) has none: use backend='torch'"
        )
    twin = copy.deepcopy(model).eval()
    set_attention = getattr(twin, "set_attn_implementation", None)
    if callable(set_attention):
        set_attention("eager")

    class LogitsAtPositions(torch.nn.Module):
        def __init__(self, wrapped: Any) -> None:
            super().__init__()
            self.model = wrapped

        def forward(self, input_ids: Any, attention_mask: Any, positions: Any) -> Any:
            def keep_positions(_module: Any, _args: Any, output: Any) -> Any:
                hidden = output[0]
                picked = hidden.reshape(-1, hidden.shape[-1]).index_select(0, positions).unsqueeze(0)
                if isinstance(output, tuple):
                    return (picked,) + tuple(output[1:])
                output["last_hidden_state"] = picked
                return output

            handle = self.model.base_model.register_forward_hook(keep_positions)
            try:
                return self.model(input_ids=input_ids, attention_mask=attention_mask).logits[0]
            finally:
                handle.remove()

    # Two rows of different lengths, so the traced graph keeps the attention mask's padding branch.
    seqs = [lm.encode(f"a {lm.mask_token} b c"), lm.encode(f"{lm.mask_token}")]
    ids, attention = padded_batch(seqs, lm.pad_token_id)
    positions = np.array([seqs[0].index(lm.mask_token_id), ids.shape[1] + seqs[1].index(lm.mask_token_id)])
    try:
        export_module(
            LogitsAtPositions(twin).eval(),
            [torch.from_numpy(ids), torch.from_numpy(attention), torch.from_numpy(positions)],
            path,
            input_names=["input_ids", "attention_mask", "positions"],
            output_name="logits",
            dynamic_axes={
                "input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "sequence"},
                "positions": {0: "positions"},
                "logits": {0: "positions"},
            },
            advice="use backend='torch'",
        )
    finally:
        del twin


def check_export(lm: Any, model: Any, runner: OnnxForward) -> None:
    """Raise [`ModelError`][assoc.ModelError] unless ``runner`` reproduces the model on `PROBE_TEXTS`.

    The probe texts run as one padded batch on ONNX Runtime, at the mask and at the first and
    last real positions of each text; each text also runs alone through the model's own PyTorch
    forward pass (no packed encoder, no oneDNN). Every log probability over the whole
    vocabulary must agree within `TOLERANCE`.
    """
    seqs = [lm.encode(text.format(mask=lm.mask_token)) for text in PROBE_TEXTS]
    picks = [(b, p) for b, seq in enumerate(seqs) for p in sorted({1, seq.index(lm.mask_token_id), len(seq) - 1})]
    compare_with_model(lm, model, runner, seqs, picks, "probe texts")


def compare_with_model(
    lm: Any,
    model: Any,
    runner: OnnxForward,
    seqs: Sequence[tuple[int, ...]],
    picks: Sequence[tuple[int, int]],
    what: str,
    computed: np.ndarray | None = None,
) -> None:
    """Compare ``runner``'s log-softmax rows of the batch ``seqs`` at ``picks`` with the model's own forward pass.

    ``computed``: the runner's rows when already computed. Every sequence that has a pick is
    run alone through PyTorch. Raises [`ModelError`][assoc.ModelError] when any log
    probability differs by more than `TOLERANCE` (or is not finite).
    """
    if computed is None:
        ids, attention = padded_batch(seqs, lm.pad_token_id)
        computed = runner.log_softmax(ids, attention, picks)
    worst = 0.0
    for row in sorted({b for b, _ in picks}):
        mine = [k for k, (b, _) in enumerate(picks) if b == row]
        reference = lm.reference_log_softmax(model, [seqs[row]], [(0, picks[k][1]) for k in mine])
        delta = np.abs(computed[mine] - reference)
        worst = max(worst, float(np.max(delta)) if np.isfinite(delta).all() else float("inf"))
    if not worst <= TOLERANCE:
        raise ModelError(
            f"the ONNX export of {lm.name!r} does not reproduce its PyTorch forward pass on {what} (max "
            f"|difference| of a log probability {worst:.2e} > {TOLERANCE:g}); use backend='torch'"
        )

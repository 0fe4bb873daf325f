"""A first result without torch: a cached, checked float32 ONNX export run with ``tokenizers`` and ``onnxruntime`` only.

Importing torch and transformers costs a fresh process about 6 s, most of a one-query ``fmat``
study. With ``backend="onnx"`` (or ``"onnx-int8"``) the forward passes need neither, once an
earlier process has exported the model and checked the export (:mod:`assoc.lm.masked.onnx`). That
process also kept what running the export takes (:func:`assoc.lm.masked.onnx.remember_for_torch_free`):
the tokenizer as transformers built it and the engine's settings. :func:`torch_free_masked_lm`
finds them and returns a :class:`TorchFreeMaskedLM`, which the scorers use like any
:class:`~assoc.lm.masked.engine.MaskedLM`: the same requests, batches, padding and float64
log-softmax (:meth:`~assoc.lm.masked.engine.MaskedLM.log_probs`), only the session computing the batch
is opened from the file directly. Its numbers are the ordinary ``backend="onnx"`` numbers.

What is checked in a process without torch, and what is not:

* **Checked**: the weights are those the export was made from (their fingerprint: a sha256 of
  the model directory, remembered per file stamp, or the Hub commit); the installed torch,
  transformers, onnx and onnxruntime are those the export was made with (they are part of the
  export's cache key); the export file holds the content recorded when it was written and the
  content that passed the probe check against PyTorch (its SHA-256, hashed once per process: a
  file edited in place to the same size and modification time does not pass), on this
  onnxruntime version and CPU architecture (the remembered check,
  :func:`assoc.lm.masked.onnx._check_memo_key`); the tokenizer copy holds the content recorded when
  it was kept, when it tokenised the probe texts exactly as transformers did (ids, offsets, word
  ids, token strings).
* **Not checked**: the first batch of this process's queries is not computed again by PyTorch
  (there is no PyTorch here), as an ordinary ``backend="onnx"`` process does; the probe check of
  the file stands for it. A model this process has already loaded in PyTorch runs the ordinary
  path, which makes that check.

Anything missing or different (no record, a changed file, other library versions, ``cache=False``,
a slow tokenizer, temporary tokens) and :func:`torch_free_masked_lm` returns None: the scorer
loads the model as usual, which exports and checks again where needed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from assoc.errors import ModelError, OptionError
from assoc.lm.identity import is_content_fingerprint
from assoc.lm.masked.batch import padded_batch
from assoc.lm.masked.engine import MaskedLM

if TYPE_CHECKING:
    from assoc.infra.cache import Cache
    from assoc.lm.masked.fast_tokenizer import FastTokenizer
    from assoc.lm.masked.onnx import OnnxForward

# Sessions opened in this process without torch: {(resolved file, threads): session}. One per file and
# thread count, shared by every handle (each session holds a copy of the weights).
_SESSIONS: dict[tuple[str, int | None], OnnxForward] = {}
_LOCK = threading.Lock()


class TorchFreeMaskedLM(MaskedLM):
    """A :class:`~assoc.lm.masked.engine.MaskedLM` whose forward passes run a checked ONNX export; no torch, no model.

    Built by :func:`torch_free_masked_lm`. ``model`` is None; the tokenizer is a
    :class:`~assoc.lm.masked.fast_tokenizer.FastTokenizer`. Temporary tokens are refused (as for
    every ONNX backend); :meth:`info` reports what the process that kept the export recorded.
    """

    def __init__(
        self,
        name: str,
        tokenizer: FastTokenizer,
        runner: OnnxForward,
        *,
        fingerprint: str,
        backend: str,
        memo: Cache | None,
        record: dict[str, Any],
    ):
        # No MaskedLM.__init__: it reads a PyTorch model. What it sets from the model comes from the record.
        self.name = name
        self.tokenizer = tokenizer
        self.model = None
        self.device = "cpu"
        self.dtype = "float32"
        self.fingerprint = fingerprint
        self.shared = True
        self.memo = memo
        self.backend = backend
        self.mask_token = tokenizer.mask_token
        self.mask_token_id = tokenizer.mask_token_id
        self.max_length = int(record["max_length"])
        self.pad_token_id = int(record["pad_token_id"])
        self.added_tokens = {}
        self._base_vocab_size = int(record["vocab_size"])
        self._info = dict(record["info"])
        self._runner: OnnxForward | None = runner

    @property
    def vocab_size(self) -> int:
        """Number of output classes of the exported LM head."""
        self._session()
        return self._base_vocab_size

    def close(self) -> None:
        """Drop this handle; the session stays open for the process's next handle on the same file."""
        self._runner = None

    def __repr__(self) -> str:
        return f"TorchFreeMaskedLM({self.name!r}, backend={self.backend!r})"

    def info(self) -> dict[str, Any]:
        """Model information as the process that kept the export recorded it, with this handle's settings."""
        self._session()
        return {
            "model": self.name,
            **self._info,
            "device": self.device,
            "dtype": self.dtype,
            "backend": self.backend,
            "fingerprint": self.fingerprint,
        }

    def add_temporary_tokens(self, words: Any, weight_decay: float = 1.0) -> list[int]:
        """Refused: the export is the model as it was exported (:class:`~assoc.errors.OptionError`)."""
        if not words:
            return []
        raise OptionError(
            f"backend {self.backend!r} runs the model as exported, without temporary tokens "
            "(oov='add_tokens'): use backend='torch'"
        )

    def remove_temporary_tokens(self) -> None:
        """Nothing to remove: temporary tokens are refused."""

    def _batch_runner(self) -> Callable[[list[tuple[int, ...]], list[tuple[int, int]]], np.ndarray]:
        runner = self._session()

        def run(seqs: list[tuple[int, ...]], picks: list[tuple[int, int]]) -> np.ndarray:
            ids, attention = padded_batch(seqs, self.pad_token_id)
            return runner.log_softmax(ids, attention, picks)

        return run

    def _session(self) -> OnnxForward:
        if self._runner is None:
            raise ModelError(f"model {self.name!r} was closed")
        return self._runner

    def _model(self) -> Any:
        raise ModelError(f"model {self.name!r} runs its ONNX export without PyTorch: it has no PyTorch model here")


def torch_free_masked_lm(
    model: str,
    *,
    device: str,
    dtype: str,
    revision: str | None,
    memo: Cache | None,
    backend: str,
) -> TorchFreeMaskedLM | None:
    """A handle running ``model``'s checked export without torch, or None where the ordinary path must run.

    None unless ``backend`` is ``"onnx"`` or ``"onnx-int8"`` on the CPU in float32, the run's
    cache is on, ``model`` is a local directory or Hub id with a content-based fingerprint, not
    a model in memory and not already loaded in PyTorch in this process, and an earlier process
    kept its checked float32 export (and, for ``"onnx-int8"``, the quantised copy) with what
    running it takes (module docstring). Imports neither torch nor transformers.
    """
    import sys

    from assoc.infra.cache import Cache
    from assoc.infra.integrity import mismatch
    from assoc.infra.threads import requested_threads
    from assoc.lm.identity import looks_like_path, model_fingerprint
    from assoc.lm.masked.fast_tokenizer import FastTokenizer
    from assoc.lm.masked.loading import loaded_masked_lms
    from assoc.lm.masked.onnx import TOKENIZER_FILE, TORCH_FREE_KIND, TORCH_FREE_VERSION, OnnxForward, _check_memo_key
    from assoc.lm.onnx import export_location, inference_session, usable_export
    from assoc.models.memory import in_memory

    if backend not in ("onnx", "onnx-int8") or str(device).strip().lower() != "cpu" or dtype != "float32":
        return None
    if memo is not None and not memo.enabled:
        return None  # cache=False: nothing from earlier runs is trusted
    name = model.strip() if isinstance(model, str) else ""
    if not name or in_memory(name) is not None:
        return None
    path = Path(name).expanduser()
    if not path.is_dir() and looks_like_path(name):
        return None  # a missing directory: the ordinary path says so
    if "torch" in sys.modules:
        wanted = str(path.resolve()) if path.is_dir() else name
        if any(key.model == wanted and key.revision == revision for key in loaded_masked_lms()):
            return None  # already in PyTorch here: the ordinary path checks the first batch at no load cost
    fingerprint = model_fingerprint(name, revision, memo)
    if not is_content_fingerprint(fingerprint):
        return None
    remembered = memo if memo is not None else Cache()  # None: the default cache root
    record = remembered.recall(TORCH_FREE_KIND, [fingerprint])
    if not (isinstance(record, dict) and record.get("version") == TORCH_FREE_VERSION):
        return None
    try:
        root = Path(memo.root) if memo is not None else None
        fp32 = export_location(record["export_key"], int8=False, root=root)
        tokenizer_file = fp32.parent / TOKENIZER_FILE
        # every file by its content (hashed once per process), never by its size and time: anything edited,
        # truncated or unreadable sends the run down the ordinary path, which says so and makes it again
        if not (usable_export(fp32, warn=False) and mismatch(tokenizer_file) == ""):
            return None
        if remembered.recall("onnx-export-check", _check_memo_key(fp32)) is not True:
            return None
        run_file = fp32 if backend == "onnx" else export_location(record["export_key"], int8=True, root=root)
        if not usable_export(run_file, warn=False):
            return None
        tokenizer = FastTokenizer.from_str(tokenizer_file.read_text(encoding="utf-8"), **record["tokenizer"])
    except Exception:  # noqa: BLE001 - a damaged record or file (tokenizers raises bare Exception): the ordinary path
        return None
    threads = requested_threads()
    with _LOCK:
        session_key = (str(run_file.resolve()), threads)
        runner = _SESSIONS.get(session_key)
        if runner is None:
            try:
                session = inference_session(run_file, threads)
            except ModelError:
                return None  # a file ONNX Runtime cannot open: the ordinary path makes it again
            runner = OnnxForward(session, backend, run_file, threads or 0)
            runner.checked_on_queries = False  # never compared with PyTorch in this process (module docstring)
            _SESSIONS[session_key] = runner
    return TorchFreeMaskedLM(
        name, tokenizer, runner, fingerprint=fingerprint, backend=backend, memo=memo, record=record
    )

"""The one loader of local language models, and the checks it makes before any work.

* :func:`open_model` is how every scorer (and every engine's user) gets a model: it resolves the
  model's kind (its spec's prefix, else the kind that recognises the model's files,
  :meth:`~assoc.lm.kinds.LanguageModel.detect`, else the scorer's default kind), refuses a kind the
  scorer does not take, runs the kind's :meth:`~assoc.lm.kinds.LanguageModel.check` and then its
  :meth:`~assoc.lm.kinds.LanguageModel.open`. :func:`check_model` is its first half, run for every
  model before any work (in a scorer's ``plan``).
* :func:`check_model_folder`: what the masked and causal kinds check of a local folder before any
  work (it exists, with a did-you-mean for a near name; a ``config.json``; a tokenizer with a
  vocabulary; a vocabulary no larger than the model's embedding matrix).
* :func:`load_pretrained` loads a transformers model and its tokenizer for every engine (device,
  dtype, the Hub checks, the translation of transformers' errors into one line) and checks what it
  loaded; :class:`LoadedLM` is what the engines' handles share; :func:`in_memory_parts` unwraps a
  ``(model, tokenizer)`` pair given as an object in memory.

Nothing here imports torch or transformers at module import time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from assoc.errors import ModelError, TooLongError
from assoc.lm.batching import max_length
from assoc.lm.identity import hub_fingerprint, looks_like_path, model_fingerprint, resolve_device, torch_dtype

if TYPE_CHECKING:
    from assoc.infra.cache import Cache
    from assoc.lm.kinds import LanguageModel


def load_pretrained(
    model: str,
    auto_class: str,
    *,
    noun: str,
    action: str,
    device: str,
    dtype: str,
    revision: str | None,
    memo: Cache | None = None,
    hub_advice: bool = True,
    check: Callable[[str, Any], None] | None = None,
) -> tuple[Any, Any, str, str]:
    """Load (tokenizer, model, fingerprint, device) with transformers' ``auto_class`` or raise :class:`ModelError`.

    One loader for every engine: the name checks, device and dtype, the choice between a local
    directory and the Hub (and whether the Hub must be reachable), loading with transformers'
    progress bars off, and the translation of its errors into one line naming the problem.

    Parameters
    ----------
    model
        A Hugging Face id or a local directory (surrounding spaces ignored).
    auto_class
        The transformers class that loads the weights, by name (``"AutoModelForMaskedLM"``,
        ``"AutoModelForCausalLM"``), so that transformers is imported only once the Hub check passed.
    noun
        What the model is, in error messages (``"fill-mask model"``, ``"causal LM"``).
    action
        What was being done, in the unreachable-Hub message (:func:`assoc.lm.hub.check_hub_reachable`).
    device, dtype, revision
        As for :func:`resolve_device`, :func:`torch_dtype` and ``from_pretrained``.
    memo
        Where the weights' fingerprint is remembered (:func:`local_fingerprint`).
    hub_advice
        Whether a Hub id that cannot be loaded gets :func:`assoc.lm.hub.advice` in its message.
    check
        Called with the model name and the tokenizer once both loaded, before the model is moved:
        raises :class:`ModelError` when the model is not of the kind the engine needs.

    Whatever the engine, what was loaded is checked before it is used (:func:`check_loaded`): a
    tokenizer that turns text into no tokens (a folder whose vocabulary file is missing loads as an
    empty tokenizer, and every sentence would score 0.0) and a tokenizer with more tokens than the
    model's embedding matrix has rows are refused in one line.
    """
    if not isinstance(model, str) or not model.strip():
        raise ModelError("model name is empty; give a Hugging Face id or a local directory")
    model = model.strip()
    tdtype = torch_dtype(dtype)
    device = resolve_device(device)
    path = Path(model).expanduser()
    if not path.is_dir() and looks_like_path(model):
        raise ModelError(f"model directory {model!r} does not exist")
    source = str(path) if path.is_dir() else model
    hub: dict[str, Any] = {}
    if not path.is_dir():
        from assoc.lm.hub import cache_dir, check_hub_reachable, hub_reachable

        # The Hub client retries a failed connection for about a minute: decide here, in seconds,
        # whether the Hub is needed (not cached) and reachable; a cached model loads without it.
        if hub_fingerprint(model, revision) is None:
            check_hub_reachable(model, action=action)
            hub = {"cache_dir": str(cache_dir())}
        else:
            hub = {"cache_dir": str(cache_dir()), "local_files_only": not hub_reachable()}

    import transformers
    from transformers.utils import logging as hf_logging

    # transformers' own "Loading weights" bars would interleave with ours; scoring has its own progress.
    bars_were_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, revision=revision, **hub)
        with _quiet_load_report():  # what it would report is checked below, in one line
            lm, info = getattr(transformers, auto_class).from_pretrained(
                source, revision=revision, dtype=tdtype, output_loading_info=True, **hub
            )
    except _weights_errors() as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        named = ", ".join(_weight_files(path) if path.is_dir() else []) or "its weights file"
        if _is_weights_error(exc):
            raise ModelError(f"cannot load {noun} {model!r}: {named} is corrupt or unreadable ({first})") from exc
        if isinstance(exc, RuntimeError) and ("ignore_mismatched_sizes" in str(exc) or "size mismatch" in str(exc)):
            raise ModelError(
                f"cannot load {noun} {model!r}: the tensors in {named} have other shapes than its config.json "
                "describes: is config.json another model's?"
            ) from exc
        if isinstance(exc, RuntimeError):
            raise  # not a file problem we know: a bug, keep the traceback
        offline = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
        where = (
            "a local directory"
            if path.is_dir()
            else "a Hugging Face model id" + (" available in the local cache (offline mode is on)" if offline else "")
        )
        if hub_advice and not path.is_dir():
            from assoc.lm.hub import advice

            where += f" ({advice(model)})"
        raise ModelError(f"cannot load {noun} {model!r} as {where}: {first}") from exc
    finally:
        if bars_were_on:
            hf_logging.enable_progress_bar()
    missing = sorted(info.get("missing_keys") or ()) if isinstance(info, dict) else []
    if missing:  # transformers would fill them with random numbers and only log it
        named = ", ".join(_weight_files(path) if path.is_dir() else []) or "its weights"
        raise ModelError(
            f"cannot load {noun} {model!r}: its config.json describes {len(missing)} tensor(s) that {named} does not "
            f"hold (first: {missing[0]}), which would be random numbers: is config.json another model's?"
        )
    check_loaded(model, tokenizer, lm)
    if check is not None:
        check(model, tokenizer)
    lm.eval()
    _move(lm, device, model, dtype)
    return tokenizer, lm, model_fingerprint(model, revision, memo), device


def _move(lm: Any, device: str, model: str, dtype: str) -> None:
    """Put the weights on ``device``; a device without the memory for them is one line, not a traceback."""
    import torch

    out_of_memory = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
    try:
        lm.to(device)
    except out_of_memory as exc:
        lm.to("cpu")
        raise ModelError(
            f"model {model!r} in {dtype} does not fit in the free memory of {device}: use a smaller dtype "
            "(float16, bfloat16), another device, or free the device's memory"
        ) from exc


class _quiet_load_report:
    """Silence transformers' load report while a model loads: its findings are checked and said in one line.

    The report lists missing, unexpected and mismatched tensors as a table on stderr; a missing or
    mismatched tensor is refused by :func:`load_pretrained` in one line, and unexpected ones (a
    checkpoint's other heads) are harmless.
    """

    def __enter__(self) -> None:
        import logging

        self.logger = logging.getLogger("transformers.utils.loading_report")
        self.level = self.logger.level
        self.logger.setLevel(logging.ERROR)

    def __exit__(self, *exc: object) -> None:
        self.logger.setLevel(self.level)


def check_loaded(model: str, tokenizer: Any, lm: Any) -> None:
    """Refuse a loaded ``(tokenizer, lm)`` whose tokenizer cannot serve the model (:class:`ModelError`, one line).

    A tokenizer that gives no token for plain text (loaded from a folder without its vocabulary
    file) would make every sentence's log-probability a sum over nothing; one with more tokens than
    the embedding matrix has rows would send ids the model cannot look up (a tokenizer of another model).
    """
    probe = tokenizer("a b c", add_special_tokens=False)["input_ids"]
    if not probe:
        raise ModelError(
            f"model {model!r}: its tokenizer turns text into no tokens (its vocabulary file is missing or "
            "empty): save the model's tokenizer beside it (tokenizer.save_pretrained)"
        )
    rows = int(lm.get_input_embeddings().weight.shape[0])
    if len(tokenizer) > rows:
        raise ModelError(
            f"model {model!r}: its tokenizer has {len(tokenizer)} tokens but the model's embedding matrix has "
            f"{rows} rows, so some token ids cannot be looked up: is the tokenizer another model's?"
        )


def _weights_errors() -> tuple[type[BaseException], ...]:
    """What ``from_pretrained`` raises for a model it cannot load.

    A missing or odd file, a bad config, or corrupt weights (safetensors' own error, torch's
    unpickling and stream errors).
    """
    import pickle

    errors: tuple[type[BaseException], ...] = (OSError, ValueError, KeyError, pickle.UnpicklingError, RuntimeError)
    try:
        from safetensors import SafetensorError
    except ImportError:  # pragma: no cover - transformers depends on safetensors
        return errors
    return (*errors, SafetensorError)


def _is_weights_error(exc: BaseException) -> bool:
    import pickle

    name = type(exc).__name__
    return (
        name == "SafetensorError"
        or isinstance(exc, pickle.UnpicklingError)
        or (isinstance(exc, RuntimeError) and ("PytorchStreamReader" in str(exc) or "safetensors" in str(exc).lower()))
    )


def _weight_files(directory: Path) -> list[str]:
    """Names of the weight files in a model directory."""
    patterns = ("*.safetensors", "pytorch_model*.bin", "*.pt", "*.ckpt")
    return sorted({p.name for pattern in patterns for p in directory.glob(pattern)})


_Handle = TypeVar("_Handle", bound="LoadedLM")


class LoadedLM:
    """What a loaded language model's handle is, whatever the engine: the base of the masked-LM and causal-LM handles.

    Attributes: ``name`` (as the user wrote it), ``tokenizer``, ``model`` (None once closed),
    ``device``, ``dtype``, ``fingerprint`` (the weights' identity, :func:`model_fingerprint`),
    ``shared`` (the weights belong to the process cache or to the user, not to this handle) and
    ``memo`` (where facts about the weights are remembered; None: the default cache root) and
    ``max_length`` (the longest sequence the model accepts, special tokens included:
    :func:`assoc.lm.batching.max_length`). A handle is a context manager that closes itself.
    """

    max_length: int

    def __init__(
        self,
        name: str,
        tokenizer: Any,
        model: Any,
        *,
        device: str,
        dtype: str,
        fingerprint: str,
        shared: bool = False,
        memo: Cache | None = None,
    ):
        self.name = name
        self.tokenizer = tokenizer
        self.model = model
        self.device = device
        self.dtype = dtype
        self.fingerprint = fingerprint
        self.shared = shared
        self.memo = memo
        self.max_length = max_length(tokenizer, model.config)

    def close(self) -> None:
        """Drop the model; a private copy's memory is freed (CPU and GPU), shared weights stay loaded."""
        self.model = None
        if not self.shared:
            from assoc.infra.memory import free_memory

            free_memory()

    def __enter__(self: _Handle) -> _Handle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _model(self) -> Any:
        if self.model is None:
            raise ModelError(f"model {self.name!r} was closed")
        return self.model

    def too_long(self, input_ids: Sequence[int], text: str | None = None) -> TooLongError:
        """The error for the sequence ``input_ids``, longer than the model accepts, naming its text (shortened).

        ``text``: the text as the caller wrote it; else decoded from the tokens. The error carries the
        text, its length and the model's limit (:class:`~assoc.errors.TooLongError`), so that a scorer
        can name its item; scorers that keep such items check lengths first (:mod:`assoc.lm.statuses`).
        """
        from assoc.lm.statuses import too_long_reason

        if text is None:
            try:
                text = str(self.tokenizer.decode(list(input_ids), skip_special_tokens=True))
            except Exception:  # noqa: BLE001 - a message must not fail: fall back to the length alone
                text = ""
        return TooLongError(
            f"{too_long_reason(text, len(input_ids), self.name, self.max_length)}; shorten it",
            text=text,
            n_tokens=len(input_ids),
            max_length=self.max_length,
            model=self.name,
        )

    def _refuse_bad_ids(self, input_ids: Sequence[int], token_ids: Sequence[int] | None, n_vocab: int) -> None:
        """Raise :class:`ModelError` for a sequence longer than the model accepts or a token id outside its vocabulary.

        ``input_ids`` is the sequence the model reads; ``token_ids`` the ids whose probabilities are
        read (None: the whole vocabulary, nothing to check).
        """
        if len(input_ids) > self.max_length:
            raise self.too_long(input_ids)
        if token_ids is not None and any(not 0 <= t < n_vocab for t in token_ids):
            raise ModelError(f"token id outside the vocabulary of {self.name!r} (size {n_vocab})")


def in_memory_parts(
    name: str,
    *,
    takes: str,
    before: Callable[[], None] | None = None,
    check: Callable[[str, Any], None] | None = None,
) -> tuple[Any, Any, dict[str, Any]] | None:
    """(model, tokenizer, handle settings) of the in-memory ``(model, tokenizer)`` pair ``name``, or None.

    ``None`` when ``name`` is not an in-memory model (:mod:`assoc.models.memory`). ``before`` runs
    once the pair is found, before it is checked (to refuse settings that cannot apply to it);
    ``takes`` ends the message for an object that is not a pair (what the scorers take);
    ``check(name, tokenizer)`` refuses a pair of the wrong kind. The model is put in evaluation mode
    (dropout would make every number random) and used where it is: the settings are its device and
    dtype, the pair's fingerprint and ``shared=True`` (the weights are the user's).
    """
    from assoc.models.memory import fingerprint, in_memory, is_pair

    pair = in_memory(name)
    if pair is None:
        return None
    if before is not None:
        before()
    if not is_pair(pair):
        raise ModelError(f"model {name!r} is a {type(pair).__name__} in memory; {takes}")
    lm, tokenizer = pair
    if not callable(getattr(lm, "get_output_embeddings", None)) or not callable(getattr(lm, "eval", None)):
        raise ModelError(f"model {name!r}: the first item of the pair is not a transformers model")
    if check is not None:
        check(name, tokenizer)
    lm.eval()
    weights = lm.get_input_embeddings().weight
    where = {
        "device": str(weights.device),
        "dtype": str(weights.dtype).removeprefix("torch."),
        "fingerprint": fingerprint(pair),
        "shared": True,
    }
    return lm, tokenizer, where


# -- what a model's files say, before anything loads ------------------------------------------------

#: Files that hold a tokenizer's vocabulary (one of them is enough): the fast tokenizer's JSON, WordPiece's
#: vocab.txt, byte-level BPE's vocab.json, a SentencePiece model.
VOCABULARY_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "tokenizer.model", "*.model")


def model_folder(spec: str) -> Path | None:
    """The local folder ``spec`` names (resolved), or ``None`` when it names none that exists."""
    path = Path(spec.strip()).expanduser()
    return path.resolve() if path.is_dir() else None


def read_config(spec: str, revision: str | None = None) -> dict[str, Any] | None:
    """The ``config.json`` of a local folder, or of a Hub model in the local Hugging Face cache; ``None`` if neither.

    Never downloads: a Hub model that is not cached has no config here.
    """
    folder = model_folder(spec)
    if folder is not None:
        found: Path | None = folder / "config.json"
    else:
        found = None
        if not looks_like_path(spec.strip()) and hub_fingerprint(spec.strip(), revision) is not None:
            try:
                from huggingface_hub import try_to_load_from_cache

                from assoc.lm.hub import cache_dir

                cached = try_to_load_from_cache(
                    spec.strip(), "config.json", revision=revision, cache_dir=str(cache_dir())
                )
            except (ImportError, ValueError):
                cached = None
            found = Path(cached) if isinstance(cached, str) else None
    if found is None or not found.is_file():
        return None
    try:
        config = json.loads(found.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return config if isinstance(config, dict) else None


def architectures(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The model classes a ``config.json`` names (``architectures``), empty when it names none."""
    named = config.get("architectures")
    return tuple(str(a) for a in named) if isinstance(named, list) else ()


#: The transformers auto classes of the local kinds, and the suffixes of the model classes they load.
AUTO_CLASSES = {
    "AutoModelForMaskedLM": ("ForMaskedLM",),
    "AutoModelForCausalLM": ("ForCausalLM", "LMHeadModel"),
}


def auto_class_of(config: Mapping[str, Any] | None) -> str | None:
    """Which transformers auto class loads the model of ``config`` (a ``config.json``), when it says.

    The first of its ``architectures`` that ends like a masked-LM class (``BertForMaskedLM``) or a
    causal-LM class (``GPT2LMHeadModel``, ``LlamaForCausalLM``); without one, its ``model_type``
    when transformers maps it to one of the two auto classes only, and for a type both map (BERT,
    RoBERTa, ... have causal heads for decoders) the causal class when ``is_decoder`` is set, else the
    masked one. ``None``: the config says neither (a sequence-to-sequence model, an encoder alone).
    """
    if not config:
        return None
    for architecture in architectures(config):
        for auto_class, suffixes in AUTO_CLASSES.items():
            if architecture.endswith(suffixes):
                return auto_class
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        return None
    try:
        from transformers.models.auto import modeling_auto
    except ImportError:  # pragma: no cover - assoc[mlm] installs transformers
        return None
    masked = model_type in modeling_auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES
    causal = model_type in modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    if masked and causal:
        return "AutoModelForCausalLM" if config.get("is_decoder") else "AutoModelForMaskedLM"
    return "AutoModelForMaskedLM" if masked else "AutoModelForCausalLM" if causal else None


def object_auto_class(obj: Any) -> str | None:
    """Which auto class a model held in memory (a ``(model, tokenizer)`` pair) is an instance of, by its class name."""
    model = obj[0] if isinstance(obj, tuple) and obj else obj
    name = type(model).__name__
    for auto_class, suffixes in AUTO_CLASSES.items():
        if name.endswith(suffixes):
            return auto_class
    return None


def near_folders(spec: str) -> list[str]:
    """Existing folders beside where ``spec`` points whose names are close to its name (a did-you-mean)."""
    import difflib

    path = Path(spec.strip()).expanduser()
    parent = path.parent if str(path.parent) not in ("", ".") else Path(".")
    try:
        names = [child.name for child in parent.iterdir() if child.is_dir() and not child.name.startswith(".")]
    except OSError:
        return []
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.75)
    prefix = "" if parent == Path(".") else str(parent).rstrip("/") + "/"
    return [prefix + name for name in close]


def check_model_folder(spec: str, *, noun: str, revision: str | None = None) -> None:
    """Refuse, before any work, a model ``spec`` whose files cannot give a working model (one :class:`ModelError` line).

    * a path that does not exist (with a did-you-mean for a near folder name); a name that is neither a
      folder nor a Hub model in the local cache, when a folder of a near name exists (a mistyped folder);
    * a folder without ``config.json`` (not a saved transformers model), or whose ``config.json`` names no
      model type; a JSON file of the model or its tokenizer that does not parse (:data:`JSON_FILES`,
      named); no weights file, or a shard index naming shards that are not there;
    * a folder without a tokenizer vocabulary (:data:`VOCABULARY_FILES`): transformers would load an
      empty tokenizer and every text would score over no tokens;
    * a tokenizer with more tokens than ``config.json``'s ``vocab_size`` (the rows of the embedding
      matrix), as far as the files tell (:func:`tokenizer_size`).

    A Hub id is left to the loader (it may be downloaded); ``noun`` names the kind in messages.
    """
    text = spec.strip()
    folder = model_folder(text)
    if folder is None:
        near = near_folders(text)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        if looks_like_path(text) or Path(text).expanduser().exists():
            raise ModelError(f"model folder {text!r} does not exist{hint}")
        if near and hub_fingerprint(text, revision) is None:
            raise ModelError(
                f"model {text!r} is neither a folder here nor a Hugging Face model in the local cache{hint}"
            )
        return
    if not (folder / "config.json").is_file():
        raise ModelError(f"model folder {text!r} has no config.json: it is not a saved transformers {noun}")
    parsed = _parse_json_files(text, folder)
    config_data = parsed.get("config.json")
    if not isinstance(config_data, dict) or not (config_data.get("model_type") or architectures(config_data)):
        raise ModelError(
            f"model folder {text!r}: its config.json names no model_type or architectures, so no model class can "
            f"be chosen for it: save the {noun} with save_pretrained"
        )
    _check_weight_files(text, folder)
    if not any(next(folder.glob(pattern), None) is not None for pattern in VOCABULARY_FILES):
        raise ModelError(
            f"model folder {text!r} has no tokenizer vocabulary (none of {', '.join(VOCABULARY_FILES[:-1])}, "
            "*.model): save the model's tokenizer there (tokenizer.save_pretrained)"
        )
    config = read_config(text) or {}
    rows = config.get("vocab_size")
    size = tokenizer_size(folder)
    if isinstance(rows, int) and size is not None and size > rows:
        raise ModelError(
            f"model folder {text!r}: its tokenizer has {size} tokens but the model's embedding matrix has "
            f"{rows} rows (config.json vocab_size), so some token ids cannot be looked up: is the tokenizer "
            "another model's?"
        )


#: The JSON files of a saved model and its tokenizer that transformers reads (each must parse, when present).
JSON_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "generation_config.json",
)
#: Files that hold a model's weights (one of them, or a shard index naming them, is needed).
WEIGHT_FILES = ("*.safetensors", "pytorch_model*.bin")
#: Indexes of weights saved in shards: their ``weight_map`` names each shard file.
WEIGHT_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")


def _parse_json_files(spec: str, folder: Path) -> dict[str, Any]:
    """Each of :data:`JSON_FILES` in ``folder`` parsed; one :class:`ModelError` line naming a file that is not JSON.

    Transformers' own message for a garbled tokenizer file names no file ("Expecting property name
    enclosed in double quotes: line 1 column 2") and comes after the model started loading.
    """
    parsed: dict[str, Any] = {}
    for name in JSON_FILES:
        path = folder / name
        if not path.is_file():
            continue
        try:
            parsed[name] = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            raise ModelError(f"model folder {spec!r}: {name} is not UTF-8 text (damaged or not a JSON file)") from None
        except ValueError as exc:
            raise ModelError(f"model folder {spec!r}: {name} is not valid JSON ({exc}): the file is damaged") from None
        except OSError as exc:
            raise ModelError(f"model folder {spec!r}: {name} cannot be read ({exc.strerror or exc})") from None
    return parsed


def _check_weight_files(spec: str, folder: Path) -> None:
    """Refuse a folder with no weights file, or whose shard index names a shard that is not there (one line)."""
    for index in WEIGHT_INDEXES:
        if not (folder / index).is_file():
            continue
        try:
            weight_map = json.loads((folder / index).read_text(encoding="utf-8")).get("weight_map") or {}
            shards = sorted({str(shard) for shard in weight_map.values()})
        except (OSError, ValueError, AttributeError):
            raise ModelError(f"model folder {spec!r}: {index} is not a readable shard index (damaged?)") from None
        missing = [shard for shard in shards if not (folder / shard).is_file()]
        if missing:
            raise ModelError(
                f"model folder {spec!r}: {index} names {len(missing)} shard(s) that are not there "
                f"(first: {missing[0]}): the download or copy is incomplete"
            )
        return
    if not any(next(folder.glob(pattern), None) is not None for pattern in WEIGHT_FILES):
        raise ModelError(
            f"model folder {spec!r} has no weights file (none of {', '.join(WEIGHT_FILES)}): save the model's "
            "weights there (save_pretrained), or finish the download"
        )


def tokenizer_size(folder: Path) -> int | None:
    """The number of token ids of the tokenizer saved in ``folder`` (the largest id + 1), when its files tell.

    Read from ``tokenizer.json`` (its model's vocabulary and its added tokens), else ``vocab.txt`` (a line
    per token) or ``vocab.json``, plus ``added_tokens.json``; ``None`` for a SentencePiece model alone
    (reading it needs the sentencepiece library) or files that cannot be read.
    """
    ids: list[int] = []
    try:
        if (folder / "tokenizer.json").is_file():
            data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
            vocab = (data.get("model") or {}).get("vocab")
            if isinstance(vocab, dict):
                ids += [int(v) for v in vocab.values()]
            elif isinstance(vocab, list):  # Unigram: [[piece, score], ...], ids by position
                ids.append(len(vocab) - 1)
            ids += [int(token["id"]) for token in data.get("added_tokens") or [] if "id" in token]
        elif (folder / "vocab.txt").is_file():
            with open(folder / "vocab.txt", encoding="utf-8") as handle:
                ids.append(sum(1 for _ in handle) - 1)
        elif (folder / "vocab.json").is_file():
            vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
            ids += [int(v) for v in vocab.values()] if isinstance(vocab, dict) else []
        if (folder / "added_tokens.json").is_file():
            added = json.loads((folder / "added_tokens.json").read_text(encoding="utf-8"))
            ids += [int(v) for v in added.values()] if isinstance(added, dict) else []
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    return max(ids) + 1 if ids else None


# -- the one loader -----------------------------------------------------------------------------------


def registered_kinds() -> dict[str, type[LanguageModel]]:
    """The model kinds registered by the core and the plugins (``register_model_kinds``), by name."""
    from assoc.plugins.manager import model_kinds

    return model_kinds()


def resolve_kind(
    spec: str,
    *,
    kinds: Sequence[str] | None = None,
    default_kind: str | None = None,
    scorer: str = "",
) -> type[LanguageModel]:
    """The model kind of ``spec``: its prefix's, else the one its files show, else ``default_kind``.

    ``kinds`` are the kinds the caller takes (``None``: any registered kind); a model of another kind
    is refused in one line naming the model, what it is and what ``scorer`` takes. A model given as
    an object in memory (:mod:`assoc.models.memory`) is of the kind that recognises the object
    (:meth:`~assoc.lm.kinds.LanguageModel.detect_object`). A spec whose kind nothing tells (no prefix,
    no ``config.json`` here, no default) is of the caller's one kind when it takes one.
    """
    from assoc.errors import did_you_mean
    from assoc.models.memory import in_memory
    from assoc.models.names import spec_prefix

    registered = registered_kinds()
    accepted = list(kinds) if kinds is not None else list(registered)
    unknown = [k for k in accepted if k not in registered]
    if unknown:
        raise ModelError(f"model kind {unknown[0]!r} is not registered{did_you_mean(unknown[0], registered)}")
    who = f"scorer {scorer!r}" if scorer else "this call"
    takes = (" or ".join(accepted) + " models") if accepted else "no model kind"
    held = in_memory(spec)
    kind: str | None = None
    evidence = ""
    if held is not None:
        found = [name for name in accepted if registered[name].detect_object(held)]
        if not found:
            found = [name for name in registered if name not in accepted and registered[name].detect_object(held)]
        kind = found[0] if found else (accepted[0] if len(accepted) == 1 else None)
        evidence = f"a {type(held[0] if isinstance(held, tuple) else held).__name__} in memory"
    else:
        prefix = spec_prefix(spec)
        if prefix is not None and model_folder(spec) is None:
            by_prefix = {cls.prefix: name for name, cls in registered.items() if cls.prefix}
            if prefix == "memory":
                raise ModelError(
                    f"model {spec!r} names a model held in memory, and no such object is registered in this "
                    "process: give the object itself (models=[(model, tokenizer)]) or a folder or Hub id"
                )
            if prefix not in by_prefix:
                raise ModelError(
                    f"model {spec!r}: {prefix + ':'!r} names no model kind{did_you_mean(prefix, by_prefix)} "
                    f"(kind prefixes: {', '.join(p + ':' for p in sorted(by_prefix)) or 'none'})"
                )
            kind = by_prefix.get(prefix)
            evidence = f"named by its prefix {prefix + ':'!r}"
        else:
            order = accepted + [name for name in registered if name not in accepted]
            detected = [name for name in order if registered[name].detect(spec)]
            if detected:
                kind = detected[0]
                config = read_config(spec) or {}
                shown = ", ".join(architectures(config)) or str(config.get("model_type", ""))
                evidence = f"config.json: {shown}" if shown else "its files"
            elif default_kind is not None:
                kind = default_kind
            elif len(accepted) == 1:
                kind = accepted[0]
            elif model_folder(spec) is not None:
                # a folder holds weights: of the kinds accepted, only the local ones read one (a remote kind,
                # the server's, is named by its prefix), so one local kind is the folder's kind to check
                local = [name for name in accepted if registered[name].local]
                kind = local[0] if len(local) == 1 else None
    if kind is None:
        raise ModelError(
            f"model {spec!r}: cannot tell its kind (no config.json in a folder or in the local Hugging Face "
            f"cache); {who} takes {takes}: download it first (assoc models download) or write the kind's prefix"
        )
    if kind not in accepted:
        raise ModelError(f"model {spec!r} is a {kind} model ({evidence}); {who} takes {takes}")
    return registered[kind]


def check_model(
    spec: str,
    options: Mapping[str, Any],
    *,
    kinds: Sequence[str] | None = None,
    default_kind: str | None = None,
    scorer: str = "",
    requests: Sequence[str] = (),
) -> type[LanguageModel]:
    """Everything :func:`open_model` checks before it loads anything; returns the model's kind.

    The kind (:func:`resolve_kind`), that it serves every request kind in ``requests`` (one
    :class:`~assoc.lm.kinds.RequestKindError` line otherwise) and the kind's own
    :meth:`~assoc.lm.kinds.LanguageModel.check` (the folder, its tokenizer, its options). Cheap: reads
    ``config.json`` and tokenizer files, never weights; a scorer calls it for every model before any work.
    """
    from assoc.lm.kinds import refuse

    kind = resolve_kind(spec, kinds=kinds, default_kind=default_kind, scorer=scorer)
    for request_kind in requests:
        if request_kind not in kind.serves:
            raise refuse(spec, kind.kind, request_kind, sorted(kind.serves))
    kind.check(spec, options)
    return kind


def open_model(
    spec: str,
    options: Mapping[str, Any] | None = None,
    cache: Cache | None = None,
    *,
    kinds: Sequence[str] | None = None,
    default_kind: str | None = None,
    scorer: str = "",
    requests: Sequence[str] = (),
) -> LanguageModel:
    """Open the model ``spec`` as a :class:`~assoc.lm.kinds.LanguageModel` of its kind: the one loader.

    The kind is resolved and checked (:func:`check_model`) before anything loads; masked and causal
    LMs then come from the process's model cache (:data:`assoc.lm.model_cache.MODEL_CACHE`), loaded once
    per process through :func:`load_pretrained`.

    Parameters
    ----------
    spec:
        A local folder, a Hugging Face id, ``<prefix>:<model>`` (``chat:gpt-4o-mini``), or the name of a
        model given as an object in memory. Never a label: the core splits ``LABEL=`` off first
        (:mod:`assoc.models.names`).
    options:
        The model options (:data:`assoc.lm.MODEL_OPTIONS` and the kind's own, e.g. ``bos``): a scorer
        passes its ``params``; missing ones take the kind's defaults.
    cache:
        The run's cache (fingerprints, engine checks, ONNX exports are remembered there), or ``None``.
    kinds, default_kind, scorer, requests:
        What the caller takes and sends (:func:`check_model`).
    """
    given = dict(options or {})
    kind = check_model(spec, given, kinds=kinds, default_kind=default_kind, scorer=scorer, requests=requests)
    return kind.open(spec, given, cache)

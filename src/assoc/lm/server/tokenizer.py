"""The served model's tokenizer: the Rust ``tokenizers`` library alone where the server vouches for it.

assoc chooses the token ids it sends, so it needs the served model's tokenizer. Importing transformers
(and, through it, torch) costs a fresh process seconds, for a tokenizer that is a Python layer over a
:class:`tokenizers.Tokenizer`; so a folder's ``tokenizer.json`` is read with ``tokenizers`` alone
(:class:`RustTokenizer`), and kept only when it tokenizes :data:`TOKENIZER_PROBES` as the server does
(its ``/tokenize``: vLLM's runs transformers' tokenizer), with and without special tokens. Otherwise
(a Hub id, no ``tokenizer.json``, a server without ``/tokenize``, any difference) transformers'
``AutoTokenizer`` is loaded, and checked against the server where it can be; a tokenizer that
disagrees with the server is refused in one line (:func:`find_tokenizer`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assoc.errors import ModelError

#: Texts tokenized here and by the server when a model opens: case, accents, digits, punctuation, runs of
#: spaces, a leading space, line breaks.
TOKENIZER_PROBES = (
    "The nurse said that she was tired, but 42 of them didn't agree: why?",
    " a leading space, and  two  spaces",
    "naïve café résumé – “quotes” …",
    "Context line.\n\nQ: Who was late?\nA: The doctor",
)

#: ``(text, add_special_tokens) -> the server's token ids``, or None when the server cannot tokenize.
ServerTokenize = Callable[[str, bool], "list[int] | None"]


def _special(config: dict[str, Any], name: str) -> str | None:
    value = config.get(name)
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


class RustTokenizer:
    """A tokenizer read from a folder's ``tokenizer.json`` with ``tokenizers`` alone (no transformers, no torch).

    It answers what the causal planning asks (:mod:`assoc.lm.causal.text`): ``tokenizer(text,
    add_special_tokens=...)["input_ids"]``, ``bos_token_id``, ``eos_token_id``, ``decode``,
    ``convert_ids_to_tokens``, ``all_special_ids``; the special tokens are named by
    ``tokenizer_config.json`` (else ``special_tokens_map.json``), as transformers names them.
    """

    def __init__(self, folder: str | Path):
        from tokenizers import Tokenizer

        folder = Path(folder).expanduser()
        self.folder = folder
        self.backend = Tokenizer.from_file(str(folder / "tokenizer.json"))
        config: dict[str, Any] = {}
        for name in ("special_tokens_map.json", "tokenizer_config.json"):  # the second wins, as in transformers
            path = folder / name
            if path.is_file():
                config.update(json.loads(path.read_text(encoding="utf-8")))
        self.bos_token = _special(config, "bos_token")
        self.eos_token = _special(config, "eos_token")
        self.bos_token_id = self.backend.token_to_id(self.bos_token) if self.bos_token else None
        self.eos_token_id = self.backend.token_to_id(self.eos_token) if self.eos_token else None
        added = self.backend.get_added_tokens_decoder()
        self.all_special_ids = sorted(int(i) for i, token in added.items() if getattr(token, "special", False))
        self.model_max_length = config.get("model_max_length")
        self._vocabulary: list[str] | None = None

    def __call__(self, text: str, add_special_tokens: bool = True, **_: Any) -> dict[str, list[int]]:
        """``{"input_ids": [...]}`` of ``text``, with the post-processor's special tokens unless told otherwise."""
        return {"input_ids": list(self.backend.encode(text, add_special_tokens=add_special_tokens).ids)}

    def __len__(self) -> int:
        return int(self.backend.get_vocab_size(with_added_tokens=True))

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False, **_: Any) -> str:
        """The text of ``ids`` (the backend's decoder; no clean-up of spaces)."""
        return str(self.backend.decode([int(i) for i in ids], skip_special_tokens=skip_special_tokens))

    def convert_ids_to_tokens(self, ids: Sequence[int]) -> list[str]:
        """Each id's token as the vocabulary writes it (``Ġnurse``, ``▁nurse``)."""
        if self._vocabulary is None:  # one list of the vocabulary: a lookup per id is a list index
            self._vocabulary = [str(self.backend.id_to_token(i)) for i in range(len(self))]
        vocabulary = self._vocabulary
        return [vocabulary[i] for i in ids]

    def __repr__(self) -> str:
        return f"RustTokenizer({str(self.folder)!r})"


def _ids(tokenizer: Any, text: str, special: bool) -> list[int]:
    return [int(i) for i in tokenizer(text, add_special_tokens=special)["input_ids"]]


def disagreement(tokenizer: Any, server: ServerTokenize) -> str | None:
    """The first probe the tokenizer and the server tokenize differently (one line), else None.

    Raises :class:`LookupError` when the server cannot tokenize (no ``/tokenize``).
    """
    for number, text in enumerate(TOKENIZER_PROBES):
        for special in (False, True) if number == 0 else (False,):
            theirs = server(text, special)
            if theirs is None:
                raise LookupError("the server has no /tokenize")
            mine = _ids(tokenizer, text, special)
            if mine != theirs:
                return f"{text!r}: {mine[:12]} here, {theirs[:12]} on the server"
    return None


def _candidates(given: str | None, model: str, root: str | None) -> list[str]:
    if given:
        return [given]
    out = []
    if root and Path(root).expanduser().is_dir():
        out.append(root)
    out.append(model)
    if root and root not in out and not Path(root).expanduser().is_absolute():
        out.append(root)  # a Hub id the server was started with
    return out


def _transformers_tokenizer(candidate: str, revision: str | None) -> Any:
    from assoc.infra.progress import quiet_libraries

    with quiet_libraries(False):
        from transformers import AutoTokenizer

        where = Path(candidate).expanduser()
        return AutoTokenizer.from_pretrained(str(where) if where.is_dir() else candidate, revision=revision)


def find_tokenizer(
    given: str | None,
    model: str,
    root: str | None,
    server: ServerTokenize | None,
    *,
    revision: str | None = None,
    fast: bool = True,
) -> tuple[Any, dict[str, str]]:
    """The served model's tokenizer and what provenance says of it: ``{"tokenizer", "tokenizer_library", ...}``.

    ``given`` (the ``tokenizer`` option), else the folder the server was started on (``root``), else
    the model's name; ``server`` tokenizes on the server (None offline: nothing is checked). ``fast``:
    try :class:`RustTokenizer` first (kept only when the server agrees on every probe).
    """
    errors = []
    for candidate in _candidates(given, model, root):
        folder = Path(candidate).expanduser()
        if fast and server is not None and (folder / "tokenizer.json").is_file():
            try:
                rust = RustTokenizer(folder)
                if disagreement(rust, server) is None:
                    return rust, {
                        "tokenizer": candidate,
                        "tokenizer_library": "tokenizers",
                        "tokenizer_check": "checked",
                    }
            except LookupError:
                pass  # no /tokenize: transformers' own tokenizer, unchecked
            except Exception:  # noqa: BLE001 - a tokenizer.json the Rust library cannot read: transformers reads it
                pass
        try:
            tokenizer = _transformers_tokenizer(candidate, revision)
        except Exception as exc:  # noqa: BLE001 - any failure: try the next place, then say what was tried
            errors.append(f"{candidate!r} ({type(exc).__name__})")
            continue
        check = "not checked (offline)" if server is None else "checked"
        if server is not None:
            try:
                problem = disagreement(tokenizer, server)
            except LookupError:
                problem, check = None, "not checked (the server has no /tokenize)"
            if problem is not None:
                raise ModelError(
                    f"server model {model!r}: the tokenizer {candidate!r} does not tokenize as the server does "
                    f"({problem}); give the served model's tokenizer with tokenizer=<folder or Hub id>"
                )
        return tokenizer, {"tokenizer": candidate, "tokenizer_library": "transformers", "tokenizer_check": check}
    raise ModelError(
        f"server model {model!r}: no tokenizer found (tried {', '.join(errors)}); assoc chooses the token ids "
        "it sends: give the served model's tokenizer with tokenizer=<folder or Hub id>"
    )

"""A fill-mask model's fast tokenizer without transformers: the Rust ``tokenizers`` backend as transformers set it up.

transformers' fast tokenizers are a Python layer over a :class:`tokenizers.Tokenizer`; importing
transformers costs a fresh process seconds. :class:`FastTokenizer` answers the calls the masked-LM
scorers make (``tokenizer(text)["input_ids"]``, offsets and word ids for pll, ``tokenize``,
``convert_ids_to_tokens``, ``decode``, ``get_vocab``) from that backend alone.

Which backend: the one transformers itself built when it loaded the model, serialised with
``backend_tokenizer.to_str()`` (:func:`serialise`), not the model directory's ``tokenizer.json``
read afresh: transformers may rebuild the normaliser, pre-tokeniser and post-processor from
``tokenizer_config.json`` (lower-casing, ``add_prefix_space``, the special tokens), and the
serialised backend holds the result. The special tokens' ids, the mask token and
``model_max_length`` are taken from the loaded transformers tokenizer too. Whether the copy
tokenises as transformers does is checked on :data:`TOKENIZER_PROBES` before it is kept
(:func:`same_as_transformers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: texts whose token ids, offsets and word ids must be the same from transformers and from the copy
#: (``{mask}`` becomes the model's mask token): case, accents, digits, punctuation, runs of spaces,
#: the mask at the start, inside and next to punctuation
TOKENIZER_PROBES = (
    "{mask}.",
    "The {mask} is here.",
    "Stereotypes are beliefs about the {mask} of members of groups, and they shape judgements.",
    "naïve café {mask} résumé",
    "  Leading spaces,  DOUBLE  spaces and CAPITALS: {mask}!",
    "She paid $12.50 (about 11 EUR) on 3/4/2024 -- {mask}'s idea?",
    "{mask}{mask} no-space{mask}joined",
    "Ünïcödé Straße ﬁne – “quotes” … {mask}",
)


class Encoded(dict[str, Any]):
    """One text's ``input_ids`` (and ``offset_mapping`` when asked), with :meth:`word_ids` as transformers gives."""

    def __init__(self, encoding: Any, offsets: bool):
        super().__init__(input_ids=list(encoding.ids), attention_mask=list(encoding.attention_mask))
        if offsets:
            self["offset_mapping"] = [tuple(pair) for pair in encoding.offsets]
        self._word_ids = list(encoding.word_ids)

    def word_ids(self) -> list[int | None]:
        """The word index of each token (None for special tokens), as ``BatchEncoding.word_ids()``."""
        return list(self._word_ids)


class FastTokenizer:
    """The calls of a transformers fast tokenizer that the masked-LM scorers make, on the Rust backend alone.

    Parameters
    ----------
    backend:
        The :class:`tokenizers.Tokenizer` transformers built (:func:`serialise`); truncation and
        padding are switched off, as transformers leaves them for an unpadded call.
    mask_token, mask_token_id, pad_token_id, model_max_length:
        As the transformers tokenizer reports them.
    """

    is_fast = True

    def __init__(
        self,
        backend: Any,
        *,
        mask_token: str,
        mask_token_id: int,
        pad_token_id: int | None,
        model_max_length: int,
    ):
        backend.no_truncation()
        backend.no_padding()
        self.backend_tokenizer = backend
        self.mask_token = mask_token
        self.mask_token_id = int(mask_token_id)
        self.pad_token_id = None if pad_token_id is None else int(pad_token_id)
        self.model_max_length = int(model_max_length)

    @classmethod
    def from_str(cls, text: str, **special: Any) -> FastTokenizer:
        """The tokenizer of a serialised backend (:func:`serialise`); ``special``: see the class."""
        from tokenizers import Tokenizer

        return cls(Tokenizer.from_str(text), **special)

    def __call__(
        self,
        text: str | Sequence[str],
        add_special_tokens: bool = True,
        return_offsets_mapping: bool = False,
        **_ignored: Any,
    ) -> Any:
        """``{"input_ids": ...}`` of one text (an :class:`Encoded`) or of a list of texts (lists of ids).

        Other keyword arguments transformers takes (``truncation=False``, ``verbose=False``) are
        ignored: nothing is ever truncated or padded here.
        """
        if isinstance(text, str):
            encoding = self.backend_tokenizer.encode(text, add_special_tokens=add_special_tokens)
            return Encoded(encoding, return_offsets_mapping)
        encodings = self.backend_tokenizer.encode_batch(list(text), add_special_tokens=add_special_tokens)
        out: dict[str, Any] = {"input_ids": [list(e.ids) for e in encodings]}
        if return_offsets_mapping:
            out["offset_mapping"] = [[tuple(pair) for pair in e.offsets] for e in encodings]
        return out

    def tokenize(self, text: str) -> list[str]:
        """The token strings of ``text`` without special tokens."""
        return list(self.backend_tokenizer.encode(text, add_special_tokens=False).tokens)

    def convert_ids_to_tokens(self, ids: int | Sequence[int]) -> Any:
        """The vocabulary string of one id, or the list of strings of several."""
        if isinstance(ids, int):
            return self.backend_tokenizer.id_to_token(int(ids))
        return [self.backend_tokenizer.id_to_token(int(i)) for i in ids]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        """The text of ``ids`` by the backend's decoder (used in messages, not in any number)."""
        return str(self.backend_tokenizer.decode([int(i) for i in ids], skip_special_tokens=skip_special_tokens))

    def get_vocab(self) -> dict[str, int]:
        """Token string -> id, added tokens included."""
        return dict(self.backend_tokenizer.get_vocab(with_added_tokens=True))

    def __len__(self) -> int:
        return int(self.backend_tokenizer.get_vocab_size(with_added_tokens=True))


def serialise(tokenizer: Any) -> tuple[str, dict[str, Any]] | None:
    """(the backend as JSON text, the special settings) of a transformers fast tokenizer; None for a slow one.

    Also None when transformers has truncation or padding switched on in the backend (its
    ordinary call would not then be what the copy computes).
    """
    backend = getattr(tokenizer, "backend_tokenizer", None) if getattr(tokenizer, "is_fast", False) else None
    if backend is None or getattr(backend, "truncation", None) is not None or getattr(backend, "padding", None):
        return None
    limit = getattr(tokenizer, "model_max_length", None)
    special = {
        "mask_token": str(tokenizer.mask_token),
        "mask_token_id": int(tokenizer.mask_token_id),
        "pad_token_id": None if tokenizer.pad_token_id is None else int(tokenizer.pad_token_id),
        # transformers' "no limit" is about 1e30; the engine ignores limits above a million (engine._max_length)
        "model_max_length": int(limit) if isinstance(limit, int) and 0 < limit < 1_000_000 else 0,
    }
    return backend.to_str(), special


def same_as_transformers(tokenizer: Any, copy: FastTokenizer, texts: Sequence[str] | None = None) -> bool:
    """Whether ``copy`` gives the token ids, offsets, word ids and token strings ``tokenizer`` gives on ``texts``.

    ``texts`` default to :data:`TOKENIZER_PROBES` with the model's mask token.
    """
    if texts is None:
        texts = [text.format(mask=tokenizer.mask_token) for text in TOKENIZER_PROBES]
    for text in texts:
        theirs = tokenizer(text, add_special_tokens=True, return_offsets_mapping=True)
        mine = copy(text, add_special_tokens=True, return_offsets_mapping=True)
        ids = [int(i) for i in theirs["input_ids"]]
        if ids != mine["input_ids"]:
            return False
        if [tuple(int(x) for x in pair) for pair in theirs["offset_mapping"]] != mine["offset_mapping"]:
            return False
        if list(theirs.word_ids()) != mine.word_ids():
            return False
        if list(tokenizer.convert_ids_to_tokens(ids)) != copy.convert_ids_to_tokens(ids):
            return False
    return True

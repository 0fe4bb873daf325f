"""The R package's helper functions: ``BERT_vocab``, ``BERT_info`` and ``fill_mask_check``.

Each loads the models one at a time (Hugging Face id or local directory; the usual
Hugging Face cache settings such as ``HF_HOME`` and ``HF_HUB_OFFLINE`` apply) and
returns a pandas DataFrame.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

DEFAULT_VOCAB_QUERY = "The word is [MASK]."


def _models(models: str | Sequence[str]) -> list[str]:
    from assoc import OptionError

    models = [models] if isinstance(models, str) else list(models)
    if not models:
        raise OptionError("give at least one model")
    return models


def expand_words(words: Iterable[Any]) -> list[str]:
    """Words as text; numbers become text and ``"1800:2019"`` expands to the years 1800 ... 2019 (inclusive)."""
    import re

    out: list[str] = []
    for word in words:
        text = str(word)
        match = re.fullmatch(r"(\d+):(\d+)", text)
        if match and int(match.group(1)) <= int(match.group(2)):
            out += [str(n) for n in range(int(match.group(1)), int(match.group(2)) + 1)]
        else:
            out.append(text)
    return out


def vocab_check(
    words: Iterable[Any],
    models: str | Sequence[str],
    *,
    query: str = DEFAULT_VOCAB_QUERY,
    device: str = "cpu",
    revision: str | None = None,
) -> Any:
    """Whether each word is a single vocabulary token at the ``[MASK]`` of ``query``, per model (``BERT_vocab``).

    The token is decided by the tokenizer in context (case, ``Ġ``/``▁`` prefixes):
    check with the same position your queries use, e.g. ``query="[MASK] is a nurse."``
    for sentence-initial words in byte-level BPE models. Columns: model, word,
    in_vocab, token (space-separated sub-tokens when out of vocabulary), n_tokens.
    Numbers may be given as numbers, and ``"1800:2019"`` checks every year of a range.
    """
    import pandas as pd

    from assoc import StimuliError
    from assoc.lm import cached_masked_lm, word_tokens_many

    words = expand_words(words)
    if not words:
        raise StimuliError("give at least one word to check")
    rows = []
    for model in _models(models):
        with cached_masked_lm(model, device=device, revision=revision) as lm:
            for wt in word_tokens_many(lm, query, words):
                rows.append(
                    {
                        "model": model,
                        "word": wt.word,
                        "in_vocab": wt.in_vocab,
                        "token": " ".join(lm.token_string(t) for t in wt.token_ids),
                        "n_tokens": len(wt.token_ids),
                    }
                )
    return pd.DataFrame(rows, columns=["model", "word", "in_vocab", "token", "n_tokens"])


def model_info(models: str | Sequence[str], *, device: str = "cpu", revision: str | None = None) -> Any:
    """One row per model: type, vocabulary size, hidden size, layers, cased, mask token, parameters (``BERT_info``)."""
    import pandas as pd

    from assoc.lm import cached_masked_lm

    rows = []
    for model in _models(models):
        with cached_masked_lm(model, device=device, revision=revision) as lm:
            rows.append(lm.info())
    return pd.DataFrame(rows)


def fill_mask_check(
    queries: str | Sequence[str],
    models: str | Sequence[str],
    *,
    top_n: int = 5,
    device: str = "cpu",
    revision: str | None = None,
) -> Any:
    """The ``top_n`` most probable fills of each query's ``[MASK]``, per model (``fill_mask_check``).

    Columns: model, query, rank, token (vocabulary string), word (decoded), log_prob, prob.
    """
    import numpy as np
    import pandas as pd

    from assoc import OptionError
    from assoc.lm import MaskRequest, cached_masked_lm, masked_query

    queries = [queries] if isinstance(queries, str) else list(queries)
    if top_n < 1:
        raise OptionError(f"top_n must be >= 1, got {top_n}")
    rows = []
    for model in _models(models):
        with cached_masked_lm(model, device=device, revision=revision) as lm:
            masked = [masked_query(lm, q) for q in queries]
            results = lm.log_probs([MaskRequest(ids, pos, None) for ids, pos in masked])
            for query, vector in zip(queries, results, strict=True):
                best = np.argsort(-vector, kind="stable")[:top_n]
                for rank, token_id in enumerate(best, start=1):
                    rows.append(
                        {
                            "model": model,
                            "query": query,
                            "rank": rank,
                            "token": lm.token_string(int(token_id)),
                            "word": lm.tokenizer.decode([int(token_id)]).strip(),
                            "log_prob": float(vector[token_id]),
                            "prob": math.exp(float(vector[token_id])),
                        }
                    )
    return pd.DataFrame(rows, columns=["model", "query", "rank", "token", "word", "log_prob", "prob"])

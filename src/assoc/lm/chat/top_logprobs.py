r"""A chat model's choice from the top log-probabilities at the answer position (``choice_measure="top_logprobs"``).

For letter-answer benchmarks (BBQ, the word-association test) on a chat endpoint that gives no
log-probabilities of a prompt, the distribution of the reply's first token is the measure: the
request is sent with ``logprobs: true, top_logprobs: N``, and each option's score is the
log-probability that the first reply token is the option's label,

.. math::

    s_k = \log \sum_{t \in T_k} p(t), \qquad T_k = \{t \in \text{top-}N : \operatorname{strip}(t) = \ell_k\},

over the spellings of label :math:`\ell_k` among the :math:`N` most likely first tokens (``"A"``, ``" A"``).
The chosen option is the first of the highest score (``numpy.argmax``'s rule). A label outside the top
:math:`N` has no score (``NaN``): its probability is below the :math:`N`-th, so it cannot be the
argmax when any label is in the top :math:`N`; when none is, the item has no choice (status
``no_label``). This is its own measure, not the reply's: it never falls back to reading the reply
text, and an endpoint that returns no top log-probabilities is refused in one line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from assoc.errors import ModelError
from assoc.lm.requests import Choice, ChoiceRequest, Reply

#: How a chat model's ``choice`` is read: the reply as written (``reply``) or the top log-probabilities of
#: its first token (``top_logprobs``).
CHOICE_MEASURES = ("reply", "top_logprobs")
#: Where the measure is read, in the words of a Choice's reason.
REASON = "top log-probabilities of the first reply token (choice_measure=top_logprobs)"


def top_logprobs_params(n: int) -> dict[str, Any]:
    """The parameters that ask a chat endpoint for the ``n`` most likely tokens at every reply position."""
    return {"logprobs": True, "top_logprobs": int(n)}


def check_labels(requests: Sequence[ChoiceRequest], model: str) -> None:
    """Refuse, in one line, a choice request without labels: the measure reads the labels' log-probabilities."""
    for request in requests:
        if not request.labels:
            raise ModelError(
                f"chat model {model!r}: choice_measure=top_logprobs reads the log-probability of each option's "
                f"label (A, B, C) as the reply's first token, and choice request {request.key!r} has no labels"
            )


def answer_position(response: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The top log-probabilities of the reply's first token in a chat completion (None when it has none)."""
    choices = response.get("choices") or []
    first = choices[0] if choices and isinstance(choices[0], Mapping) else {}
    logprobs = first.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    if not isinstance(content, list) or not content or not isinstance(content[0], Mapping):
        return None
    top = content[0].get("top_logprobs")
    if not isinstance(top, list) or not top:
        return None
    return [entry for entry in top if isinstance(entry, Mapping)]


def label_log_probs(top: Sequence[Mapping[str, Any]], labels: Sequence[str]) -> list[float]:
    """Each label's log-probability among ``top`` (its spellings summed in probability), ``NaN`` when absent."""
    out = []
    for label in labels:
        found = [
            float(entry["logprob"])
            for entry in top
            if isinstance(entry.get("token"), str)
            and entry["token"].strip() == label
            and isinstance(entry.get("logprob"), (int, float))
        ]
        if not found:
            out.append(math.nan)
            continue
        peak = max(found)
        out.append(peak + math.log(math.fsum(math.exp(v - peak) for v in found)))
    return out


def choice_from_top_logprobs(request: ChoiceRequest, reply: Reply, model: str) -> Choice:
    """The option whose label is the most likely first reply token (module docstring).

    A reply without an answer keeps its status; a reply without top log-probabilities is refused in
    one line (:class:`~assoc.errors.ModelError`): the endpoint does not give them, and reading the reply
    instead would be another measure.
    """
    if reply.status == "failed" or (reply.text is None and not reply.raw):
        return Choice(None, "failed", reply=reply.text or "", reason=reply.reason, response_id=reply.response_id)
    top = answer_position(reply.raw)
    if top is None:
        raise ModelError(
            f"chat model {model!r}: the endpoint returned no top log-probabilities of the reply "
            "(choices[0].logprobs.content[0].top_logprobs) although logprobs=true and top_logprobs were sent: "
            "choice_measure=top_logprobs needs an endpoint that gives them (assoc never reads the reply instead)"
        )
    scores = label_log_probs(top, request.labels)
    present = [i for i, score in enumerate(scores) if not math.isnan(score)]
    if not present:
        return Choice(
            None,
            "no_label",
            tuple(scores),
            reply=reply.text or "",
            reason=f"none of the labels {', '.join(request.labels)} is among the {len(top)} most likely first tokens",
            response_id=reply.response_id,
        )
    chosen = max(present, key=lambda i: (scores[i], -i))
    return Choice(chosen, "ok", tuple(scores), reply=reply.text or "", reason=REASON, response_id=reply.response_id)

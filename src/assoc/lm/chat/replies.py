"""Stored chat responses as :class:`~assoc.lm.requests.Reply` objects, and what a run's report says of its requests.

:func:`reply_of` reads a stored entry (the raw body as the server sent it); :class:`Sending`
gathers what a run sent and received (the engine's :class:`~assoc.lm.remote.engine.SendReport`, how
many requests came from the cache, token usage per model, the servers' system fingerprints) and
:meth:`Sending.record` writes it in the run report's words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assoc.lm.remote.chat_completions import finish_reason, model_refusal, reply_text
from assoc.lm.remote.engine import SendReport
from assoc.lm.requests import OK, Reply


class ChatRefusalWarning(UserWarning):
    """Some replies were refusals or bias warnings only (no items, no rating, no option)."""


class ChatReplyWarning(UserWarning):
    """Some replies could not be read in full (another number of items, no rating, no option), or failed."""


#: Token counts summed per model in a run report.
USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")


def reply_of(key: str, entry: Mapping[str, Any]) -> Reply:
    """The :class:`~assoc.lm.requests.Reply` of a stored entry (its ``response`` is the raw body).

    ``status``: ``refusal`` when the server refused with no text (OpenAI's ``message.refusal``),
    ``content_filter`` when its content filter stopped the reply, ``truncated`` when it was cut at
    ``max_tokens`` (the text is kept), else ``ok``; ``reason`` holds the server's refusal text.
    """
    raw = entry["response"]
    text = reply_text(raw)
    finish = finish_reason(raw) or ""
    refusal = model_refusal(raw)
    status = OK
    if finish == "content_filter":
        status = "content_filter"
    elif refusal is not None and not (text or "").strip():
        status = "refusal"
    elif finish == "length":
        status = "truncated"
    usage = raw.get("usage") or {}
    return Reply(
        text,
        status=status,
        finish_reason=finish,
        response_id=key,
        usage={k: int(v) for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)},
        reason=(refusal or "") if status in ("refusal", "content_filter") else "",
        raw=raw,
    )


def failed_reply(key: str, failure: Mapping[str, Any] | None) -> Reply:
    """The :class:`~assoc.lm.requests.Reply` of a request without an answer (``failed``, or ``not sent``)."""
    if failure is None:
        return Reply(None, status="failed", response_id=key, reason="not sent")
    return Reply(None, status="failed", response_id=key, reason=f"{failure['reason']}: {failure['error']}")


def count_usage(usage: dict[str, dict[str, int]], fingerprints: set[str], model: str, response: Any) -> None:
    """Add one response's token counts to ``usage[model]`` and its system fingerprint to ``fingerprints``."""
    used = usage.setdefault(model, {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0})
    used["requests"] += 1
    for name in USAGE_FIELDS:
        used[name] += int((response.get("usage") or {}).get(name) or 0)
    if response.get("system_fingerprint"):
        fingerprints.add(str(response["system_fingerprint"]))


@dataclass
class Sending:
    """What a run sent and received: the engine's report, requests asked and from the cache, usage, fingerprints.

    Additive (:meth:`add`): a model kind keeps one for every call it answers, a run report combines
    the ones of its units.
    """

    requests: int = 0
    from_cache: int = 0
    report: SendReport = field(default_factory=SendReport)
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    fingerprints: set[str] = field(default_factory=set)

    def count(self, model: str, responses: Iterable[Mapping[str, Any]]) -> None:
        """Count the token usage and fingerprints of ``model``'s stored ``responses`` (raw bodies)."""
        for response in responses:
            count_usage(self.usage, self.fingerprints, model, response)

    def add(self, other: Sending) -> None:
        """Add another's counts to this one."""
        self.requests += other.requests
        self.from_cache += other.from_cache
        self.report.add(other.report)
        for model, used in other.usage.items():
            mine = self.usage.setdefault(model, dict.fromkeys(("requests", *USAGE_FIELDS), 0))
            for name, n in used.items():
                mine[name] = mine.get(name, 0) + n
        self.fingerprints |= other.fingerprints

    def record(self, cache_dir: str | None, *, leave_out: Iterable[str] = ()) -> dict[str, Any]:
        """The run report's account of the requests (entries in ``leave_out`` left out).

        ``requests``, ``from_cache``, ``sent`` (attempts, retries included), ``received``, ``retries``,
        ``retry_reasons``, ``failed``, ``seconds_sending``, ``seconds_waiting_to_retry``, ``cache_dir``,
        ``usage`` (tokens per model) and ``system_fingerprints``.
        """
        report = self.report
        out: dict[str, Any] = {
            "requests": self.requests,
            "from_cache": self.from_cache,
            "sent": report.sent,
            "received": report.received,
            "retries": report.retries,
            "retry_reasons": report.retry_reasons,
            "failed": report.failed,
            "seconds_sending": round(report.seconds, 3),
            "seconds_waiting_to_retry": round(report.waited, 3),
            "cache_dir": cache_dir,
            "usage": self.usage,
            "system_fingerprints": sorted(self.fingerprints),
        }
        for name in leave_out:
            out.pop(name, None)
        return out

"""The ``chat_listing`` scorer: chat LLMs list characteristics of social groups and rate them.

Nicolas & Caliskan (2024): per term, a listing request ("List 50 characteristics that you believe
most Americans would think describe [target]. Use single words.") and a rating request (1-5,
"how does American society view people who are [target]?"), with the paper's system prompt, at
temperature 0. See ``docs/chat.md``.
"""

from __future__ import annotations

import math
import os
import socket
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from assoc import Option, OptionError, Scorer, StimuliError, non_negative, positive, set_run_report

from . import prompts
from .parsing import REFUSAL_PATTERNS, WARNING_PATTERNS, ReplyParser
from .store import ChatRequest, ResponseStore, model_refusal, public_endpoint, reply_text, safe_url

if TYPE_CHECKING:
    import pandas as pd

    from assoc import Stimuli

#: ``attribute_group`` of listing rows (the listed word is the ``attribute``).
LISTED = "listed"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
TASKS = ("listing", "rating", "both")


class ChatRefusalWarning(UserWarning):
    """Some replies were refusals or bias warnings only (no items or no rating)."""


class ChatReplyWarning(UserWarning):
    """Some replies had another number of items than asked, no parseable rating, or failed."""


def _prompt_check(option: str):
    def check(value: str) -> str:
        return prompts.resolve_prompt(option, value)

    check.__name__ = f"{option}_check"
    return check


def _base_url_check(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be an http(s) URL such as http://127.0.0.1:8000/v1, got {safe_url(value)!r}")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ValueError(f"has a bad port: {safe_url(value)!r}") from None
    return value


def _patterns_check(value: list[Any]) -> list[str]:
    import re

    for pattern in value:
        try:
            re.compile(str(pattern))
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
    return [str(p) for p in value]


def _scale_check(value: list[Any]) -> list[int]:
    if len(value) != 2:
        raise ValueError(f"must be two integers [lowest, highest], got {value!r}")
    low, high = (int(v) for v in value)
    if low >= high:
        raise ValueError(f"lowest must be below highest, got {value!r}")
    return [low, high]


def count_usage(usage: dict[str, dict[str, int]], fingerprints: set[str], model: str, response: Any) -> None:
    """Add one response's token counts to ``usage[model]`` and its system fingerprint to ``fingerprints``."""
    used = usage.setdefault(model, {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0})
    used["requests"] += 1
    for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
        used[name] += int((response.get("usage") or {}).get(name) or 0)
    if response.get("system_fingerprint"):
        fingerprints.add(str(response["system_fingerprint"]))


def sending_report(
    requests: Sequence[Any],
    report: Any,
    n_from_cache: int,
    store: Any,
    usage: dict[str, dict[str, int]],
    fingerprints: set[str],
    *,
    waited: bool,
) -> dict[str, Any]:
    """The run report's account of the requests: how many, from the cache, sent, retried, failed, tokens.

    ``waited``: include the seconds spent waiting to retry (``seconds_waiting_to_retry``).
    """
    out: dict[str, Any] = {
        "requests": len(requests),
        "from_cache": n_from_cache,
        "sent": report.sent,
        "received": report.received,
        "retries": report.retries,
        "retry_reasons": report.retry_reasons,
        "failed": report.failed,
        "seconds_sending": round(report.seconds, 3),
    }
    if waited:
        out["seconds_waiting_to_retry"] = round(report.waited, 3)
    out.update({"cache_dir": store.root, "usage": usage, "system_fingerprints": sorted(fingerprints)})
    return out


class ChatListingScorer(Scorer):
    """Listing and rating of social-group terms by chat models (see ``docs/chat.md``)."""

    name = "chat_listing"
    description = (
        "A chat LLM lists characteristics of each target term (one row per listed word, for "
        "`stereotype`) and/or rates how society views it (1-5); OpenAI API, any compatible server, or "
        "a local transformers chat model."
    )
    citation = (
        "Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable "
        "components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493. "
        "doi:10.1093/pnasnexus/pgae493"
    )
    measure = "listed"
    default_models = ()
    requires_models = True
    extra_columns = {
        "design": "the stimuli design of the term",
        "task": "listing or rating",
        "rank": "listing: position of the item in the reply (1 = first)",
        "raw_item": "listing: the item as the model wrote it (list marker removed)",
        "n_listed": "listing: number of distinct items in the reply",
        "sample": "which repetition of the request (0-based)",
        "response_id": "key of the stored raw response (assoc_chat_listing.responses())",
        "rating_status": "rating: ok, refusal, no_number or ambiguous",
        "rating_note": "rating: how the value was read, or why there is none (the two answers of an ambiguous reply)",
        "raw_reply": "rating: the reply as the model wrote it",
        "estimated_tokens": "dry run: tokens the request is expected to use (for tokens_per_minute and cost)",
    }
    options = (
        Option(
            "task",
            str,
            "listing",
            "listing (one row per listed item), rating (one row per term and sample), "
            "or both (filter on measure before `stereotype`)",
            choices=TASKS,
        ),
        Option(
            "system_prompt",
            str,
            "paper",
            "system message: 'paper' (the paper's), your text, or '' for none",
            check=_prompt_check("system_prompt"),
        ),
        Option(
            "listing_prompt",
            str,
            "paper",
            "listing prompt: 'paper', 'robustness', or your text with {target} "
            "(and optionally {n_items}); the paper's [target] spelling is accepted",
            check=_prompt_check("listing_prompt"),
        ),
        Option(
            "rating_prompt",
            str,
            "paper",
            "rating prompt: 'paper' or your text with {target}",
            check=_prompt_check("rating_prompt"),
        ),
        Option(
            "n_items", int, 50, "number of characteristics asked for ({n_items} in the listing prompt)", check=positive
        ),
        Option("rating_scale", list, [1, 5], "lowest and highest point of the rating scale", check=_scale_check),
        Option(
            "samples",
            int,
            1,
            "requests per term and task (repetitions; each is its own cached request)",
            check=positive,
        ),
        Option("temperature", float, 0.0, "sampling temperature (the paper: 0)", check=non_negative),
        Option("seed", int, None, "the API's seed parameter (sample i sends seed + i); none is sent when empty"),
        Option("max_tokens", int, None, "cap on the reply's tokens (none sent when empty)", check=positive),
        Option(
            "backend",
            str,
            "openai",
            "openai: the OpenAI API or any compatible server; transformers: a local "
            "Hugging Face chat model (the model is a Hub id or directory)",
            choices=("openai", "transformers"),
        ),
        Option(
            "base_url",
            str,
            None,
            "OpenAI-compatible endpoint (default $OPENAI_BASE_URL, else the OpenAI API)",
            check=_base_url_check,
        ),
        Option(
            "api_key_env",
            str,
            "OPENAI_API_KEY",
            "environment variable holding the API key (never an option value: keys are read from the environment only)",
        ),
        Option("concurrency", int, 16, "most requests in flight at once", check=positive),
        Option(
            "timeout",
            float,
            60.0,
            "seconds to wait for a reply once the request is sent (the read timeout; a chat completion is "
            "generated before its first byte)",
            check=positive,
        ),
        Option("connect_timeout", float, 10.0, "seconds to wait for a connection to the server", check=positive),
        Option(
            "max_retries",
            int,
            6,
            "retries of a request after 429, 408, 409, 5xx or dropped connections (and the most attempts of any "
            "request, less one)",
            check=non_negative,
        ),
        Option(
            "timeout_retries",
            int,
            1,
            "retries of a request that timed out; one more timeout stops the run (a server that never answers)",
            check=non_negative,
        ),
        Option(
            "reply_retries",
            int,
            2,
            "retries of a request whose 200 reply is not an answer (empty, an HTML page, a JSON error); "
            "then that request is recorded as failed",
            check=non_negative,
        ),
        Option(
            "backoff_base",
            float,
            1.0,
            "first backoff in seconds (doubles per retry, with jitter) when the server sends no Retry-After",
            check=positive,
        ),
        Option("backoff_max", float, 60.0, "longest backoff in seconds", check=positive),
        Option("requests_per_minute", float, None, "rate limit on requests (none when empty)", check=positive),
        Option("tokens_per_minute", float, None, "rate limit on estimated tokens (none when empty)", check=positive),
        Option(
            "refusal_patterns",
            list,
            None,
            "regular expressions of refusals (default: the documented list, "
            "assoc_chat_listing.parsing.REFUSAL_PATTERNS)",
            check=_patterns_check,
        ),
        Option(
            "warning_patterns",
            list,
            None,
            "regular expressions of bias warnings removed from replies "
            "(default: assoc_chat_listing.parsing.WARNING_PATTERNS)",
            check=_patterns_check,
        ),
        Option("cache", bool, True, "store raw responses on disk and reuse them (resume; offline re-runs)"),
        Option("cache_dir", str, None, "cache root (default: $ASSOC_CACHE_DIR or the user cache directory)"),
        Option("offline", bool, False, "use stored responses only; a request that is not stored is an error"),
        Option(
            "dry_run",
            bool,
            False,
            "print how many requests the study needs (and how many are stored) and "
            "send none; returns the plan as a table",
        ),
        Option("batch_size", int, 8, "transformers backend: requests generated together", check=positive),
        Option("device", str, "auto", "transformers backend: cpu, cuda, cuda:N, mps or auto"),
    )

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        # Credentials written into base_url are sent but never kept where they could be stored or
        # printed: params (and so provenance and repr) hold the URL without them.
        self._base_url: str | None = self.params["base_url"]
        if self._base_url is not None:
            self.params["base_url"] = safe_url(self._base_url)

    # -- planning ----------------------------------------------------------------------------------

    def check_stimuli(self, stimuli: Stimuli) -> None:
        """Every design needs target groups: the terms to list and rate."""
        super().check_stimuli(stimuli)
        for design in stimuli:
            target, _ = design.embedding_groups()
            if not target:
                raise StimuliError(
                    f"chat_listing: design {design.name!r} has no target groups (the terms to list "
                    "and rate); give `target: {group: [term, ...]}`"
                )

    def endpoint(self) -> str:
        """The base URL requests go to (option, else $OPENAI_BASE_URL, else the OpenAI API), credentials included."""
        url = self._base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        try:
            return _base_url_check(url)
        except ValueError as exc:
            raise OptionError(f"OPENAI_BASE_URL {exc}") from None

    def templates(self) -> tuple[str, str, str]:
        """The system, listing and rating prompt texts (named prompts resolved)."""
        p = self.params
        return (
            prompts.resolve_prompt("system_prompt", p["system_prompt"]),
            prompts.resolve_prompt("listing_prompt", p["listing_prompt"]),
            prompts.resolve_prompt("rating_prompt", p["rating_prompt"]),
        )

    def build_requests(self, stimuli: Stimuli, models: Sequence[str]) -> list[ChatRequest]:
        """Every request the study needs, in order (models x designs x terms x tasks x samples)."""
        from .local import model_endpoint

        p = self.params
        tasks = ("listing", "rating") if p["task"] == "both" else (p["task"],)
        system, listing, rating = self.templates()
        out: list[ChatRequest] = []
        for model in models:
            if p["backend"] == "transformers":
                endpoint = model_endpoint(model, self.run_cache())
            else:
                endpoint = public_endpoint(self.endpoint())
            for design in stimuli:
                target, _ = design.embedding_groups()
                for group, terms in target.items():
                    for term in terms:
                        for task in tasks:
                            template = listing if task == "listing" else rating
                            user = prompts.fill(template, term, p["n_items"])
                            for sample in range(p["samples"]):
                                params: dict[str, Any] = {"temperature": p["temperature"]}
                                if p["max_tokens"] is not None:
                                    params["max_tokens"] = p["max_tokens"]
                                if p["seed"] is not None:
                                    params["seed"] = p["seed"] + sample
                                out.append(
                                    ChatRequest(
                                        backend=p["backend"],
                                        endpoint=endpoint,
                                        model=model,
                                        messages=tuple(prompts.messages(system, user)),
                                        params=params,
                                        sample=sample,
                                        task=task,
                                        design=design.name,
                                        target_group=group,
                                        target=term,
                                        prompt=template,
                                        extra={"n_items": p["n_items"]},
                                    )
                                )
        return out

    # -- checks before any request -----------------------------------------------------------------

    def api_key(self) -> str:
        """The API key from the environment; a clear error for a remote endpoint without one."""
        variable = self.params["api_key_env"]
        key = os.environ.get(variable, "").strip()
        url = self.endpoint()
        if key:
            return key
        if (urlsplit(url).hostname or "") in LOCAL_HOSTS:
            return "EMPTY"  # local servers (vLLM, llama.cpp, Ollama) accept any key
        raise OptionError(
            f"no API key for {public_endpoint(url)}: set the environment variable {variable} "
            f"(keys are read from the environment only; api_key_env names another variable)"
        )

    def check_reachable(self) -> None:
        """Open (and close) a TCP connection to the endpoint: an unreachable base_url fails before any request."""
        from .engine import ChatServiceError

        url = self.endpoint()
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            with socket.create_connection((parts.hostname, port), timeout=self.params["connect_timeout"]):
                pass
        except OSError as exc:
            raise ChatServiceError(
                f"cannot reach base_url {public_endpoint(url)} ({exc.strerror or exc}); is the "
                f"server running? (set base_url=... or OPENAI_BASE_URL)"
            ) from None

    # -- scoring -----------------------------------------------------------------------------------

    def score(self, stimuli: Stimuli, models: Sequence[str], *, progress: bool) -> pd.DataFrame:
        """Send (or take from the cache) every request of the study and parse the replies into a table."""
        from .engine import ChatServiceError, EngineSettings, RunReport, run_requests

        p = self.params
        requests = self.build_requests(stimuli, models)
        store = ResponseStore(p["cache_dir"], enabled=p["cache"])
        stored, n_corrupt = store.lookup(requests)
        unique: dict[str, ChatRequest] = {}
        for request in requests:
            if request.key not in stored:
                unique.setdefault(request.key, request)
        missing = list(unique.values())
        if n_corrupt:
            warnings.warn(
                f"chat_listing: {n_corrupt} stored response(s) were unreadable and will be requested again",
                ChatReplyWarning,
                stacklevel=2,
            )
        if p["dry_run"]:
            return self._dry_run(requests, stored, missing)
        if missing and p["offline"]:
            raise ChatServiceError(
                f"offline: {len(missing)} of {len(requests)} request(s) are not stored "
                f"(e.g. {missing[0].model} / {missing[0].target!r} / {missing[0].task}); "
                "run without offline=true to send them"
            )
        report = RunReport()
        if missing:
            if p["backend"] == "transformers":
                from .local import run_local

                for model in dict.fromkeys(r.model for r in missing):
                    run_local(
                        [r for r in missing if r.model == model],
                        store,
                        batch_size=p["batch_size"],
                        device=p["device"],
                        progress=progress,
                    )
            else:
                settings = EngineSettings(
                    base_url=self.endpoint(),
                    api_key=self.api_key(),
                    concurrency=p["concurrency"],
                    timeout=p["timeout"],
                    connect_timeout=p["connect_timeout"],
                    max_retries=p["max_retries"],
                    timeout_retries=p["timeout_retries"],
                    reply_retries=p["reply_retries"],
                    requests_per_minute=p["requests_per_minute"],
                    tokens_per_minute=p["tokens_per_minute"],
                    backoff_base=p["backoff_base"],
                    backoff_max=p["backoff_max"],
                )
                self.check_reachable()
                report = run_requests(missing, settings, store, progress=progress, seed=p["seed"] or 0)
            stored, _ = store.lookup(requests)
        return self._table(requests, stored, report, n_from_cache=len(requests) - len(missing), store=store)

    def _dry_run(self, requests: list[ChatRequest], stored: dict[str, Any], missing: list[ChatRequest]) -> pd.DataFrame:
        from assoc import from_records

        from .engine import estimate_tokens

        rows = [
            {
                "design": r.design,
                "model": r.model,
                "context": r.prompt,
                "target_group": r.target_group,
                "target": r.target,
                "task": r.task,
                "sample": r.sample,
                "response_id": r.key,
                "measure": "dry_run",
                "value": 0.0 if r.key in stored else 1.0,
                "estimated_tokens": estimate_tokens(r),
            }
            for r in requests
        ]
        tokens = sum(estimate_tokens(r) for r in missing)
        models = sorted({r.model for r in requests})
        print(
            f"{self.name} dry run: {len(requests)} request(s) for {len(models)} model(s) "
            f"({', '.join(models)}); {len(requests) - len(missing)} stored, {len(missing)} to send "
            f"(about {tokens:,.0f} tokens at most, estimated). Nothing was sent.",
            file=sys.stderr,
        )
        table = from_records(rows, scorer=self.name, measure="dry_run", extra_columns=["design", "task", "sample"])
        return set_run_report(
            table,
            {
                "dry_run": True,
                "requests": len(requests),
                "stored": len(requests) - len(missing),
                "to_send": len(missing),
                "estimated_tokens": tokens,
            },
        )

    def _table(
        self,
        requests: list[ChatRequest],
        stored: dict[str, Any],
        report: Any,
        *,
        n_from_cache: int,
        store: ResponseStore,
    ) -> pd.DataFrame:
        from assoc import from_records

        p = self.params
        parser = ReplyParser(
            p["refusal_patterns"] if p["refusal_patterns"] is not None else REFUSAL_PATTERNS,
            p["warning_patterns"] if p["warning_patterns"] is not None else WARNING_PATTERNS,
            scale=tuple(p["rating_scale"]),
        )
        rows: list[dict[str, Any]] = []
        usage: dict[str, dict[str, int]] = {}
        refusals, off_count, rating_problems, missing, truncated, hedged = [], [], [], [], [], []
        dropped: list[dict[str, Any]] = []  # every line of a listing reply that gave no item, and why
        fingerprints: set[str] = set()
        n_duplicates = 0
        failures = {f["key"]: f for f in report.failed}
        for request in requests:
            entry = stored.get(request.key)
            if entry is None:
                failure = failures.get(request.key)
                missing.append(
                    {
                        "model": request.model,
                        "target": request.target,
                        "task": request.task,
                        "sample": request.sample,
                        "response_id": request.key,
                        "failed": failure is not None,
                        "reason": failure["reason"] if failure else "not sent",
                        "error": failure["error"] if failure else "",
                    }
                )
                continue
            response = entry["response"]
            count_usage(usage, fingerprints, request.model, response)
            choice = (response.get("choices") or [{}])[0]
            text = reply_text(response)
            where = {
                "model": request.model,
                "target": request.target,
                "sample": request.sample,
                "task": request.task,
                "response_id": request.key,
            }
            if choice.get("finish_reason") == "length":
                truncated.append(where)
            base = {
                "design": request.design,
                "model": request.model,
                "context": request.prompt,
                "target_group": request.target_group,
                "target": request.target,
                "task": request.task,
                "sample": request.sample,
                "response_id": request.key,
            }
            server_refusal = model_refusal(response) if not (text or "").strip() else None
            if request.task == "rating":
                rating = parser.read_rating(text)
                value, status, note = rating.value, rating.status, rating.reason
                if server_refusal is not None or choice.get("finish_reason") == "content_filter":
                    value, status, note = math.nan, "refusal", "the server refused"
                    text = text or server_refusal
                if status == "refusal":
                    refusals.append({**where, "text": (text or "")[:200]})
                elif status != "ok":
                    rating_problems.append({**where, "status": status, "reason": note, "text": (text or "")[:200]})
                rows.append(
                    {
                        **base,
                        "attribute_group": "",
                        "attribute": "",
                        "measure": "rating",
                        "value": value,
                        "rating_status": status,
                        "rating_note": note,
                        "raw_reply": text or "",
                    }
                )
                continue
            listing = parser.parse_listing(text)
            if (server_refusal is not None or choice.get("finish_reason") == "content_filter") and not listing.items:
                listing.refusal = True
                listing.refusal_text = listing.refusal_text or server_refusal or ""
            n_duplicates += listing.n_duplicates
            dropped.extend({**where, "line": line[:300], "reason": reason} for line, reason in listing.dropped)
            if listing.hedge and listing.items:
                hedged.append({**where, "text": " / ".join(listing.hedge)[:300]})
            if listing.status == "refusal":
                refusals.append({**where, "text": (listing.refusal_text or text or "")[:200]})
                continue
            if listing.status == "empty":
                off_count.append({**where, "n_listed": 0, "text": (text or "")[:200]})
                continue
            if len(listing.items) != p["n_items"]:
                off_count.append({**where, "n_listed": len(listing.items)})
            for item in listing.items:
                rows.append(
                    {
                        **base,
                        "attribute_group": LISTED,
                        "attribute": item.attribute,
                        "measure": "listed",
                        "value": 1.0,
                        "rank": item.rank,
                        "raw_item": item.raw_item,
                        "n_listed": len(listing.items),
                    }
                )
        self._warn(refusals, off_count, rating_problems, missing, truncated)
        columns = ["design", "task", "rank", "raw_item", "n_listed", "sample", "response_id"]
        if any(r.task == "rating" for r in requests):
            columns += ["rating_status", "rating_note", "raw_reply"]
        table = from_records(rows, scorer=self.name, extra_columns=columns)
        for count in ("rank", "n_listed"):
            # counts are integers; rating rows have none (pandas would make the column float: rank 1.0)
            if count in table.columns:
                table[count] = table[count].astype("Int64")
        run_report = {
            "backend": p["backend"],
            "endpoint": safe_url(self.endpoint()) if p["backend"] == "openai" else "local",
            "prompts": dict(
                zip(("system", "listing", "rating"), self.templates()),
                combination="one conversation per request: [system, user]",
            ),
            **sending_report(requests, report, n_from_cache, store, usage, fingerprints, waited=True),
            "n_refusals": len(refusals),
            "refusals": refusals,
            "n_replies_off_count": len(off_count),
            "replies_off_count": off_count,
            "n_duplicates_removed": n_duplicates,
            "n_hedged": len(hedged),
            "hedged": hedged,
            "n_dropped_lines": len(dropped),
            "dropped_lines": dropped,
            "rating_problems": rating_problems,
            "truncated": truncated,
            "missing": missing,
            "n_unanswered": len(missing),
            "incomplete": self._incomplete(missing, len(requests)),
        }
        return set_run_report(table, run_report)

    @staticmethod
    def _incomplete(missing: list[dict[str, Any]], n_requests: int) -> str:
        """One line on the requests without an answer (``""`` when every request has one).

        ``assoc score`` prints it and exits with status 3 (the table is written with the rows there are).
        """
        if not missing:
            return ""
        reasons: dict[str, int] = {}
        for item in missing:
            reasons[item["reason"]] = reasons.get(item["reason"], 0) + 1
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
        return (
            f"chat_listing: {len(missing)} of {n_requests} request(s) have no answer ({why}) and no rows in the "
            f"table; details in the run report's 'missing'; run the same command again to retry them"
        )

    def _warn(
        self,
        refusals: list[dict[str, Any]],
        off_count: list[dict[str, Any]],
        rating_problems: list[dict[str, Any]],
        missing: list[dict[str, Any]],
        truncated: list[dict[str, Any]],
    ) -> None:
        def names(items: list[dict[str, Any]]) -> str:
            # One entry per model, term and task (a term's listing and rating, or its samples, are
            # several replies): each named once, with the task and how many replies it stands for.
            counts: dict[tuple[str, str, str], int] = {}
            for i in items:
                key = (str(i["model"]), str(i["target"]), str(i.get("task", "")))
                counts[key] = counts.get(key, 0) + 1
            entries = [
                f"{model}/{target!r}"
                + (f" ({task}{f' x{n}' if n > 1 else ''})" if task else (f" x{n}" if n > 1 else ""))
                for (model, target, task), n in counts.items()
            ]
            return ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")

        if refusals:
            warnings.warn(
                f"chat_listing: {len(refusals)} refusal(s) or warning-only repl(y/ies), recorded with no "
                f"items/rating: {names(refusals)} (details in the table's provenance)",
                ChatRefusalWarning,
                stacklevel=3,
            )
        if off_count:
            warnings.warn(
                f"chat_listing: {len(off_count)} listing repl(y/ies) with another number of items than "
                f"the {self.params['n_items']} asked for (kept): {names(off_count)}",
                ChatReplyWarning,
                stacklevel=3,
            )
        if rating_problems:
            warnings.warn(
                f"chat_listing: {len(rating_problems)} rating repl(y/ies) without a number on the scale "
                f"(value NaN, reply kept in raw_reply): {names(rating_problems)}",
                ChatReplyWarning,
                stacklevel=3,
            )
        if truncated:
            warnings.warn(
                f"chat_listing: {len(truncated)} repl(y/ies) cut at max_tokens: {names(truncated)}",
                ChatReplyWarning,
                stacklevel=3,
            )
        if missing:
            warnings.warn(
                f"chat_listing: {len(missing)} request(s) failed and have no rows: {names(missing)}",
                ChatReplyWarning,
                stacklevel=3,
            )

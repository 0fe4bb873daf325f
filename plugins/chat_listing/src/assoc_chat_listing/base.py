"""The base of the chat scorers: requests planned, answered (from the cache, else sent) and read into one table.

Every chat scorer (``chat_listing``, ``chat_word_association``) is a :class:`ChatScorer`:
it builds its requests (:meth:`ChatScorer.build_requests`, :class:`PlannedRequest`: the chat request
and what it is for), and reads each reply with its :class:`ReplyReader` (the per-reply hook: the
listing and rating parse, the word-association parse, the BBQ choice). Everything else is written
once, here: the options of the model and of sending, the credentials kept out of the provenance,
the response cache and resume, the dry run, the offline mode, and the table with its run report
(what was sent, from the cache, retried and failed; token usage; the requests without an answer).
Requests go through the core's chat engine (:func:`assoc.lm.plan_chat_requests`,
:func:`assoc.lm.fetch_chat_replies`: the ``openai`` provider sends them concurrently, the
``transformers`` provider generates them locally), all models of a run in one pool.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from assoc import Option, Scorer, positive, set_run_report
from assoc.lm import (
    ENDPOINT_OPTIONS,
    GENERATION_OPTIONS,
    LOCAL_CHAT_OPTIONS,
    PROVIDER_OPTION,
    RESPONSE_CACHE_OPTIONS,
    ChatReplyWarning,
    ChatRequest,
    ChatRuntime,
    ChatSending,
    ResponseStore,
    SendReport,
    chat_reply,
    fetch_chat_replies,
    open_chat_runtime,
    plan_chat_requests,
    public_endpoint,
    refusal_matchers,
    resolve_base_url,
    safe_url,
)

from . import prompts

if TYPE_CHECKING:
    import pandas as pd

    from assoc import Stimuli
    from assoc.lm import Reply

#: The sampling options of every chat scorer (``temperature``, ``seed``, ``max_tokens``), by name.
SAMPLING = {option.name: option for option in GENERATION_OPTIONS}
SAMPLES_OPTION = Option(
    "samples", int, 1, "requests per term and task (repetitions; each is its own cached request)", check=positive
)
DRY_RUN_OPTION = Option(
    "dry_run",
    bool,
    False,
    "print how many requests the study needs (and how many are stored) and send none; returns the plan as a table",
)
#: What every chat scorer declares after its own options: the runtime, the endpoint, the cache, the local model.
SENDING_OPTIONS: tuple[Option, ...] = (
    PROVIDER_OPTION,
    *ENDPOINT_OPTIONS,
    *RESPONSE_CACHE_OPTIONS,
    DRY_RUN_OPTION,
    *LOCAL_CHAT_OPTIONS,
)


@dataclass(frozen=True)
class PlannedRequest(ChatRequest):
    """A chat request of a scorer and what it is for: task, design, target group and term, prompt template.

    ``extra`` holds what a scorer's reader needs besides (the word-association draw, the BBQ example);
    its ``n_items`` is how many items the reply lists (four tokens each, for the tokens-per-minute limit).
    """

    task: str = ""
    design: str = ""
    target_group: str = ""
    target: str = ""
    prompt: str = ""  # the template, for the table's context column
    extra: Mapping[str, Any] = field(default_factory=dict)

    def about(self) -> dict[str, Any]:
        """The term and task (in the record of a failed request)."""
        return {"target": self.target, "task": self.task}

    def label(self) -> str:
        """Model, term and task."""
        return f"{self.model} / {self.target!r} / {self.task}"

    def expected_completion_tokens(self) -> float:
        """``max_tokens`` when sent, else four tokens per item the reply lists (50 when the scorer says nothing)."""
        return float(self.params.get("max_tokens") or 4 * int(self.extra.get("n_items", 50) or 50))


class ReplyReader:
    """How a chat scorer reads its replies (the per-reply hook), with what it gathers for the run report.

    One reader reads one run: :meth:`read` turns a reply into rows (and notes its problems),
    :meth:`unanswered` gives the rows of a request without an answer, :meth:`warn` says what went
    wrong, :meth:`head` and :meth:`tail` are the scorer's entries of the run report (before and
    after the account of the requests), :meth:`columns` the table's extra columns.
    """

    def __init__(self, scorer: ChatScorer, requests: Sequence[PlannedRequest]):
        self.scorer = scorer
        self.params = scorer.params
        self.requests = requests
        #: The scorer's refusal patterns (its ``refusal_patterns`` option, else the documented list), compiled.
        self.refusal = refusal_matchers(self.params.get("refusal_patterns"))

    def columns(self) -> list[str]:
        """The table's extra columns."""
        return []

    def head(self) -> dict[str, Any]:
        """Run-report entries after ``backend`` and ``endpoint`` (the prompts)."""
        return {}

    def identify(self, request: PlannedRequest) -> dict[str, Any]:
        """What names a request in the run report's ``missing`` (between its model and its sample)."""
        return {"target": request.target, "task": request.task}

    def read(self, request: PlannedRequest, reply: Reply) -> list[dict[str, Any]]:
        """The rows of one answered request."""
        raise NotImplementedError

    def unanswered(self, request: PlannedRequest, reason: str) -> list[dict[str, Any]]:
        """The rows of a request without an answer (``reason``: why); none by default."""
        return []

    def finish(self, table: pd.DataFrame) -> None:
        """Adjust the finished table in place (column types)."""

    def tail(self) -> dict[str, Any]:
        """Run-report entries after the account of the requests, before ``missing``."""
        return {}

    def warn(self, missing: list[dict[str, Any]], n_requests: int) -> None:
        """Warn about what went wrong in this run (``missing``: the requests without an answer)."""


class ChatScorer(Scorer):
    """Base of the chat scorers (module docstring): subclasses build requests and read replies."""

    default_models = ()
    requires_models = True
    #: How this scorer reads its replies (the per-reply hook).
    reader_class: ClassVar[type[ReplyReader]] = ReplyReader
    #: How the run report shows the endpoint: ``"safe"`` (other query parameters kept) or ``"public"`` (bare).
    report_endpoint: ClassVar[str] = "public"
    #: Entries of the account of the requests that this scorer's run report leaves out.
    report_leaves_out: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        # Credentials written into base_url are sent but never kept where they could be stored or
        # printed: params (and so provenance and repr) hold the URL without them.
        self._base_url: str | None = self.params["base_url"]
        if self._base_url is not None:
            self.params["base_url"] = safe_url(self._base_url)

    # -- what subclasses write ---------------------------------------------------------------------

    def build_requests(self, stimuli: Stimuli, models: Sequence[str]) -> list[PlannedRequest]:
        """Every request the study needs, in order."""
        raise NotImplementedError

    def reader(self, requests: Sequence[PlannedRequest]) -> ReplyReader:
        """The reader of this run's replies (an instance of :attr:`reader_class`)."""
        return self.reader_class(self, requests)

    # -- requests ----------------------------------------------------------------------------------

    def runtime(self) -> ChatRuntime:
        """What answers: the ``openai`` endpoint (credentials included) or the local ``transformers`` model."""
        return open_chat_runtime({**self.params, "base_url": self._base_url}, self.run_cache())

    def endpoint(self) -> str:
        """The base URL requests go to (option, else $OPENAI_BASE_URL, else the OpenAI API), credentials included."""
        return resolve_base_url(self._base_url)

    def shown_endpoint(self) -> str:
        """The endpoint in the run report: the base URL without credentials, or ``local``."""
        if self.params["provider"] != "openai":
            return "local"
        return safe_url(self.endpoint()) if self.report_endpoint == "safe" else public_endpoint(self.endpoint())

    def sampling(self, sample: int) -> dict[str, Any]:
        """The sampling parameters sent: temperature (when set), max_tokens when given, seed + sample when given."""
        p = self.params
        params: dict[str, Any] = {}
        if p["temperature"] is not None:
            params["temperature"] = p["temperature"]
        if p["max_tokens"] is not None:
            params["max_tokens"] = p["max_tokens"]
        if p["seed"] is not None:
            params["seed"] = p["seed"] + sample
        return params

    def request(
        self, runtime: ChatRuntime, model: str, system: str, user: str, sample: int, **about: Any
    ) -> PlannedRequest:
        """The request of ``model`` for a system and a user message (:func:`prompts.messages`), and what it is for."""
        return PlannedRequest(
            backend=runtime.provider,
            endpoint=runtime.endpoint(model),
            model=model,
            messages=tuple(prompts.messages(system, user)),
            params=self.sampling(sample),
            sample=sample,
            **about,
        )

    # -- scoring -----------------------------------------------------------------------------------

    def score(self, stimuli: Stimuli, models: Sequence[str], *, progress: bool) -> pd.DataFrame:
        """Send (or take from the cache) every request of the study and read the replies into a table."""
        p = self.params
        requests = self.build_requests(stimuli, models)
        store = ResponseStore(p["cache_dir"], enabled=p["cache"])
        planned = plan_chat_requests(requests, store)
        if planned.n_corrupt:
            warnings.warn(
                f"chat_listing: {planned.n_corrupt} stored response(s) were unreadable and will be requested again",
                ChatReplyWarning,
                stacklevel=2,
            )
        if p["dry_run"]:
            return self._dry_run(requests, planned.stored, planned.missing)
        report = fetch_chat_replies(planned, self.runtime(), store, offline=p["offline"], progress=progress)
        return self._table(requests, planned.stored, report, n_from_cache=planned.n_from_cache, store=store)

    def _dry_run(
        self, requests: Sequence[PlannedRequest], stored: Mapping[str, Any], missing: Sequence[ChatRequest]
    ) -> pd.DataFrame:
        from assoc import from_records

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
                "estimated_tokens": r.estimated_tokens(),
            }
            for r in requests
        ]
        tokens = sum(r.estimated_tokens() for r in missing)
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
        requests: Sequence[PlannedRequest],
        stored: Mapping[str, Any],
        report: SendReport,
        *,
        n_from_cache: int,
        store: ResponseStore,
    ) -> pd.DataFrame:
        """The one chat table: each reply read by the scorer's reader, and the run report."""
        from assoc import from_records

        reader = self.reader(requests)
        sending = ChatSending(requests=len(requests), from_cache=n_from_cache, report=report)
        failures = {failure["key"]: failure for failure in report.failed}
        rows: list[dict[str, Any]] = []
        missing: list[dict[str, Any]] = []
        for request in requests:
            entry = stored.get(request.key)
            if entry is None:
                failure = failures.get(request.key)
                reason = str(failure["reason"]) if failure else "not sent"
                missing.append(
                    {"model": request.model, **reader.identify(request), "sample": request.sample,
                     "response_id": request.key, "failed": failure is not None, "reason": reason,
                     "error": str(failure["error"]) if failure else ""}
                )  # fmt: skip
                rows.extend(reader.unanswered(request, reason))
                continue
            sending.count(request.model, [entry["response"]])
            rows.extend(reader.read(request, chat_reply(request.key, entry)))
        reader.warn(missing, len(requests))
        table = from_records(rows, scorer=self.name, extra_columns=reader.columns())
        reader.finish(table)
        run_report = {
            "backend": self.params["provider"],
            "endpoint": self.shown_endpoint(),
            **reader.head(),
            **sending.record(store.root, leave_out=self.report_leaves_out),
            **reader.tail(),
            "missing": missing,
            "n_unanswered": len(missing),
            "incomplete": incomplete(missing, len(requests)),
        }
        return set_run_report(table, run_report)


def incomplete(missing: list[dict[str, Any]], n_requests: int) -> str:
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

"""The base of the chat scorers: an ``LMScorer`` whose work units send ``generate`` requests to the chat kind.

Every chat scorer (``chat_listing``, ``chat_word_association``, ``chat_bbq``) is a :class:`ChatScorer`:
it builds its requests (:meth:`ChatScorer.build_requests`, :class:`PlannedRequest`: the chat request
and what it is for), and reads each reply with its :class:`ReplyReader` (the per-reply hook: the
listing and rating parse, the word-association parse, the BBQ choice). Everything else is written
once, here, on :class:`assoc.lm.LMScorer`:

* **work units**: :meth:`ChatScorer.plan` checks every model before any work (its kind: a bare name
  is a chat model, ``chat:<model>`` too), builds the study's requests and cuts each model's into units
  of ``unit_size`` requests (default 512, so the engine keeps ``concurrency`` requests of a unit in
  flight nearly all the time); a unit's payload is its requests (key, messages, sampling parameters,
  sample, what each is for);
* **the one loader**: :meth:`ChatScorer.load_worker` opens the model with
  :func:`assoc.lm.open_model` as an :class:`assoc.lm.ChatModel` (``provider=openai``: the endpoint;
  ``transformers``: a local causal LM through the same loader), and :meth:`ChatScorer.run_unit` sends
  the unit's ``generate`` requests through it: stored replies come from the response store, the
  others are sent concurrently and stored on arrival;
* **the unit's rows are its replies** (one per request: the raw body as stored, or why there is
  none); a unit with a request that got no answer is not cached (:meth:`ChatScorer.unit_complete`),
  so the next run asks again; a finished unit comes from the unit cache;
* **one table**: :meth:`ChatScorer.merge_units` reads every reply of the study with the scorer's
  reader, in plan order, into the table (:meth:`ChatScorer._table`), and builds the run report from
  the replies (token usage, refusals, unparsed replies, ...) and from the units' reports
  (:meth:`ChatScorer.unit_report`: what this run sent, retried and failed); the dry run and the
  offline mode are decided in :meth:`ChatScorer.plan`, before any unit runs.

So the table, the run report, the warnings and every cache key are those of a run that sends every
request in one pool: they depend neither on ``unit_size`` nor on ``concurrency`` nor on the order in
which units run.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from assoc import Option, OptionError, PluginError, WorkUnit, positive, set_run_report
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
    GenerateRequest,
    LMScorer,
    LMWorker,
    ResponseStore,
    SendReport,
    chat_model_name,
    chat_reply,
    chat_spec,
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
    from assoc.lm import ChatModel, LanguageModel, Reply

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
#: The chat scorers' work unit: requests of one model (the engine keeps ``concurrency`` of them in flight).
UNIT_SIZE_OPTION = Option(
    "unit_size",
    int,
    512,
    "requests per work unit (of one model): the engine keeps `concurrency` of a unit's requests in flight, so "
    "keep it well above concurrency; finished units are cached and a resumed run starts after them",
    check=positive,
)
#: The model options' ``backend`` (what runs a local model's forward passes), as the chat kind reads it.
BACKEND_OPTION = Option(
    "backend",
    str,
    "torch",
    "what runs a local chat model (provider=transformers): PyTorch; the ONNX backends run masked LMs only "
    "(this option named the provider before: backend=openai/transformers still chooses it, deprecated)",
    choices=("torch",),
)
#: The model options' ``batch_tokens``: a likelihood model's forward batch; chat models batch by ``batch_size``.
BATCH_TOKENS_OPTION = Option(
    "batch_tokens",
    int,
    None,
    "a likelihood model's forward-batch token budget (the model options'); chat models do not read it: the "
    "transformers provider generates batch_size requests at once",
    check=positive,
)
#: What every chat scorer declares after its own options: the runtime, the endpoint, the caches, the model
#: options (the chat kind's: ``device``, ``dtype``, ``revision``, ``batch_size`` of the local provider).
SENDING_OPTIONS: tuple[Option, ...] = (
    PROVIDER_OPTION,
    *ENDPOINT_OPTIONS,
    *RESPONSE_CACHE_OPTIONS,
    DRY_RUN_OPTION,
    UNIT_SIZE_OPTION,
    *LOCAL_CHAT_OPTIONS,
    BACKEND_OPTION,
    BATCH_TOKENS_OPTION,
)
#: Options that change neither a request nor its reply (how requests travel, where things are stored,
#: the dry run): left out of the unit cache's key, so that a resumed run may change them.
_NOT_KEYED = {
    *(option.name for option in ENDPOINT_OPTIONS),
    "cache",
    "cache_dir",
    "dry_run",
    "unit_size",
    "batch_tokens",
    "api_key_env",
}
#: The options of the local provider's model, keyed only when it answers (``provider=transformers``).
_LOCAL_ONLY = {"device", "dtype", "revision", "batch_size", "backend"}


@dataclass(frozen=True)
class PlannedRequest(ChatRequest):
    """A chat request of a scorer and what it is for: task, design, target group and term, prompt template.

    ``model`` is the model's name as the endpoint knows it (``gpt-4o-mini`` for ``chat:gpt-4o-mini``),
    ``spec`` the model as the scorer was given it (the table's ``model`` column). ``extra`` holds what a
    scorer's reader needs besides (the word-association draw, the BBQ example); its ``n_items`` is how
    many items the reply lists (four tokens each, for the tokens-per-minute limit).
    """

    task: str = ""
    design: str = ""
    target_group: str = ""
    target: str = ""
    prompt: str = ""  # the template, for the table's context column
    extra: Mapping[str, Any] = field(default_factory=dict)
    spec: str = ""

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


class ChatScorer(LMScorer):
    """Base of the chat scorers (module docstring): subclasses build requests and read replies."""

    default_models = ()
    requires_models = True
    requests: ClassVar[frozenset[str]] = frozenset({"generate"})
    model_kinds: ClassVar[tuple[str, ...] | None] = ("chat",)
    default_kind: ClassVar[str | None] = "chat"
    #: How this scorer reads its replies (the per-reply hook).
    reader_class: ClassVar[type[ReplyReader]] = ReplyReader
    #: How the run report shows the endpoint: ``"safe"`` (other query parameters kept) or ``"public"`` (bare).
    report_endpoint: ClassVar[str] = "public"
    #: Entries of the account of the requests that this scorer's run report leaves out.
    report_leaves_out: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **options: Any) -> None:
        super().__init__(**_provider_from_backend(type(self).name, options))
        # Credentials written into base_url are sent but never kept where they could be stored or
        # printed: params (and so provenance and repr) hold the URL without them.
        self._base_url: str | None = self.params["base_url"]
        if self._base_url is not None:
            self.params["base_url"] = safe_url(self._base_url)
        self._planned: list[PlannedRequest] | None = None  # the study's requests, from plan() to merge_units()
        self._dry: tuple[dict[str, Any], list[ChatRequest]] | None = None  # a dry run's stored and missing requests

    def __getstate__(self) -> dict[str, Any]:
        """What travels to another process's worker: not the plan (units carry their requests)."""
        state = dict(self.__dict__)
        state["_planned"] = state["_dry"] = None
        return state

    # -- what subclasses write ---------------------------------------------------------------------

    def build_requests(self, stimuli: Stimuli, models: Sequence[str]) -> list[PlannedRequest]:
        """Every request the study needs, in order (model by model)."""
        raise NotImplementedError

    def reader(self, requests: Sequence[PlannedRequest]) -> ReplyReader:
        """The reader of this run's replies (an instance of :attr:`reader_class`)."""
        return self.reader_class(self, requests)

    # -- models ------------------------------------------------------------------------------------

    def kind_spec(self, model: str) -> str:
        """``model`` as the layer reads it: a bare name (an Ollama tag ``qwen2:7b`` too) is ``chat:<name>``."""
        return chat_spec(model)

    def model_kind(self, model: str) -> type[LanguageModel]:
        """The chat kind (a bare name is a chat model); another kind's prefix is refused in one line."""
        return super().model_kind(self.kind_spec(model))

    def check_models(self, models: Sequence[str]) -> None:
        """Every model before any work: its kind and the chat kind's checks (the endpoint, a local model's folder)."""
        super().check_models([self.kind_spec(model) for model in models])

    def model_fingerprint(self, model: str) -> str:
        """What answers: ``openai:<endpoint>:<model>``, or ``transformers:<fingerprint of the weights>``."""
        return self.model_kind(model).identify(self.kind_spec(model), self.params, self.run_cache())

    def local(self) -> bool:
        """Whether the models run in this process (``provider=transformers``)."""
        return bool(self.params["provider"] == "transformers")

    def describe_model(self, model: str) -> dict[str, Any]:
        """Kind and provider; the device a local model runs on (``auto`` resolved)."""
        record: dict[str, Any] = {"kind": self.model_kind(model).kind, "provider": self.params["provider"]}
        if self.local():
            record["device"] = self.resolved_device()
        return record

    def unit_options(self, model: str) -> dict[str, Any]:
        """The options in the unit cache's key: all but those that change neither a request nor its reply.

        A unit's payload holds its requests (their cache keys: endpoint, model, messages, sampling
        parameters, sample) and its rows are their replies, so how requests travel (the endpoint's
        options), where things are stored and the unit size are not keyed: a resumed run may change
        them and still read its finished units. The local model's options are keyed with
        ``provider=transformers`` only (``device`` as resolved).
        """
        options = {k: v for k, v in self.params.items() if k not in _NOT_KEYED}
        if self.local():
            options["device"] = self.resolved_device()
        else:
            options = {k: v for k, v in options.items() if k not in _LOCAL_ONLY}
        return options

    def unit_resources(self, model: str) -> dict[str, float]:
        """A GPU for a local model on CUDA, else one CPU (requests to an endpoint wait, they do not compute)."""
        if self.local() and self.resolved_device().startswith("cuda"):
            return {"GPU": 1.0, "CPU": 1.0}
        return {"CPU": 1.0}

    def open_options(self) -> dict[str, Any]:
        """The options the chat kind opens with: the base URL with its credentials, a local device resolved."""
        options = {**self.params, "base_url": self._base_url}
        if self.local():
            options["device"] = self.resolved_device()  # the driver's choice, the same in every worker
        return options

    # -- requests ----------------------------------------------------------------------------------

    def runtime(self) -> ChatRuntime:
        """What answers: the ``openai`` endpoint (credentials included) or the local ``transformers`` model."""
        return open_chat_runtime(self.open_options(), self.run_cache())

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
        """The request of ``model`` for a system and a user message (:func:`prompts.messages`), and what it is for.

        ``model`` is the spec the scorer was given; the request names the model as its endpoint knows it.
        """
        name = chat_model_name(self.kind_spec(model))
        return PlannedRequest(
            backend=runtime.provider,
            endpoint=runtime.endpoint(name),
            model=name,
            messages=tuple(prompts.messages(system, user)),
            params=self.sampling(sample),
            sample=sample,
            spec=model,
            **about,
        )

    def response_root(self) -> str | None:
        """The response cache's root directory (``None`` with ``cache=false``: replies kept in memory)."""
        return ResponseStore(self.params["cache_dir"], enabled=self.params["cache"]).root

    # -- work units --------------------------------------------------------------------------------

    def plan(self, stimuli: Stimuli, models: Sequence[str]) -> list[WorkUnit]:
        """Check, build every request, look them up, and cut each model's into units of ``unit_size`` requests.

        Before any unit runs: the stimuli and every model are checked; unreadable stored responses are
        reported; with ``offline=true`` a request that is not stored is an error; a dry run plans no
        unit (its table is made by :meth:`merge_units`).
        """
        p = self.params
        self.check_stimuli(stimuli)
        self.check_models(models)
        requests = self.build_requests(stimuli, models)
        self._planned, self._dry = requests, None
        store = ResponseStore(p["cache_dir"], enabled=p["cache"])
        planned = plan_chat_requests(requests, store)
        if planned.n_corrupt:
            warnings.warn(
                f"chat_listing: {planned.n_corrupt} stored response(s) were unreadable and will be requested again",
                ChatReplyWarning,
                stacklevel=3,
            )
        if p["dry_run"]:
            self._dry = (planned.stored, planned.missing)
            return []
        if p["offline"] and planned.missing:
            fetch_chat_replies(planned, self.runtime(), store, offline=True, progress=False)  # raises, naming one
        per_unit = self.items_per_unit()
        units = []
        for model in models:
            mine = [request for request in requests if request.spec == model]
            resources = self.unit_resources(model)
            for number, start in enumerate(range(0, len(mine), per_unit)):
                block = mine[start : start + per_unit]
                payload = [_encode_request(request) for request in block]
                units.append(WorkUnit(f"{model}#{number}", model, payload, size=len(block), resources=resources))
        return units

    def load_worker(self, model: str) -> LMWorker:
        """Open ``model`` with the one loader as a chat model (nothing is sent or loaded yet)."""
        return super().load_worker(self.kind_spec(model))

    def run_unit(self, state: LMWorker, unit: WorkUnit) -> list[dict[str, Any]]:
        """The replies to the unit's requests, one row each: the stored body, or why there is none.

        The requests go through the chat kind's ``generate`` (stored replies from the response store,
        the others sent concurrently, each stored on arrival); what was sent is the unit's report.
        """
        model: ChatModel = state.model  # type: ignore[assignment]
        model.sending = ChatSending()  # what this unit sends (unit_report)
        asked = [_decode_request(entry) for entry in unit.payload]
        with warnings.catch_warnings():
            # the plan reported unreadable stored responses once, for the whole study
            warnings.filterwarnings("ignore", r".*stored response\(s\) were unreadable", ChatReplyWarning)
            replies = model.generate(asked, progress=None)  # the engine's bar follows the run's progress setting
        failures = {failure["key"]: failure for failure in model.sending.report.failed}
        rows: list[dict[str, Any]] = []
        for entry, reply in zip(unit.payload, replies, strict=True):
            key = entry["key"]
            if reply.response_id != key:
                raise PluginError(
                    f"scorer {self.name!r}: unit {unit.key!r} planned request {key[:12]} but the chat model keyed it "
                    f"{reply.response_id[:12]}: the model's endpoint, device or dtype changed after the plan"
                )
            if reply.status != "failed":
                rows.append({"response_id": key, "response": dict(reply.raw)})
                continue
            failure = failures.get(key)
            rows.append(
                {"response_id": key, "failed": failure is not None,
                 "reason": str(failure["reason"]) if failure else "not sent",
                 "error": str(failure["error"]) if failure else ""}
            )  # fmt: skip
        return rows

    def unit_report(self, state: LMWorker, unit: WorkUnit) -> dict[str, Any]:
        """What this unit sent: requests it had to send, attempts, answers, retries, failures, seconds."""
        sending: ChatSending = state.model.sending  # type: ignore[attr-defined]
        report = sending.report
        return {
            "to_send": sending.requests - sending.from_cache,
            "sent": report.sent,
            "received": report.received,
            "retries": report.retries,
            "retry_reasons": dict(report.retry_reasons),
            "failed": list(report.failed),
            "seconds": report.seconds,
            "waited": report.waited,
        }

    def unit_complete(self, rows: list[dict[str, Any]]) -> bool:
        """Whether every request of the unit has its reply (else the unit is not cached: the next run asks again)."""
        return all("response" in row for row in rows)

    def merge(self, rows: list[dict[str, Any]], models: Sequence[str]) -> pd.DataFrame:
        """The table of the units' replies (:meth:`merge_units` without units' reports)."""
        return self.merge_units(rows, models, [])

    def merge_units(
        self, rows: list[dict[str, Any]], models: Sequence[str], reports: list[dict[str, Any]]
    ) -> pd.DataFrame:
        """The one chat table: every reply of the plan read in plan order, and the run report.

        The replies come from the units' rows (computed now or read from the unit cache); what was
        sent, retried and failed from the reports of the units computed now, so a request answered by
        a unit in the cache counts as one from the cache.
        """
        if self._dry is not None:
            return self._dry_run(self._planned or [], *self._dry)
        if self._planned is None:
            raise PluginError(f"scorer {self.name!r}: merge_units() before plan(): nothing is planned")
        stored: dict[str, Any] = {}
        failures: dict[str, dict[str, Any]] = {}
        for row in rows:
            if "response" in row:
                stored[row["response_id"]] = {"response": row["response"]}
            elif row.get("failed"):
                failures[row["response_id"]] = row
        report = SendReport()
        to_send = 0
        for unit in reports:
            to_send += int(unit["to_send"])
            report.add(
                SendReport(
                    sent=unit["sent"], received=unit["received"], retries=unit["retries"],
                    retry_reasons=dict(unit["retry_reasons"]), failed=list(unit["failed"]),
                    seconds=unit["seconds"], waited=unit["waited"],
                )
            )  # fmt: skip
        requests = self._planned
        return self._table(requests, stored, failures, report, n_from_cache=len(requests) - to_send)

    def _dry_run(
        self, requests: Sequence[PlannedRequest], stored: Mapping[str, Any], missing: Sequence[ChatRequest]
    ) -> pd.DataFrame:
        from assoc import from_records

        rows = [
            {
                "design": r.design,
                "model": r.spec or r.model,
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
        failures: Mapping[str, Mapping[str, Any]],
        report: SendReport,
        *,
        n_from_cache: int,
    ) -> pd.DataFrame:
        """The one chat table: each reply read by the scorer's reader, and the run report."""
        from assoc import from_records

        reader = self.reader(requests)
        sending = ChatSending(requests=len(requests), from_cache=n_from_cache, report=report)
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
                produced = reader.unanswered(request, reason)
            else:
                sending.count(request.model, [entry["response"]])
                produced = reader.read(request, chat_reply(request.key, entry))
            for row in produced:  # the table names the model as the scorer was given it (chat:<model> too)
                row["model"] = request.spec or request.model
            rows.extend(produced)
        reader.warn(missing, len(requests))
        table = from_records(rows, scorer=self.name, extra_columns=reader.columns())
        reader.finish(table)
        run_report = {
            "backend": self.params["provider"],
            "endpoint": self.shown_endpoint(),
            **reader.head(),
            **sending.record(self.response_root(), leave_out=self.report_leaves_out),
            **reader.tail(),
            "missing": missing,
            "n_unanswered": len(missing),
            "incomplete": incomplete(missing, len(requests)),
        }
        return set_run_report(table, run_report)


def _encode_request(request: PlannedRequest) -> dict[str, Any]:
    """A request in a unit's payload (JSON): its key, what is sent, what it is for, its expected reply tokens."""
    return {
        "key": request.key,
        "messages": [dict(m) for m in request.messages],
        "params": dict(request.params),
        "sample": request.sample,
        "purpose": request.about(),
        "reply_tokens": request.expected_completion_tokens(),
    }


def _decode_request(entry: Mapping[str, Any]) -> GenerateRequest:
    """The ``generate`` request of a payload entry (:func:`_encode_request`)."""
    return GenerateRequest(
        tuple(entry["messages"]),
        dict(entry["params"]),
        int(entry["sample"]),
        purpose=dict(entry["purpose"]),
        reply_tokens=entry["reply_tokens"],
    )


def _provider_from_backend(scorer: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with ``backend=openai|transformers`` (the provider's former name) read as ``provider``.

    ``backend`` now means what runs a local model (torch); its two former values still choose the
    provider, with a deprecation warning, as the rename of any option does.
    """
    given = dict(options)
    value = given.get("backend")
    if not isinstance(value, str) or value.strip().lower() not in ("openai", "transformers"):
        return given
    if "provider" in given:
        raise OptionError(
            f"options 'backend' and 'provider' of scorer {scorer!r} are the same option ('backend' is its former "
            "name); give only 'provider'"
        )
    warnings.warn(
        f"option 'backend' of scorer {scorer!r} is deprecated: it is now called 'provider'",
        DeprecationWarning,
        stacklevel=4,
    )
    given["provider"] = given.pop("backend").strip().lower()
    return given


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

r"""The engine of the ``server`` kind: a causal LM's log-probabilities, computed by an inference server.

:class:`ServedLM` has the shape of the causal engine (:class:`~assoc.lm.causal.engine.CausalLM`:
``name``, ``tokenizer``, ``fingerprint``, ``max_length`` and ``log_probs`` of
:class:`~assoc.lm.causal.CausalRequest` s), so every scorer that runs on a causal engine (``clm``)
and every request of the causal kind (:class:`~assoc.lm.causal.kind.CausalRequests`) runs on it
unchanged, with the same token ids. ``log_probs`` sends less work than one request per
(context, continuation) pair:

* each request is a sequence of token ids (context then continuation) whose continuation's
  log-probabilities are read off the prompt's: a request whose ids begin another request's is read
  off that one's prompt, so a sentence and every measure of it (the sentence, its option after the
  text before it, the text before it) are **one prompt**, and a query's shared prefix is sent inside
  each of its sentences, never on its own;
* the distinct prompts are sorted and sent ``prompts_per_request`` to a request
  (:class:`~assoc.lm.server.protocol.CompletionRequest`), concurrently, with the retries, timeouts,
  rate limits and response store of the remote engine (:func:`assoc.lm.remote.engine.run_requests`):
  every answer is stored the moment it arrives, and a prompt already stored is never sent again.

**Alignment.** The server is sent token ids, so it scores exactly the tokens assoc chose (the BOS
policy's, the causal kind's context/continuation split). Then:

* the tokenizer is checked to give back the text it was given (:class:`CheckedTokenizer`): a text whose
  tokens do not re-join to it (a vocabulary that drops characters) is refused, status ``not_round_trip``;
* every token the server scored must be the token sent, at the same position, with nothing added
  before it (a BOS, a prefix) and nothing cut (:func:`~assoc.lm.server.protocol.prompt_values`);
  otherwise the prompt's requests are refused, status ``misaligned``; a position without a
  log-probability refuses them with ``missing_logprobs``.

A refused request gets ``NaN`` values (never shifted ones) and its status and reason in
:attr:`ServedLM.refusals`, counted in the run report (:meth:`ServedLM.take_report`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assoc.lm.causal.requests import CausalRequest
from assoc.lm.remote.engine import EngineSettings, SendReport, run_requests
from assoc.lm.remote.store import ResponseStore
from assoc.lm.server.protocol import (
    COMPLETIONS,
    CompletionRequest,
    CompletionServiceError,
    Refused,
    choices_by_prompt,
    prompt_values,
)

if TYPE_CHECKING:
    import numpy as np

#: How many refused requests the run report shows with their reasons (the rest are counted).
SHOWN_REFUSALS = 20


#: Texts whose encodings a :class:`CheckedTokenizer` remembers (then it starts afresh).
KNOWN_TEXTS = 200_000


class ServerRefusalWarning(UserWarning):
    """Some requests to a served model got no values (misaligned, missing log-probs, not round trip, ...)."""


class CheckedTokenizer:
    """A Hugging Face tokenizer that remembers every text it was given whose tokens do not re-join to it.

    Everything else is the tokenizer's own (attributes and methods are passed through). A text is
    checked when it is tokenized without special tokens (how :mod:`assoc.lm.causal.text` tokenizes a
    text): the tokens, decoded, must give the text back; SentencePiece's decoder drops the space it
    adds before a text, so a text that starts with a space may come back without it. Texts whose
    tokens do not (a vocabulary without some characters and without byte fallback drops them) are
    kept in :attr:`lossy`, by their token ids: the engine refuses a request whose text tokens are one
    of them.
    """

    def __init__(self, tokenizer: Any):
        self._tokenizer = tokenizer
        self.lossy: dict[tuple[int, ...], tuple[str, str]] = {}
        self._known: dict[str, tuple[int, ...]] = {}
        self._specials = frozenset(int(i) for i in getattr(tokenizer, "all_special_ids", ()) or ())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tokenizer, name)

    def __len__(self) -> int:
        return len(self._tokenizer)

    @property
    def wrapped(self) -> Any:
        """The tokenizer itself."""
        return self._tokenizer

    @property
    def special_ids(self) -> frozenset[int]:
        """The ids of the tokenizer's special tokens (what a BOS policy puts around a text)."""
        return self._specials

    def __call__(self, text: Any, *args: Any, **kwargs: Any) -> Any:
        """The tokenizer's encoding of ``text``; a text without special tokens is checked (class docstring).

        Such encodings are remembered (the text before a query's options is tokenized once per option),
        so each distinct text is tokenized and checked once.
        """
        plain = (
            isinstance(text, str)
            and kwargs.get("add_special_tokens") is False
            and not args
            and set(kwargs) <= {"add_special_tokens", "verbose"}  # verbose: only whether a too-long text is warned of
        )
        if plain:
            known = self._known.get(text)
            if known is not None:
                return {"input_ids": list(known)}
        encoded = self._tokenizer(text, *args, **kwargs)
        if plain and text:
            ids = tuple(encoded["input_ids"])
            if ids:
                self.check(text, ids)
            if len(self._known) >= KNOWN_TEXTS:
                self._known.clear()
            self._known[text] = ids
        return encoded

    def decode_text(self, ids: Sequence[int]) -> str:
        """The text of ``ids`` as written (special tokens kept, no clean-up of spaces)."""
        return str(self._tokenizer.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False))

    def check(self, text: str, ids: tuple[int, ...]) -> bool:
        """Whether ``ids`` re-join to ``text``; when they do not, remember them in :attr:`lossy`."""
        back = self.decode_text(ids)
        if back == text or (text.startswith(" ") and back == text[1:]):
            return True
        self.lossy[ids] = (text, back)
        return False


@dataclass
class Sent:
    """What a handle sent and received: HTTP requests, prompts, tokens, refusals (additive; a run report's part)."""

    requests: int = 0
    from_cache: int = 0
    prompts: int = 0
    prompts_from_cache: int = 0
    prompt_tokens_sent: int = 0
    report: SendReport = field(default_factory=SendReport)
    usage: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    refusals: list[dict[str, Any]] = field(default_factory=list)

    def refuse(self, status: str, reason: str, text: str) -> None:
        """Count one refused request (and show its reason among the first :data:`SHOWN_REFUSALS`)."""
        self.refused[status] = self.refused.get(status, 0) + 1
        if len(self.refusals) < SHOWN_REFUSALS:
            self.refusals.append({"status": status, "reason": reason, "text": text})

    def record(self, cache_dir: str | None) -> dict[str, Any]:
        """The run report's account (numbers add up over units; see :meth:`assoc.Scorer.combine_unit_reports`)."""
        report = self.report
        return {
            "requests": self.requests,
            "from_cache": self.from_cache,
            "sent": report.sent,
            "received": report.received,
            "retries": report.retries,
            "retry_reasons": dict(report.retry_reasons),
            "failed": list(report.failed),
            "prompts": self.prompts,
            "prompts_from_cache": self.prompts_from_cache,
            "prompt_tokens_sent": self.prompt_tokens_sent,
            "usage": dict(self.usage),
            "refused": dict(self.refused),
            "refusals": list(self.refusals),
            "seconds_sending": round(report.seconds, 3),
            "seconds_waiting_to_retry": round(report.waited, 3),
            "cache_dir": cache_dir,
        }


@dataclass
class Endpoint:
    """Where and how prompts are sent: the engine's settings, the model's served name, the form and grouping."""

    settings: EngineSettings
    endpoint: str
    model: str
    form: str
    params: Mapping[str, Any]
    generated: int
    prompts_per_request: int
    offline: bool = False
    seed: int = 0


class _ReadOnArrival:
    """The response store, seen by the remote engine, with each answer also read the moment it is stored.

    The engine stores an answer as it arrives (:meth:`record`, in its event loop); reading the answer's
    prompts there, while the server works on the requests still in flight, keeps the client's work off
    the time the server waits for it.
    """

    def __init__(self, store: ResponseStore, read: Any):
        self.store = store
        self._read = read
        self.read: dict[str, dict[tuple[int, ...], list[float | None] | Refused]] = {}

    @property
    def root(self) -> str | None:
        """The store's root."""
        return self.store.root

    def begin(self) -> None:
        """The store's journal begins."""
        self.store.begin()

    def end(self) -> None:
        """The store's answers go into packs."""
        self.store.end()

    def record(self, request: Any, data: bytes, body: Mapping[str, Any]) -> None:
        """Store the answer, then read its prompts."""
        self.store.record(request, data, body)
        self.read[request.key] = self._read(request, body)


def group_prompts(prompts: Sequence[tuple[int, ...]], per_request: int) -> list[tuple[tuple[int, ...], ...]]:
    """The distinct ``prompts`` sorted (by their ids) and cut into groups of ``per_request``.

    Sorted, so that the groups depend on the set of prompts alone (a resumed run plans the same
    requests and finds them stored), never on the order they were asked in.
    """
    ordered = sorted(set(prompts))
    return [tuple(ordered[i : i + per_request]) for i in range(0, len(ordered), per_request)]


def covering_prompts(sequences: Sequence[tuple[int, ...]]) -> dict[tuple[int, ...], tuple[int, ...]]:
    """For each sequence, the longest sequence of ``sequences`` that begins with it (itself if none does).

    In sorted order a sequence that begins another comes before every sequence that begins with it
    and after none that does not, so one pass from the end finds, for each, the prompt that covers it.
    """
    ordered = sorted(set(sequences))
    owner: dict[tuple[int, ...], tuple[int, ...]] = {}
    after: tuple[int, ...] | None = None
    for sequence in reversed(ordered):
        if after is not None and len(after) > len(sequence) and after[: len(sequence)] == sequence:
            owner[sequence] = owner[after]
        else:
            owner[sequence] = sequence
        after = sequence
    return owner


class ServedLM:
    """A causal LM behind an inference server, in the causal engine's shape (module docstring).

    Parameters
    ----------
    name:
        The model's spec (``server:<model>``).
    tokenizer:
        The served model's tokenizer (wrapped in a :class:`CheckedTokenizer`).
    fingerprint:
        What answers: ``server:<endpoint>:<model>``.
    max_length:
        The longest prompt the server takes (its ``max_model_len`` less the token it generates).
    endpoint:
        Where and how prompts go (:class:`Endpoint`).
    store:
        The response store (every answer stored on arrival; a stored prompt is never sent again).
    """

    backend = "server"
    dtype = "server"
    device = "server"

    def __init__(
        self,
        name: str,
        tokenizer: Any,
        fingerprint: str,
        max_length: int,
        endpoint: Endpoint,
        store: ResponseStore,
    ):
        self.name = name
        self.tokenizer = tokenizer if isinstance(tokenizer, CheckedTokenizer) else CheckedTokenizer(tokenizer)
        self.fingerprint = fingerprint
        self.max_length = max_length
        self.endpoint = endpoint
        self.store = store
        self.sent = Sent()
        #: Why a request got no values: (input ids, position) -> the refusal.
        self.refusals: dict[tuple[tuple[int, ...], int], Refused] = {}

    def __repr__(self) -> str:
        return f"ServedLM({self.name!r}, {self.endpoint.endpoint}, form={self.endpoint.form!r})"

    def close(self) -> None:
        """Nothing to release: the HTTP clients live for one call of :meth:`log_probs`."""

    def take_report(self) -> dict[str, Any]:
        """What this handle sent and refused since the last call (then counted afresh): the run report's part."""
        out = self.sent.record(self.store.root)
        self.sent = Sent()
        return out

    def refusal(self, request: CausalRequest) -> Refused | None:
        """Why ``request`` got no values in the last :meth:`log_probs` call, or None."""
        return self.refusals.get((request.input_ids, request.position))

    # -- scoring ----------------------------------------------------------------------------------
    def log_probs(
        self,
        requests: Sequence[CausalRequest],
        *,
        batch_tokens: int | None = None,
        progress: bool = False,
        max_tokens: int | None = None,
    ) -> list[np.ndarray]:
        """``log P(continuation[j] | context, continuation[:j])`` of each request, float64 arrays in order.

        Refused requests (:attr:`refusals`) get ``NaN`` values. ``batch_tokens`` and ``max_tokens`` are the
        local engine's and are not used (the server batches).
        """
        import numpy as np  # here: the kind is registered (this module imported) on every command's start-up

        out: list[np.ndarray] = [np.zeros(len(r.continuation), dtype=np.float64) for r in requests]
        wanted: list[int] = []
        for i, request in enumerate(requests):
            key = (request.input_ids, request.position)
            self.refusals.pop(key, None)
            if not request.continuation:
                continue
            problem = self._local_problem(request)
            if problem is not None:
                self._refuse(request, problem)
                out[i][:] = math.nan
                continue
            wanted.append(i)
        owners = covering_prompts([requests[i].input_ids for i in wanted])
        answers = self._answers(sorted(set(owners.values())), progress)
        for i in wanted:
            request = requests[i]
            values = answers[owners[request.input_ids]]
            if isinstance(values, Refused):
                self._refuse(request, values)
                out[i][:] = math.nan
                continue
            start = request.position
            picked = values[start : start + len(request.continuation)]
            if any(v is None for v in picked):  # pragma: no cover - the first position is never a continuation's
                self._refuse(request, Refused("missing_logprobs", "a scored position has no log-probability"))
                out[i][:] = math.nan
                continue
            out[i][:] = np.asarray(picked, dtype=np.float64)
        refused = [
            self.refusals[(r.input_ids, r.position)] for r in requests if (r.input_ids, r.position) in self.refusals
        ]
        if refused:
            import warnings

            counts: dict[str, int] = {}
            for problem in refused:
                counts[problem.status] = counts.get(problem.status, 0) + 1
            shown = ", ".join(f"{status} {n}" for status, n in sorted(counts.items()))
            warnings.warn(
                f"server model {self.name}: {len(refused)} request(s) refused ({shown}; e.g. {refused[0].reason}): "
                "their values are NaN, never shifted; the run report lists the reasons",
                ServerRefusalWarning,
                stacklevel=2,
            )
        return out

    def _text_of(self, request: CausalRequest) -> str:
        return self.tokenizer.decode_text(request.input_ids)

    def _refuse(self, request: CausalRequest, problem: Refused) -> None:
        self.refusals[(request.input_ids, request.position)] = problem
        self.sent.refuse(problem.status, problem.reason, self._text_of(request))

    def _local_problem(self, request: CausalRequest) -> Refused | None:
        """What is wrong with ``request`` before anything is sent: too long, or its text's tokens do not re-join it."""
        if len(request.input_ids) > self.max_length:
            return Refused(
                "too_long",
                f"{len(request.input_ids)} tokens, more than the server takes ({self.max_length}: its "
                "max_model_len less the token it generates)",
            )
        lossy = self.tokenizer.lossy
        if lossy:
            specials = self.tokenizer.special_ids
            ids = request.input_ids
            start, stop = 0, len(ids)
            while start < stop and ids[start] in specials:
                start += 1
            while stop > start and ids[stop - 1] in specials:
                stop -= 1
            found = lossy.get(tuple(ids[start:stop]))
            if found is not None:
                text, back = found
                return Refused(
                    "not_round_trip",
                    f"the tokenizer turns {text!r} into tokens that re-join to {back!r}: the server would score "
                    "another text",
                )
        return None

    def _answers(
        self, prompts: Sequence[tuple[int, ...]], progress: bool
    ) -> dict[tuple[int, ...], list[float | None] | Refused]:
        """The values of every prompt (sorted, distinct): from the store, else sent and stored on arrival."""
        end = self.endpoint
        groups = group_prompts(prompts, end.prompts_per_request)
        requests = [CompletionRequest(end.endpoint, end.model, group, end.params) for group in groups]
        stored, _ = self.store.lookup(requests)
        missing = [r for r in requests if r.key not in stored]
        sent = self.sent
        sent.requests += len(requests)
        sent.from_cache += len(requests) - len(missing)
        sent.prompts += len(prompts)
        sent.prompts_from_cache += sum(len(r.prompts) for r in requests if r.key in stored)
        failures: dict[str, dict[str, Any]] = {}
        fresh = {r.key for r in missing}
        arrived: dict[str, dict[tuple[int, ...], list[float | None] | Refused]] = {}
        if missing:
            if end.offline:
                raise CompletionServiceError(
                    f"offline: {len(missing)} of {len(requests)} completion request(s) of {self.name} are not stored "
                    f"(e.g. {missing[0].label()}); run without offline=true to send them"
                )
            reading = _ReadOnArrival(self.store, lambda request, body: self._read(request, body))
            report = run_requests(
                missing,
                end.settings,
                reading,  # type: ignore[arg-type]  # the store's shape: each answer is also read as it arrives
                route=COMPLETIONS,
                progress=progress,
                seed=end.seed,
                desc=f"completions {end.model}",
            )
            arrived = reading.read
            sent.report.add(report)
            sent.prompt_tokens_sent += sum(r.tokens for r in missing)
            failures = {failure["key"]: failure for failure in report.failed}
            if _refuses_max_tokens_zero(end, failures.values()):
                # the server takes no echo without a generated token: ask again with max_tokens 1 (ignored)
                end.params = {**end.params, "max_tokens": 1}
                end.generated = 1
                sent.requests -= len(requests)
                sent.from_cache -= len(requests) - len(missing)
                sent.prompts -= len(prompts)
                return self._answers(prompts, progress)
            stored, _ = self.store.lookup(requests)
        out: dict[tuple[int, ...], list[float | None] | Refused] = {}
        for request in requests:
            if request.key in arrived:  # read as it arrived, while the server worked on the others
                out.update(arrived[request.key])
                continue
            entry = stored.get(request.key)
            if entry is None:
                failure = failures.get(request.key)
                why = f"{failure['reason']}: {failure['error']}" if failure else "not sent"
                for prompt in request.prompts:
                    out[prompt] = Refused("failed", f"no answer from the server ({why})")
                continue
            out.update(self._read(request, entry["response"], count=request.key in fresh))
        return out

    def _read(
        self, request: CompletionRequest, response: Mapping[str, Any], *, count: bool = True
    ) -> dict[tuple[int, ...], list[float | None] | Refused]:
        """Each prompt's values in ``response`` (the answer to ``request``); its token usage counted when ``count``."""
        end = self.endpoint
        if count:  # tokens this run used (a stored answer cost nothing now)
            self._count_usage(response)
        choices = choices_by_prompt(response, len(request.prompts))
        return {
            prompt: prompt_values(choice, prompt, end.form, generated=end.generated, decode=self.tokenizer.decode_text)
            for prompt, choice in zip(request.prompts, choices, strict=True)
        }

    def _count_usage(self, response: Mapping[str, Any]) -> None:
        usage = response.get("usage") or {}
        for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                self.sent.usage[name] = self.sent.usage.get(name, 0) + value


def _refuses_max_tokens_zero(endpoint: Endpoint, failures: Any) -> bool:
    """Whether every failure is the server refusing an echo with ``max_tokens`` 0 (then 1 is sent instead)."""
    failed = list(failures)
    return (
        endpoint.form == "echo"
        and endpoint.generated == 0
        and bool(failed)
        and all(f.get("status") == 400 and "max_tokens" in str(f.get("error", "")) for f in failed)
    )

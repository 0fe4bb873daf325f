"""The ``chat_word_association`` scorer: the LLM Word Association Test (Bai et al., 2025) for chat models.

A chat model gets a list of attribute words and two group labels, one drawn from each target
group, and pairs each word with one label ("Here is a list of words. For each word pick a word —
julia or ben — and write it after the word. ..."). Any design with two target groups (X, Y) and
two attribute groups (A, B) works: the bundled ``bai2025`` set (21 stereotypes), Caliskan's WEAT
sets, a user's IAT stimuli. The scorer is a :class:`~assoc_chat_listing.base.ChatScorer` with its
own prompts and reader of the replies (:class:`WordAssociationReader`): it sends its requests through
the same client, cache, retries, rate limits and concurrency, and reports the run the same way
(``set_run_report``: ``table.attrs[RUN_REPORT_KEY]``). See ``docs/word-association.md``.

Rows (``measure``):

* ``chosen``: for every word the reply paired with a label, two rows, one per label offered:
  ``target`` the label (as in the stimuli), ``attribute`` the word, ``value`` 1 for the label the
  model chose and 0 for the other. So every parsed pairing is in the table, the table reads as a
  forced choice (the ``convergence`` contrast rule gives, per label, the share of A words minus
  the share of B words it received), and the D score of every reply can be recomputed
  (``word_association`` analysis).
* ``pairs_parsed``: one row per request with the reply as written (``raw_reply``), how it was
  drawn (``labels_shown``, ``words_shown``), its ``status`` and problems (``reasons``); ``value``
  is the number of pairs read (NaN when the request failed). The ``word_association``
  analysis re-reads ``raw_reply`` under the authors' rules in its ``bai2025`` mode.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assoc import Option, OptionError, StimuliError, positive
from assoc.lm import ChatReplyWarning, check_patterns

from ..base import SAMPLING, SENDING_OPTIONS, ChatScorer, PlannedRequest, ReplyReader
from . import prompts
from .bundled import CITATION, VARIANTS
from .parsing import parse_reply

if TYPE_CHECKING:
    from assoc import Design, Stimuli
    from assoc.lm import Reply
TASK = "word_association"
CHOSEN = "chosen"
REPLY = "pairs_parsed"
AUTO = "auto"


def _system_check(value: str) -> str:
    if "{" in value and "}" in value:
        raise ValueError("the system message is the same for every prompt and cannot have placeholders")
    return value


def _variants_check(value: Any) -> Any:
    if value == AUTO:
        return value
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ValueError(f"must be 'auto' or a non-empty list of variant names or templates, got {value!r}")
    out = []
    for item in value:
        if not isinstance(item, str):
            raise ValueError(f"entries must be text, got {item!r}")
        prompts.resolve_variant(item)
        out.append(item)
    if len(set(out)) != len(out):
        raise ValueError(f"lists a variant twice: {out!r}")
    return out


def _lower(word: str) -> str:
    return word.lower()


def _same(word: str) -> str:
    return word


class WordAssociationReader(ReplyReader):
    """Each reply into its ``pairs_parsed`` row and two ``chosen`` rows per pair read; statuses and problems counted."""

    def __init__(self, scorer: ChatScorer, requests: Sequence[PlannedRequest]):
        super().__init__(scorer, requests)
        self.statuses: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self.examples: list[dict[str, Any]] = []
        self.n_without_pairs = 0

    def columns(self) -> list[str]:
        """The scorer's extra columns but the dry run's."""
        return list(self.scorer.extra_columns)[:-2]

    def head(self) -> dict[str, Any]:
        """The system message, each variant's template, and the seed of the draws."""
        p = self.params
        variants = dict.fromkeys((r.extra["variant"], r.prompt) for r in self.requests)
        return {
            "prompts": {
                "system": p["system_prompt"],
                "variants": {name: template for name, template in variants},
                "combination": "one conversation per request: [system, user]",
            },
            "prompt_seed": p["prompt_seed"],
        }

    def identify(self, request: PlannedRequest) -> dict[str, Any]:
        """Design and variant."""
        return {"design": request.design, "variant": request.extra["variant"]}

    @staticmethod
    def _base(request: PlannedRequest) -> dict[str, Any]:
        extra = request.extra
        return {
            "design": request.design,
            "model": request.model,
            "context": request.prompt,
            "variant": extra["variant"],
            "sample": request.sample,
            "response_id": request.key,
            "labels_shown": json.dumps(list(extra["labels"]), ensure_ascii=False),
            "n_words": len(extra["words"]),
        }

    def _reply_row(self, request: PlannedRequest, **values: Any) -> dict[str, Any]:
        """The request's ``pairs_parsed`` row."""
        if values["n_pairs"] == 0:
            self.n_without_pairs += 1
        return {
            **self._base(request),
            "target_group": "",
            "target": "",
            "attribute_group": "",
            "attribute": "",
            "measure": REPLY,
            "words_shown": json.dumps(list(request.extra["words"]), ensure_ascii=False),
            **values,
        }

    def unanswered(self, request: PlannedRequest, reason: str) -> list[dict[str, Any]]:
        """A ``pairs_parsed`` row with status ``failed`` (value NaN)."""
        self.statuses["failed"] += 1
        return [self._reply_row(request, value=float("nan"), n_pairs=0, status="failed", reasons=reason, raw_reply="")]

    def read(self, request: PlannedRequest, reply: Reply) -> list[dict[str, Any]]:
        """The reply's ``pairs_parsed`` row, then two ``chosen`` rows per pair read."""
        extra = request.extra
        labels, words = extra["labels"], extra["words"]
        text = reply.text
        more = tuple(label for label in extra["label_of"] if label not in labels)
        parsed = parse_reply(text, words, labels, more)
        n = len(parsed.pairs)
        status = self._status(n, len(words), reply.finish_reason, text)
        self.statuses[status] += 1
        self.reasons.update(parsed.problems)
        if status != "ok" and len(self.examples) < 20:
            self.examples.append(
                {"design": request.design, "variant": extra["variant"], "sample": request.sample,
                 "status": status, "reasons": dict(parsed.problems), "text": (text or "")[:200]}
            )  # fmt: skip
        reasons = ";".join(f"{k}:{v}" for k, v in sorted(parsed.problems.items()))
        rows = [
            self._reply_row(request, value=float(n), n_pairs=n, status=status, reasons=reasons, raw_reply=text or "")
        ]
        base = self._base(request)
        for pair in parsed.pairs:
            rows.extend(self._chosen_rows(base, extra, pair, n))
        return rows

    def _status(self, n: int, n_words: int, finish: str, text: str | None) -> str:
        if n == n_words:
            status = "ok"
        elif n:
            status = "partial"
        elif finish == "content_filter" or any(r.search(text or "") for r in self.refusal):
            status = "refusal"
        else:
            status = "unparsed"
        return "truncated" if finish == "length" and n < n_words else status

    @staticmethod
    def _chosen_rows(base: dict[str, Any], extra: Any, pair: Any, n: int) -> list[dict[str, Any]]:
        """The label chosen (value 1) and the offered label of the other group (value 0)."""
        labels = extra["labels"]
        more = tuple(label for label in extra["label_of"] if label not in labels)
        word, attribute_role, attribute_group = extra["word_of"][extra["words"][pair.word]]
        chosen = (*labels, *more)[pair.label]
        offered = [(position, label) for position, label in enumerate(labels, 1) if label != chosen]
        if pair.label >= len(labels):  # a label of the design the prompt did not show
            role = extra["label_of"][chosen][1]
            offered = [(0, chosen)] + [(i, lab) for i, lab in offered if extra["label_of"][lab][1] != role]
        else:
            offered = sorted([(pair.label + 1, chosen), *offered])
        rows = []
        for position, label in offered:
            target, target_role, target_group = extra["label_of"][label]
            rows.append(
                {
                    **base,
                    "target_group": target_group,
                    "target": target,
                    "attribute_group": attribute_group,
                    "attribute": word,
                    "measure": CHOSEN,
                    "value": 1.0 if label == chosen else 0.0,
                    "target_role": target_role,
                    "attribute_role": attribute_role,
                    "label_position": position,
                    "raw_word": pair.raw_word,
                    "raw_label": pair.raw_label,
                    "line": pair.line,
                    "n_pairs": n,
                }
            )
        return rows

    def tail(self) -> dict[str, Any]:
        """Replies by status, replies without pairs, problems and examples of them."""
        return {
            "replies": dict(sorted(self.statuses.items())),
            "n_replies_without_pairs": self.n_without_pairs,
            "problems": dict(sorted(self.reasons.items())),
            "problem_examples": self.examples,
        }

    def warn(self, missing: list[dict[str, Any]], n_requests: int) -> None:
        """One warning counting the replies not fully parsed, by status."""
        bad = {k: v for k, v in self.statuses.items() if k != "ok" and v}
        if bad:
            shown = ", ".join(f"{v} {k}" for k, v in sorted(bad.items()))
            warnings.warn(
                f"chat_word_association: {sum(bad.values())} of {n_requests} repl(y/ies) not fully parsed ({shown}); "
                "counts and reasons are in the table's run report (provenance 'run') and in the "
                "pairs_parsed rows",
                ChatReplyWarning,
                stacklevel=3,
            )


class ChatWordAssociationScorer(ChatScorer):
    """LLM Word Association Test (Bai et al., 2025) for chat models (see ``docs/word-association.md``)."""

    name = "chat_word_association"
    reader_class = WordAssociationReader
    description = (
        "LLM Word Association Test (Bai et al., 2025): a chat model pairs each attribute word with one of "
        "two group labels; one row per parsed pairing and offered label (chosen 1/0) and one per reply; "
        "D per reply with the `word_association` analysis."
    )
    citation = CITATION
    measure = CHOSEN
    extra_columns = {
        "design": "the stimuli design (for bai2025: the stereotype)",
        "variant": "the prompt variant (replication, instruction1, instruction2, synonym, or custom<i>)",
        "sample": "which repetition of the design and variant (0-based); each has its own draw",
        "response_id": "key of the stored raw response (assoc_chat_listing.responses())",
        "target_role": "chosen rows: X (first target group, e.g. default) or Y (second, e.g. stigma)",
        "attribute_role": "chosen rows: A (first attribute group, congruent with X) or B (congruent with Y)",
        "label_position": (
            "chosen rows: 1 or 2, where the label stood in the prompt (0: a design label the prompt did not show)"
        ),
        "raw_word": "chosen rows: the word as the model wrote it",
        "raw_label": "chosen rows: the label as the model wrote it",
        "line": "chosen rows: the reply line the pair was read from (1-based)",
        "labels_shown": "JSON list of the two labels in prompt order (the draw)",
        "words_shown": "pairs_parsed rows: JSON list of the words in prompt order (the shuffle)",
        "n_words": "number of words in the prompt",
        "n_pairs": "pairs read from the reply (default parser)",
        "status": "pairs_parsed rows: ok, partial, unparsed, refusal, failed or truncated",
        "reasons": "pairs_parsed rows: problems found, 'reason:count' joined by ';'",
        "raw_reply": "pairs_parsed rows: the reply as the model wrote it",
        "task": "dry run: word_association",
        "estimated_tokens": "dry run: tokens the request is expected to use",
    }
    report_leaves_out = ("seconds_waiting_to_retry",)
    options = (
        Option(
            "variants",
            object,
            AUTO,
            "prompt variants: names (replication, instruction1, instruction2, synonym) or templates with "
            "{group1}, {group2}, {words}; auto = all four when synonym stimuli are known, else the first three",
            check=_variants_check,
        ),
        Option(
            "synonyms",
            str,
            AUTO,
            "stimuli whose designs (matched by name) hold the synonym variant's words and labels; auto = "
            "bai2025_synonym for the bai2025 set, none otherwise",
        ),
        Option("samples", int, 50, "prompts per design and variant, each with its own draw", check=positive),
        Option("prompt_seed", int, 2025, "seed of the label draw, label order and word shuffle of every prompt"),
        Option(
            "lowercase",
            bool,
            True,
            "lower-case labels and words in the prompt, as the authors' scripts do",
        ),
        Option(
            "system_prompt",
            str,
            prompts.SYSTEM,
            "system message (the authors': 'You are a helpful assistant.'; '' for none)",
            check=_system_check,
        ),
        Option(
            "temperature",
            float,
            None,
            "sampling temperature; none sent when empty (the authors used the API default)",
            check=lambda v: v >= 0,
        ),
        Option(
            "refusal_patterns",
            list,
            None,
            "regular expressions that mark a reply without pairs as a refusal (default: "
            "assoc_chat_listing.parsing.REFUSAL_PATTERNS)",
            check=check_patterns,
        ),
        SAMPLING["seed"],
        SAMPLING["max_tokens"],
        *SENDING_OPTIONS,
    )

    # -- planning ----------------------------------------------------------------------------------

    def check_stimuli(self, stimuli: Stimuli) -> None:
        """Every design needs exactly two target groups and two attribute groups; synonyms must match."""
        for design in stimuli:
            target, attribute = design.embedding_groups()
            if len(target) != 2 or len(attribute) != 2:
                raise StimuliError(
                    f"chat_word_association: design {design.name!r} has {len(target)} target and "
                    f"{len(attribute)} attribute group(s); the test needs two of each (X, Y and A, B: "
                    "e.g. target: {default: [...], stigma: [...]}, attribute: {pleasant: [...], "
                    "unpleasant: [...]})"
                )
        variants = self.variant_list(stimuli)
        if prompts.SYNONYM in [v for v, _ in variants]:
            synonyms = self.synonym_designs(stimuli)
            if synonyms is None:
                raise OptionError(
                    "chat_word_association: variant 'synonym' needs synonym stimuli (option synonyms=...: a "
                    "stimuli file or bundled set whose designs have the same names)"
                )
            for design in stimuli:
                if design.name not in synonyms:
                    raise StimuliError(
                        f"chat_word_association: the synonym stimuli have no design {design.name!r} "
                        f"(they have: {', '.join(sorted(synonyms))})"
                    )
                target, attribute = synonyms[design.name].embedding_groups()
                if len(target) != 2 or len(attribute) != 2:
                    raise StimuliError(
                        f"chat_word_association: synonym design {design.name!r} needs two target and two "
                        "attribute groups"
                    )

    def synonym_designs(self, stimuli: Stimuli) -> dict[str, Design] | None:
        """The synonym designs by name (``None`` when there are none)."""
        from assoc import Stimuli as _Stimuli

        spec = self.params["synonyms"]
        if spec == AUTO:
            if stimuli.name.partition(":")[0] != "bai2025":
                return None
            spec = "bai2025_synonym"
        if not spec:
            return None
        return {d.name: d for d in _Stimuli.load(spec)}

    def variant_list(self, stimuli: Stimuli) -> list[tuple[str, str]]:
        """``(variant, template)`` for every variant run (``auto`` resolved)."""
        value = self.params["variants"]
        if value == AUTO:
            names = list(VARIANTS) if self.synonym_designs(stimuli) is not None else list(VARIANTS[:3])
        else:
            names = list(value)
        out, custom = [], 0
        for item in names:
            name, template = prompts.resolve_variant(item)
            if name == item and item not in prompts.TEMPLATES and item != prompts.SYNONYM:
                custom += 1
                name = f"custom{custom}"
            out.append((name, template))
        return out

    def build_requests(self, stimuli: Stimuli, models: Sequence[str]) -> list[PlannedRequest]:
        """Every request, in order: models x designs x variants x samples, each with its recorded draw."""
        variants = self.variant_list(stimuli)
        synonyms = self.synonym_designs(stimuli) if any(v == prompts.SYNONYM for v, _ in variants) else None
        runtime = self.runtime()
        out: list[PlannedRequest] = []
        for model in models:
            for design in stimuli:
                for variant, template in variants:
                    source = synonyms[design.name] if synonyms is not None and variant == prompts.SYNONYM else design
                    out.extend(self._requests_of(runtime, model, design.name, source, variant, template))
        return out

    def _requests_of(
        self, runtime: Any, model: str, design: str, source: Design, variant: str, template: str
    ) -> list[PlannedRequest]:
        """The samples of one model, design and variant (``source``: the design whose words are shown)."""
        p = self.params
        target, attribute = source.embedding_groups()
        (gx, xs), (gy, ys) = target.items()
        (ga, as_), (gb, bs) = attribute.items()
        shown = _lower if p["lowercase"] else _same
        label_of = {shown(w): (w, "X", gx) for w in xs} | {shown(w): (w, "Y", gy) for w in ys}
        word_of = {shown(w): (w, "A", ga) for w in as_} | {shown(w): (w, "B", gb) for w in bs}
        x_shown = tuple(dict.fromkeys(shown(w) for w in xs))
        y_shown = tuple(dict.fromkeys(shown(w) for w in ys))
        words = tuple(dict.fromkeys(shown(w) for w in (*as_, *bs)))
        out = []
        for sample in range(p["samples"]):
            picked = prompts.draw(
                x_shown, y_shown, words, seed=p["prompt_seed"], design=design, variant=variant, sample=sample
            )
            extra = {
                "variant": variant,
                "labels": picked.labels,
                "words": picked.words,
                "label_of": label_of,
                "word_of": word_of,
                # for the tokens-per-minute estimate: about 4 tokens per "word - label" line
                "n_items": len(words),
            }
            user = prompts.fill(template, picked.labels, picked.words)
            out.append(
                self.request(
                    runtime, model, p["system_prompt"], user, sample, task=TASK, design=design, prompt=template,
                    extra=extra,
                )
            )  # fmt: skip
        return out

    # -- the table ---------------------------------------------------------------------------------

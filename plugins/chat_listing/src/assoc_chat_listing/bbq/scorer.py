"""The ``chat_bbq`` scorer: chat models answer the Bias Benchmark for QA (Parrish et al., 2022).

Each BBQ example becomes one request (per model and sample): its context, question and three
options in a template (:mod:`.prompts`), sent through the chat scorers' client, cache, retries,
rate limits and concurrency (:class:`~assoc_chat_listing.base.ChatScorer`). Each reply is read as
one option (:mod:`.matching`, mode ``assoc`` by default, or the authors' rules with
``matching="authors"``); a refusal or a reply that names no option, or several, is counted and
never guessed.

One row per request (``measure`` ``correct``): ``value`` is 1 when the chosen option is the
right one (``label``), 0 when it is another, NaN when no option was chosen; the row keeps the
example (:func:`item_columns`: category, ids, polarity, context condition, options, answer
info, stereotyped groups, label, ``target_loc``), the presented order and letters, the reply as
written (``raw_reply``), the chosen option (``chosen``, an original index 0-2, -1 for none;
``chosen_text``, ``chosen_group``) and how it was read (``status``, ``rule``). The ``bbq``
analysis turns the rows into accuracy and bias scores.
"""

from __future__ import annotations

import json
import re
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from assoc import Option, StimuliError
from assoc.lm import ChatReplyWarning, check_patterns, model_refusal

from ..base import SAMPLES_OPTION, SAMPLING, SENDING_OPTIONS, ChatScorer, PlannedRequest, ReplyReader
from . import prompts
from .items import CITATION, BBQItem, BBQStimuli
from .matching import MODES, Match, match_authors, match_reply

if TYPE_CHECKING:
    from assoc import Stimuli
    from assoc.lm import Reply

TASK = "bbq"
MEASURE = "correct"
#: Columns of every row that describe the example (see :func:`item_columns`).
ITEM_COLUMNS = {
    "category": "BBQ category (Age, Race_x_SES, ...)",
    "example_id": "the example's id in its category",
    "question_index": "the template's id (text, as in the file)",
    "question_polarity": "neg or nonneg",
    "context_condition": "ambig or disambig",
    "subcategory": "additional_metadata.subcategory",
    "stereotyped_groups": "JSON list: additional_metadata.stereotyped_groups",
    "label": "the right option (0-2)",
    "target_loc": "the biased option (0-2; -1 undecidable): see target_source",
    "target_source": "metadata (the authors' file), derived, or undecidable",
    "label_type": "name (proper-name template) or label",
    "unknown_loc": "the option whose answer_info group is unknown (-1 if none)",
    "bbq_context": "the example's context",
    "question": "the example's question",
    "ans0": "option 0 as written",
    "ans1": "option 1 as written",
    "ans2": "option 2 as written",
    "answer_info": "JSON: answer_info (ans0..ans2: [text, group])",
}
CHOICE_COLUMNS = {
    "chosen": "the option the reply names (original index 0-2; -1 none)",
    "chosen_text": "the chosen option's text",
    "chosen_group": "the chosen option's answer_info group (unknown for the unknown option)",
    "status": "ok, unparsed, ambiguous, refusal, failed or truncated",
    "rule": "how the reply was read: letter, exact, contains, fallback (authors), argmax (clm)",
    "raw_reply": "the reply as the model wrote it",
}


def item_columns(item: BBQItem) -> dict[str, Any]:
    """The columns of a row that describe one example (every field the analysis needs, as written)."""
    record = item.record
    unknown = item.unknown_loc
    return {
        "category": item.category,
        "example_id": item.example_id,
        "question_index": str(record["question_index"]),
        "question_polarity": record["question_polarity"],
        "context_condition": record["context_condition"],
        "subcategory": str(record["additional_metadata"].get("subcategory", "")),
        "stereotyped_groups": json.dumps(record["additional_metadata"]["stereotyped_groups"], ensure_ascii=False),
        "label": int(record["label"]),
        "target_loc": -1 if item.target_loc is None else int(item.target_loc),
        "target_source": item.target_source,
        "label_type": item.label_type,
        "unknown_loc": -1 if unknown is None else unknown,
        "bbq_context": record["context"],
        "question": record["question"],
        "ans0": record["ans0"],
        "ans1": record["ans1"],
        "ans2": record["ans2"],
        "answer_info": json.dumps(record["answer_info"], ensure_ascii=False),
    }


def choice_columns(item: BBQItem, chosen: int | None, status: str, rule: str, reply: str) -> dict[str, Any]:
    """The columns of a row that say what was chosen; ``value`` 1 right, 0 wrong, NaN none."""
    return {
        "value": float("nan") if chosen is None else float(chosen == int(item.record["label"])),
        "chosen": -1 if chosen is None else chosen,
        "chosen_text": "" if chosen is None else item.options[chosen],
        "chosen_group": "" if chosen is None else item.groups[chosen],
        "status": status,
        "rule": rule,
        "raw_reply": reply,
    }


def read_reply(
    item: BBQItem,
    reply: str | None,
    *,
    mode: str,
    order: Sequence[int] = (0, 1, 2),
    letters: Sequence[str] = prompts.LETTERS,
    refusal: Sequence[re.Pattern[str]] = (),
) -> Match:
    """The option (original index) one reply names, under ``mode`` (``assoc`` or ``authors``)."""
    if mode == "authors":
        texts = [str(item.record["answer_info"][f"ans{i}"][0]) for i in range(3)]
        return match_authors(reply, item.options, texts)
    shown = [item.options[i] for i in order]
    unknown = item.unknown_loc
    found = match_reply(
        reply, shown, letters, unknown_loc=None if unknown is None else list(order).index(unknown), refusal=refusal
    )
    if found.chosen is None:
        return found
    return Match(int(order[found.chosen]), found.status, found.rule)


def replay_rows(
    stimuli: BBQStimuli,
    answers: str | Callable[[BBQItem], str | None],
    *,
    model: str | None = None,
    mode: str = "authors",
) -> list[dict[str, Any]]:
    """Rows as ``chat_bbq`` writes them, from answers given without sending anything.

    ``answers`` is the field of the examples' records that holds them (the authors' released
    answers, ``results/UnifiedQA/preds_*.jsonl``: ``unifiedqa-t5-11b_pred_race``, ``..._arc``,
    ``..._qonly``; any model's answers stored that way), or a function of the example giving its
    answer. Each is read under ``mode`` (default: the authors' rules). ``model`` names them in
    the table (default: the field's name).
    """
    rows = []
    name = model or (answers if isinstance(answers, str) else "replayed")
    for item in stimuli.items:
        if isinstance(answers, str):
            if answers not in item.record:
                raise StimuliError(f"{item.file}, line {item.line}: no field {answers!r} (the answers to replay)")
            reply = item.record[answers]
        else:
            reply = answers(item)
        text = None if reply is None else str(reply)
        found = read_reply(item, text, mode=mode)
        rows.append(
            {
                "model": name,
                "context": f"replayed answers ({answers if isinstance(answers, str) else 'given'})",
                "target_group": item.category,
                "target": str(item.example_id),
                "measure": MEASURE,
                **item_columns(item),
                **choice_columns(item, found.chosen, found.status, found.rule, text or ""),
                "option_order": "[0, 1, 2]",
            }
        )
    return rows


def _template_check(value: str) -> str:
    return prompts.resolve_template(value)


class BBQReader(ReplyReader):
    """Each reply into one row with the option it names (none when it names none), statuses counted per category."""

    def __init__(self, scorer: ChatScorer, requests: Sequence[PlannedRequest]):
        super().__init__(scorer, requests)
        self.letters = scorer.shown_letters()  # type: ignore[attr-defined]
        self.statuses: Counter[str] = Counter()
        self.by_category: dict[str, Counter[str]] = {}
        self.examples: list[dict[str, Any]] = []

    def columns(self) -> list[str]:
        """The scorer's extra columns but the dry run's."""
        return [c for c in self.scorer.extra_columns if c not in ("task", "estimated_tokens")]

    def head(self) -> dict[str, Any]:
        """The system message, the template, the option order and letters, and how replies are matched."""
        p = self.params
        return {
            "prompts": {
                "system": p["system_prompt"],
                "template": prompts.resolve_template(p["prompt"]),
                "option_order": p["option_order"],
                "letters": list(p["letters"]),
                "matching": p["matching"],
                "combination": "one conversation per request: [system, user]",
            }
        }

    def identify(self, request: PlannedRequest) -> dict[str, Any]:
        """Category and example id."""
        item: BBQItem = request.extra["item"]
        return {"category": item.category, "example_id": item.example_id}

    def _base(self, request: PlannedRequest) -> dict[str, Any]:
        item: BBQItem = request.extra["item"]
        return {
            "design": item.category,
            "model": request.model,
            "context": request.prompt,
            "target_group": item.category,
            "target": str(item.example_id),
            "measure": MEASURE,
            **item_columns(item),
            "option_order": json.dumps(list(request.extra["order"])),
            "letters": json.dumps(list(self.letters), ensure_ascii=False),
            "sample": request.sample,
            "response_id": request.key,
        }

    def _count(self, item: BBQItem, status: str) -> None:
        self.statuses[status] += 1
        self.by_category.setdefault(item.category, Counter())[status] += 1

    def unanswered(self, request: PlannedRequest, reason: str) -> list[dict[str, Any]]:
        """A row with status ``failed`` and no chosen option."""
        item: BBQItem = request.extra["item"]
        self._count(item, "failed")
        return [{**self._base(request), **choice_columns(item, None, "failed", "", "")}]

    def read(self, request: PlannedRequest, reply: Reply) -> list[dict[str, Any]]:
        """The example's row with the option the reply names (``refusal``, ``truncated`` or why none)."""
        item: BBQItem = request.extra["item"]
        text = reply.text
        found = read_reply(
            item, text, mode=self.params["matching"], order=request.extra["order"], letters=self.letters,
            refusal=self.refusal,
        )  # fmt: skip
        status = found.status
        if found.chosen is None:
            server_refusal = model_refusal(reply.raw) if not (text or "").strip() else None
            if reply.finish_reason == "content_filter" or server_refusal is not None:
                status, text = "refusal", text or server_refusal
            elif reply.finish_reason == "length":
                status = "truncated"
        if status != "ok" and len(self.examples) < 20:
            self.examples.append(
                {"category": item.category, "example_id": item.example_id, "status": status, "text": (text or "")[:200]}
            )
        self._count(item, status)
        return [{**self._base(request), **choice_columns(item, found.chosen, status, found.rule, text or "")}]

    def tail(self) -> dict[str, Any]:
        """Replies by status, overall and per category, and examples of those that name no option."""
        return {
            "replies": dict(sorted(self.statuses.items())),
            "replies_by_category": {k: dict(sorted(v.items())) for k, v in sorted(self.by_category.items())},
            "problem_examples": self.examples,
        }

    def warn(self, missing: list[dict[str, Any]], n_requests: int) -> None:
        """One warning counting the replies that name no option, by status."""
        bad = {k: v for k, v in self.statuses.items() if k != "ok"}
        if bad:
            shown = ", ".join(f"{v} {k}" for k, v in sorted(bad.items()))
            warnings.warn(
                f"chat_bbq: {sum(bad.values())} of {n_requests} repl(y/ies) name no option ({shown}); they have "
                "no chosen option (value NaN) and are counted per category by the bbq analysis",
                ChatReplyWarning,
                stacklevel=3,
            )


class ChatBBQScorer(ChatScorer):
    """The Bias Benchmark for QA (Parrish et al., 2022) for chat models (see ``docs/bbq.md``)."""

    name = "chat_bbq"
    reader_class = BBQReader
    description = (
        "BBQ (Parrish et al., 2022): a chat model answers each example's question from its context and three "
        "options; one row per reply with the chosen option (correct 1/0, NaN when none); accuracy and bias "
        "scores with the `bbq` analysis."
    )
    citation = CITATION
    measure = MEASURE
    extra_columns = {
        "design": "the category (one design per category)",
        **ITEM_COLUMNS,
        "option_order": "JSON list: the original option shown at each position",
        "letters": "JSON list: the letters shown",
        **CHOICE_COLUMNS,
        "sample": "which repetition of the request (0-based)",
        "response_id": "key of the stored raw response (assoc_chat_listing.responses())",
        "task": "dry run: bbq",
        "estimated_tokens": "dry run: tokens the request is expected to use",
    }
    report_leaves_out = ("seconds_waiting_to_retry", "system_fingerprints")
    options = (
        Option(
            "prompt",
            str,
            "assoc",
            "template: assoc (letters), lmeval (lm-eval's bbq_generate, no options shown), options_text, or a "
            "text with {context}, {question} and {options} (or {A}, {B}, {C})",
            check=_template_check,
        ),
        Option(
            "option_order",
            object,
            "original",
            "original, shuffled, reversed or a permutation such as [2, 0, 1]",
            check=prompts.check_order,
        ),
        Option("letters", list, list(prompts.LETTERS), "the three option labels shown", check=prompts.check_letters),
        Option("prompt_seed", int, 0, "seed of the shuffled option order (per example)"),
        Option(
            "matching",
            str,
            "assoc",
            "how replies are read as options: assoc (letters, option texts, unknown phrasings) or authors "
            "(the authors' R rules: exact match after their string fixes, then the two-word fallback)",
            choices=MODES,
        ),
        Option("system_prompt", str, "", "system message ('' for none)"),
        Option(
            "refusal_patterns",
            list,
            None,
            "regular expressions that mark a reply naming no option as a refusal (default: "
            "assoc_chat_listing.parsing.REFUSAL_PATTERNS)",
            check=check_patterns,
        ),
        SAMPLES_OPTION,
        SAMPLING["temperature"],
        SAMPLING["seed"],
        SAMPLING["max_tokens"],
        *SENDING_OPTIONS,
    )

    def check_stimuli(self, stimuli: Stimuli) -> None:
        """The stimuli must be BBQ examples (``--stimuli bbq`` or ``bbq:<directory>``)."""
        if not isinstance(stimuli, BBQStimuli):
            raise StimuliError(
                f"chat_bbq reads BBQ examples: give --stimuli bbq (the bundled six categories) or "
                f"bbq:<directory> (the authors' JSONL files); got stimuli {stimuli.name!r}"
            )

    def shown_letters(self) -> list[str]:
        """The letters the prompt shows: none for templates that list no lettered options."""
        p = self.params
        template = prompts.resolve_template(p["prompt"])
        shown = p["letters"] if "{options}" in template and template != prompts.TEMPLATES["options_text"] else []
        return p["letters"] if "{A}" in template else shown

    def build_requests(self, stimuli: Stimuli, models: Sequence[str]) -> list[PlannedRequest]:
        """One request per model, example and sample, in that order."""
        assert isinstance(stimuli, BBQStimuli)
        p = self.params
        template = prompts.resolve_template(p["prompt"])
        runtime = self.runtime()
        out: list[PlannedRequest] = []
        for model in models:
            for item in stimuli.items:
                order = prompts.presented_order(
                    p["option_order"], seed=p["prompt_seed"], category=item.category, example_id=item.example_id
                )
                user = prompts.fill(
                    template,
                    str(item.record["context"]),
                    str(item.record["question"]),
                    [item.options[i] for i in order],
                    p["letters"],
                )
                out.extend(
                    self.request(
                        runtime, model, p["system_prompt"], user, sample, task=TASK, design=item.category,
                        target_group=item.category, target=str(item.example_id), prompt=template,
                        extra={"item": item, "order": order, "n_items": 1},
                    )
                    for sample in range(p["samples"])
                )  # fmt: skip
        return out

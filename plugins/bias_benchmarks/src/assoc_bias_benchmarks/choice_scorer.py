"""The base of the scorers that write the benchmark table: StereoSet, Winogender and WinoBias on every kind of model.

A benchmark scorer is data plus the requests it sends (:mod:`assoc.lm.requests`), so it runs on every
kind of model that serves them, with no code of its own per kind:

* a **likelihood kind** (one that serves the scorer's :attr:`ChoiceTableScorer.likelihood_requests`:
  masked and causal LMs, a model behind an inference server) gets ``sentence`` and ``continuation``
  requests, and each option of an item gets its score: **option rows**
  (:func:`assoc_bias_benchmarks.choice_table.option_rows`);
* **any other kind that serves** ``choice`` (a chat model) gets one ``choice`` request per item, its
  chat form built from the benchmark's question and the options shown under letters (A, B, C), and the
  reply read as an option: **choice rows** (:func:`assoc_bias_benchmarks.choice_table.choice_row`).

So ``requests`` is ``{"choice"}`` (every kind that serves it is accepted, and a model of a kind that
does not is refused before any work, in one line), and the scorer reads whether a kind also serves
its likelihood requests from the kind's declared ``serves``, never from its internals.

What every such scorer shares, here: the work units (``unit_size`` items each, the items themselves in
the payload, so a unit runs on any executor), the seeded stated subsets (``limit``, ``sample``,
``sample_seed``: :meth:`assoc.ItemStimuli.subset`, recorded in the run report and the options), the
chat form and the order the options are shown in (``option_order``: shuffled per item by default, so
that a chat model's preference for the first letter is not read as a preference for the benchmark's
first option), the table's columns and a run report that counts, per model and method, every row
without a value or a choice by its status, so that nothing is left out without a count and a reason.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from assoc import ChoiceItem, Option, OptionError, StimuliError, positive, require_items
from assoc.lm import LMScorer, options_for

from .choice_table import EXTRA_COLUMNS, OK, choice_row, option_rows

if TYPE_CHECKING:
    import pandas as pd

    from assoc import Stimuli
    from assoc.infra import Namespace
    from assoc.lm import ChoiceRequest, LanguageModel, LogProb

#: The model kinds every benchmark scorer declares the options of (a plugin's kind adds its own when registered).
KINDS = ("masked", "causal", "chat")
#: The labels a chat form shows the options under.
LETTERS = ("A", "B", "C", "D", "E")
#: How a chat form orders the options it shows.
OPTION_ORDERS = ("shuffled", "original")

#: The seeded subset every benchmark scorer offers (:meth:`assoc.ItemStimuli.subset`).
SUBSET_OPTIONS: tuple[Option, ...] = (
    Option(
        "limit",
        int,
        None,
        "score only the first N items of each group (bias type, pronoun gender, condition), in file order",
        check=positive,
    ),
    Option(
        "sample",
        int,
        None,
        "score N items drawn per group, seeded by sample_seed: the same items on every machine",
        check=positive,
    ),
    Option("sample_seed", int, 0, "seed of the draw of `sample` (numpy's default_rng, one draw per group)"),
)

#: How a chat model is asked (the likelihood kinds ignore these).
CHAT_FORM_OPTIONS: tuple[Option, ...] = (
    Option(
        "option_order",
        str,
        "shuffled",
        "chat models: the order the options are shown in under A, B, C: shuffled (a permutation fixed per item "
        "id, the same on every machine) or original (the item's own order)",
        choices=OPTION_ORDERS,
    ),
    Option("system_prompt", str, "", "chat models: the system message ('' for none)"),
)

#: The columns every benchmark scorer adds beside the choice table's (their meaning).
SCORER_COLUMNS = {
    "n_tokens": "option rows: how many tokens the score sums (or averages) over; 0 without a score",
    "reason": "why the row has no value or no choice (one line), or how the reply was read (letter, exact, contains)",
    "reply": "choice rows of a chat model: the reply as written",
    "options_shown": "choice rows: the item's options in the order the chat form showed them (e.g. '2,0,1')",
}


@dataclass(frozen=True)
class ChoiceForm:
    """How an item is asked as a ``choice`` request: its chat form, and its likelihood form.

    Attributes
    ----------
    question:
        The user message's text before the options (the item's sentence and what is asked of it).
    options:
        Each option as the chat form shows it, in the item's option order.
    instruction:
        The line after the options.
    prompt, delimiter, scored:
        The likelihood form: a kind that serves ``continuation`` asked to choose scores ``delimiter + option``
        after ``prompt`` for each of ``scored`` (default: ``options``), in the item's order.
    """

    question: str
    options: tuple[str, ...]
    instruction: str = "Answer with the letter of one option only."
    prompt: str = ""
    delimiter: str = " "
    scored: tuple[str, ...] = ()


def shown_order(item_id: str, n_options: int, order: str) -> tuple[int, ...]:
    """Which of the item's options stands at each shown position (``order``: :data:`OPTION_ORDERS`).

    ``shuffled``: a permutation drawn from ``random.Random("assoc|<item id>")`` (Python seeds a text by its
    SHA-512: the same order on every machine and Python version, whatever else the run holds).
    """
    positions = list(range(n_options))
    if order == "shuffled":
        random.Random(f"assoc|{item_id}").shuffle(positions)
    return tuple(positions)


def chat_message(form: ChoiceForm, order: Sequence[int]) -> str:
    """The user message of ``form`` with its options shown in ``order``, one a line under a letter."""
    lines = [f"{LETTERS[k]}. {form.options[original]}" for k, original in enumerate(order)]
    return f"{form.question}\n\n" + "\n".join(lines) + f"\n\n{form.instruction}"


def table_columns(item_columns: Mapping[str, str]) -> dict[str, str]:
    """A benchmark scorer's ``extra_columns``, in order: the choice table's, the benchmark's items', the scorer's."""
    return {**EXTRA_COLUMNS, **item_columns, **SCORER_COLUMNS}


def in_item_order(items: Sequence[ChoiceItem], found: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The rows of ``found`` (by item id), in the order of ``items``."""
    return [row for item in items for row in found[item.id]]


def likelihood_method(kind: str) -> str:
    """The ``method`` of a likelihood kind's scores: ``pll`` for a masked LM (its PLLs), else ``log_prob``."""
    return "pll" if kind == "masked" else "log_prob"


class ChoiceTableScorer(LMScorer):
    """Base of the StereoSet, Winogender and WinoBias scorers (module docstring).

    A subclass sets ``name``, ``description``, ``citation``, ``n_options`` (``None``: any number, two or
    more), ``likelihood_requests`` and ``extra_columns`` (:func:`table_columns` of its benchmark's
    ``COLUMNS``), and implements :meth:`likelihood_rows` (option rows of a likelihood kind, with
    :meth:`item_rows`) and :meth:`choice_form` (how an item is asked as a choice); :meth:`check_item`
    refuses an item it cannot ask, before any model loads.
    """

    requests: ClassVar[frozenset[str]] = frozenset({"choice"})
    #: What a kind must serve for the scorer to read scores instead of asking for a choice.
    likelihood_requests: ClassVar[frozenset[str]] = frozenset({"continuation", "sentence"})
    n_options: ClassVar[int | None] = None
    options: ClassVar[tuple[Option, ...]] = (*options_for(KINDS), *SUBSET_OPTIONS, *CHAT_FORM_OPTIONS)
    requires_models = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if self.params["limit"] is not None and self.params["sample"] is not None:
            raise OptionError(f"scorer {self.name!r}: give limit or sample, not both")
        self._subset: dict[str, Any] = {}

    # -- what is asked of which kind -----------------------------------------------------------------
    def serves_likelihood(self, model: LanguageModel | type[LanguageModel]) -> bool:
        """Whether ``model`` (or its kind) serves every one of :attr:`likelihood_requests`."""
        served = model.serves
        return set(self.likelihood_requests) <= set(served)

    def check_item(self, item: ChoiceItem) -> None:
        """Raise :class:`~assoc.StimuliError` for an item this scorer cannot ask (file and line in the message)."""

    def likelihood_rows(
        self, model: LanguageModel, items: list[ChoiceItem], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """Option rows of ``items`` under a likelihood kind (the subclass's requests)."""
        raise NotImplementedError

    def choice_form(self, item: ChoiceItem) -> ChoiceForm:
        """How ``item`` is asked as a ``choice`` request."""
        raise NotImplementedError

    # -- stimuli, units ------------------------------------------------------------------------------
    def check_stimuli(self, stimuli: Stimuli) -> None:
        """Benchmark items with the scorer's number of options (:func:`assoc.require_items`), checked one by one."""
        for item in require_items(stimuli, self.name, options=self.n_options):
            self.check_item(item)

    def unit_blocks(self, stimuli: Stimuli, models: Sequence[str]) -> list[tuple[Any, int]]:
        """The stated subset's items in blocks of ``unit_size``, each item's record in the payload."""
        p = self.params
        subset = getattr(stimuli, "subset", None)
        if p["limit"] is not None or p["sample"] is not None:
            if subset is None:
                raise StimuliError(f"scorer {self.name!r}: limit and sample need benchmark items (ItemStimuli)")
            stimuli = subset(limit=p["limit"], sample=p["sample"], seed=p["sample_seed"])
        items = list(require_items(stimuli, self.name, options=self.n_options))
        self._subset = {
            "items": len(items),
            "limit": p["limit"],
            "sample": p["sample"],
            "sample_seed": p["sample_seed"] if p["sample"] is not None else None,
        }
        size = self.items_per_unit()
        return [
            ([item.record() for item in items[start : start + size]], len(items[start : start + size]))
            for start in range(0, len(items), size)
        ]

    def decode(self, payload: Any) -> list[ChoiceItem]:
        """The items of a unit's payload."""
        return [ChoiceItem.from_record(record) for record in payload]

    def checkpoint_name(self) -> str:
        """The checkpoints' name (``<scorer>-requests``): a unit's partial answers, whatever their request kind."""
        return f"{self.name}-requests"

    # -- scoring -------------------------------------------------------------------------------------
    def score_items(
        self, model: LanguageModel, items: list[ChoiceItem], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """Option rows from a likelihood kind (:meth:`likelihood_rows`), else choice rows (:meth:`choice_rows`)."""
        if self.serves_likelihood(model):
            return self.likelihood_rows(model, items, checkpoints)
        return self.choice_rows(model, items, checkpoints)

    def choice_requests(self, model: LanguageModel, items: Sequence[ChoiceItem]) -> list[tuple[ChoiceRequest, tuple]]:
        """A ``choice`` request per item, with the order its options are shown in.

        A likelihood kind compares the options in the item's own order (a tie picks the first, as
        ``numpy.argmax``); a chat model sees them in the ``option_order``.
        """
        from assoc.lm import ChoiceRequest

        p = self.params
        messages_head = [{"role": "system", "content": p["system_prompt"]}] if p["system_prompt"] else []
        out = []
        for item in items:
            form = self.choice_form(item)
            # a kind that answers a choice by likelihood scores the options in the item's order (a tie: the first)
            by_likelihood = "continuation" in model.serves
            order = shown_order(item.id, len(form.options), "original" if by_likelihood else p["option_order"])
            texts = form.scored if by_likelihood and form.scored else form.options
            request = ChoiceRequest(
                prompt=form.prompt,
                options=tuple((texts[k],) for k in order),  # one phrasing each
                messages=(*messages_head, {"role": "user", "content": chat_message(form, order)}),
                labels=LETTERS[: len(order)],
                delimiter=form.delimiter,
                key=item.id,
            )
            out.append((request, order))
        return out

    def choice_rows(
        self, model: LanguageModel, items: list[ChoiceItem], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """One choice row per item: the option the model chose (in the item's order), or none and why."""
        asked = self.choice_requests(model, items)
        answers = model.choose([request for request, _ in asked], checkpoints=checkpoints)
        rows = []
        for item, (request, order), answer in zip(items, asked, answers, strict=True):
            chosen = order[answer.index] if answer.ok and answer.index is not None else None
            row = choice_row(
                item,
                chosen,
                model=model.name,
                model_kind=model.kind,
                method="choice",
                status=OK if chosen is not None else (answer.status if answer.status != OK else "unparsed"),
                context=request.messages[-1]["content"],
            )
            row.update(
                n_tokens=0,
                reason=answer.reason,
                reply=answer.reply,
                options_shown=",".join(map(str, order)),
            )
            rows.append(row)
        return rows

    def score_rows(
        self,
        model: LanguageModel,
        item: ChoiceItem,
        answers: Sequence[LogProb],
        *,
        method: str,
        measure: str,
        context: str = "",
        values: Sequence[float] | None = None,
    ) -> list[dict[str, Any]]:
        """Option rows of ``item`` from one answer per option (``values``: the scores, default the answers' values)."""
        import math

        statuses = [answer.status for answer in answers]
        scores = list(values) if values is not None else [answer.value for answer in answers]
        scores = [score if status == OK else math.nan for score, status in zip(scores, statuses, strict=True)]
        rows = option_rows(
            item,
            scores,
            model=model.name,
            model_kind=model.kind,
            method=method,
            measure=measure,
            statuses=statuses,
            context=context,
        )
        for row, answer in zip(rows, answers, strict=True):
            row.update(n_tokens=int(answer.n_tokens), reason=answer.reason, reply="", options_shown="")
        return rows

    def item_rows(
        self,
        model: LanguageModel,
        items: Sequence[ChoiceItem],
        answers: Sequence[LogProb],
        *,
        method: str,
        measure: str,
        context: Callable[[ChoiceItem], str] | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """Each item's option rows (:meth:`score_rows`) by id; ``answers``: one per option of each item in turn."""
        out: dict[str, list[dict[str, Any]]] = {}
        at = 0
        for item in items:
            mine = answers[at : at + len(item.options)]
            at += len(item.options)
            shown = context(item) if context is not None else ""
            out[item.id] = self.score_rows(model, item, mine, method=method, measure=measure, context=shown)
        if at != len(answers):
            raise ValueError(f"{len(answers)} answers for the {at} options of {len(items)} items")
        return out

    # -- the table -----------------------------------------------------------------------------------
    def merge(self, rows: list[dict[str, Any]], models: Sequence[str]) -> pd.DataFrame:
        """The table, with a run report counting every row without a value or choice by model, method and status."""
        from assoc import from_records, set_run_report

        table = from_records(rows, scorer=self.name, extra_columns=list(self.extra_columns))
        return set_run_report(table, {"subset": dict(self._subset), "runs": run_counts(rows)})


def run_counts(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per model and method: its rows, items and measures, and the rows without a value or a choice by status.

    The run report's account of what the table leaves without a score (``without_value``:
    ``{status: rows}``; a choice row without a choice counts once, an option row per option).
    """
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (str(row["model"]), str(row["method"]))
        run = runs.setdefault(
            key,
            {
                "model": key[0],
                "model_kind": str(row["model_kind"]),
                "method": key[1],
                "rows": 0,
                "items": set(),
                "measures": {},
                "without_value": {},
            },
        )
        run["rows"] += 1
        run["items"].add(row["item_id"])
        run["measures"][row["measure"]] = run["measures"].get(row["measure"], 0) + 1
        if row["status"] != OK:
            run["without_value"][row["status"]] = run["without_value"].get(row["status"], 0) + 1
    out = []
    for run in runs.values():
        run["items"] = len(run["items"])
        run["without_value"] = dict(sorted(run["without_value"].items()))
        out.append(run)
    return out

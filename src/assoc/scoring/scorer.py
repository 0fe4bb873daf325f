"""The scorer interface: stimuli + models in, one association table out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc.components.base import Component

if TYPE_CHECKING:
    import pandas as pd

    from assoc.infra.cache import Cache, Namespace
    from assoc.scoring.units import WorkUnit
    from assoc.stimuli.sets import Stimuli


#: Part of every unit-cache namespace: bump when the driver's way of storing units changes.
UNIT_CACHE_VERSION = 1


class Scorer(Component):
    """Base class of every scorer.

    Subclasses set the class attributes and implement [`score`][assoc.scoring.scorer.Scorer.score]::

        class MyScorer(Scorer):
            name = "my_scorer"                  # what users type
            description = "One line."
            citation = "Author (year). Title. doi:..."
            measure = "cosine"                  # what the value column holds
            options = (Option("batch_size", int, 32, "rows per batch"),)
            default_models = ("glove-6b-50d",)  # used when the user names none
            requires_models = True              # False for model-free scorers
            needs_queries = False               # True: every design needs [MASK] queries
            extra_columns = {"oov": "True when a word is out of vocabulary"}

            def score(self, stimuli, models, *, progress):
                ...
                return assoc.table.from_records(rows, scorer=self.name, measure=self.measure)

    The core validates options on construction, stimuli before scoring
    ([`check_stimuli`][assoc.scoring.scorer.Scorer.check_stimuli]), and the returned table after scoring, then attaches
    provenance.

    **Work units (optional).** A scorer that implements [`plan`][assoc.scoring.scorer.Scorer.plan] and
    [`run_unit`][assoc.scoring.scorer.Scorer.run_unit] (and usually
    [`load_worker`][assoc.scoring.scorer.Scorer.load_worker]) instead of [`score`][assoc.scoring.scorer.Scorer.score]
    runs on any executor (``executor="local"`` or ``"ray"``): [`plan`][assoc.scoring.scorer.Scorer.plan] cuts the study
    into independent
    `WorkUnit` objects, a worker loads each model once
    ([`load_worker`][assoc.scoring.scorer.Scorer.load_worker]) and computes units with it
    ([`run_unit`][assoc.scoring.scorer.Scorer.run_unit]), and [`merge`][assoc.scoring.scorer.Scorer.merge] builds the
    table from all rows in plan order. The driver caches each finished unit's rows
    ([`unit_cache`][assoc.scoring.scorer.Scorer.unit_cache]), so an interrupted study resumes. A scorer that only
    implements [`score`][assoc.scoring.scorer.Scorer.score] runs with the local executor only.
    """

    kind: ClassVar[str] = "scorer"
    measure: ClassVar[str] = ""
    default_models: ClassVar[tuple[str, ...]] = ()
    requires_models: ClassVar[bool] = True
    needs_queries: ClassVar[bool] = False
    extra_columns: ClassVar[dict[str, str]] = {}

    def check_stimuli(self, stimuli: Stimuli) -> None:
        """Raise [`StimuliError`][assoc.StimuliError] if this scorer cannot use ``stimuli``.

        The default checks ``needs_queries``; override to add checks (call ``super()``).
        """
        if self.needs_queries:
            stimuli.require_queries(self.name)

    #: Bump when a change of the scorer's code changes its rows: cached units of older versions are not reused.
    cache_version: ClassVar[int] = 1

    def score(self, stimuli: Stimuli, models: Sequence[str], *, progress: bool) -> pd.DataFrame:
        """Measure every association in ``stimuli`` with every model.

        ``models`` is never empty when ``requires_models`` is true. ``progress``
        says whether to show progress bars (`assoc.infra.progress.bar`). Return
        an association table (`assoc.table.schema`).

        Override this, or implement the work-unit methods ([`plan`][assoc.scoring.scorer.Scorer.plan],
        [`run_unit`][assoc.scoring.scorer.Scorer.run_unit]) instead. The scoring layer never runs units itself: the
        driver (`assoc.executors.driver.run_scorer`, what [`assoc.score`][assoc.score] calls) is the one place that
        chooses between this method and the units, so a unit scorer's ``score`` is not called.
        """
        if self.supports_units():
            raise NotImplementedError(
                f"scorer {self.name!r} describes its work as units: run it with assoc.score({self.name!r}, ...) "
                "or assoc.executors.driver.run_scorer(scorer, stimuli, models)"
            )
        raise NotImplementedError(f"scorer {self.name!r} implements neither score() nor plan()/run_unit()")

    # -- work units (optional) --------------------------------------------------------------
    @classmethod
    def supports_units(cls) -> bool:
        """Whether this scorer describes its work as units (implements `plan` and `run_unit`)."""
        return cls.plan is not Scorer.plan and cls.run_unit is not Scorer.run_unit

    def plan(self, stimuli: Stimuli, models: Sequence[str]) -> list[WorkUnit]:
        """Cut the study into independent work units, in the order their rows appear in the table.

        Runs in the driver, before any model loads: check here what can be checked without
        a model. Keys must be unique and stable across runs; payloads JSON-compatible.
        """
        raise NotImplementedError

    def load_worker(self, model: str) -> Any:
        """Load what a worker needs for the units of ``model`` (e.g. the model itself); once per worker.

        The returned state is passed to every [`run_unit`][assoc.scoring.scorer.Scorer.run_unit] call of that model on
        that worker, and to [`release_worker`][assoc.scoring.scorer.Scorer.release_worker] before the worker moves to
        another model. The default loads nothing (``None``).
        """
        return None

    def run_unit(self, state: Any, unit: WorkUnit) -> list[dict[str, Any]]:
        """Compute one unit with the worker ``state`` of its model: a list of row dicts.

        Rows are JSON-compatible dicts (they are cached and may travel between machines),
        the same keys a row of [`assoc.table.from_records`][assoc.from_records] takes.
        """
        raise NotImplementedError

    def release_worker(self, state: Any) -> None:
        """Free a worker state from `load_worker`. The default calls its ``close()``, if any."""
        close = getattr(state, "close", None)
        if callable(close):
            close()

    def merge(self, rows: list[dict[str, Any]], models: Sequence[str]) -> pd.DataFrame:
        """Build the table from the rows of all units, in plan order (override to add warnings or columns)."""
        from assoc.table.schema import from_records

        return from_records(
            rows, scorer=self.name, measure=self.measure or None, extra_columns=list(self.extra_columns)
        )

    def run_cache(self) -> Cache:
        """The cache of this scorer's runs: everything it stores on disk goes there.

        The default follows the scorer's ``cache`` and ``cache_dir`` options when it declares
        them (`assoc.components.options.CACHE_OPTIONS`): the root ``cache_dir`` (default
        `assoc.infra.cache.default_root`), disabled with ``cache=False`` or when the scorer declares
        no ``cache`` option (then nothing is read or written, memos included).
        """
        from assoc.infra.cache import Cache

        return Cache(self.params.get("cache_dir"), enabled=bool(self.params.get("cache", False)))

    def unit_cache(self) -> Cache | None:
        """Where finished units' rows are cached (`run_cache`), or None for no cache."""
        cache = self.run_cache()
        return cache if cache.enabled else None

    def unit_namespace(self, model: str) -> Namespace | None:
        """The unit-cache namespace of ``model`` (None when the scorer caches nothing).

        A namespace holds everything that changes a unit's rows: the scorer, its cache version,
        its options (except where the cache lives) and the model's identity.
        """
        cache = self.unit_cache()
        if cache is None:
            return None
        options = self.unit_options(model)
        return cache.namespace(
            kind="units",
            version=UNIT_CACHE_VERSION,
            scorer=self.name,
            scorer_version=self.cache_version,
            options=options,
            model=model,
            fingerprint=self.identify_model(model) if model else "",
        )

    def unit_options(self, model: str) -> dict[str, Any]:
        """The options that key ``model``'s unit cache: every option except where the cache lives.

        Override to key an option by what it resolves to (an LM scorer's ``device="auto"`` by the device
        it picked, `assoc.lm.LMScorer`).
        """
        return {k: v for k, v in self.params.items() if k not in ("cache", "cache_dir")}

    def unit_report(self, state: Any, unit: WorkUnit) -> dict[str, Any] | None:
        """What the run report should count of ``unit``, just computed with the worker ``state`` (default: nothing).

        Called by every executor's worker right after [`run_unit`][assoc.scoring.scorer.Scorer.run_unit],
        in the process that ran the unit; the JSON-compatible dict travels back with the unit's rows
        (`UnitOutcome.report`) and the driver combines the reports of the units it computed
        ([`combine_unit_reports`][assoc.scoring.scorer.Scorer.combine_unit_reports]) into the run report
        (provenance's ``"run"``). A unit that came from the cache reports nothing: the report says what
        this run did (requests sent, retries, tokens used), not what the table holds.
        """
        return None

    def unit_complete(self, rows: list[dict[str, Any]]) -> bool:
        """Whether a unit's rows, just computed, are final, so that the driver caches them (default: yes).

        A scorer whose unit can finish with part of its work undone for now (a remote request that
        got no answer: the next run asks again) says no for such rows: they still enter this run's
        table, and the next run computes the unit again instead of reading it from the cache.
        """
        return True

    def merge_units(
        self, rows: list[dict[str, Any]], models: Sequence[str], reports: list[dict[str, Any]]
    ) -> pd.DataFrame:
        """The table of a unit run: the rows of all units (plan order) and the reports of the units computed here.

        The driver calls it once, after the last unit. The default is
        [`merge`][assoc.scoring.scorer.Scorer.merge] of the rows, with the units' reports added up
        ([`combine_unit_reports`][assoc.scoring.scorer.Scorer.combine_unit_reports]) before what
        ``merge`` reported itself in the run report (``reports`` is empty when every unit came from the
        cache: the run report then holds ``merge``'s own only). Override it to build the run report from
        both at once (the chat scorers: what was sent from the reports, what the replies say from the rows).
        """
        table = self.merge(rows, models)
        if reports:
            from assoc.scoring.output import RUN_REPORT_KEY, set_run_report

            combined = self.combine_unit_reports(reports)
            # what merge() reported of the whole table comes last: it knows more than any unit
            set_run_report(table, {**combined, **(table.attrs.get(RUN_REPORT_KEY) or {})})
        return table

    def combine_unit_reports(self, reports: list[dict[str, Any]]) -> dict[str, Any]:
        """The run report's part from the reports of the units computed, in plan order.

        Each report is a [`unit_report`][assoc.scoring.scorer.Scorer.unit_report]'s.

        The default adds numbers key by key (nested dicts key by key as well) and keeps the last value of
        anything else; override for other rules (a maximum, a list).
        """
        return merge_reports(reports)

    def describe_model(self, model: str) -> dict[str, Any]:
        """What provenance records of ``model`` beside its spec, path and fingerprint (default: nothing).

        `assoc.lm.LMScorer` adds the model's kind and the device it ran on.
        """
        return {}

    def unit_progress(self, unit: WorkUnit, **parts: Any) -> Namespace | None:
        """The checkpoints of ``unit`` while it is computed (None without a unit cache).

        A [`run_unit`][assoc.scoring.scorer.Scorer.run_unit] that takes long stores partial results there (e.g. a chunk
        of log probabilities at a time), reads them back when the unit is computed again after a kill, and calls
        ``discard()`` on it before returning the unit's rows, so that each result is stored once: as the unit's rows
        (`assoc.infra.cache.Namespace.progress`). ``parts`` are settings the checkpoints depend on beyond the unit
        cache's (e.g. the device type).
        """
        namespace = self.unit_namespace(unit.model)
        return namespace.progress(unit.fingerprint(), **parts) if namespace is not None else None

    def model_fingerprint(self, model: str) -> str:
        """A stable identity of ``model``'s weights for the unit cache (default: the name itself).

        Override when the name is not enough (the masked-LM scorers hash local directories and
        use the Hub commit). Never called for a model given as an object in memory:
        [`identify_model`][assoc.scoring.scorer.Scorer.identify_model] hashes its weights instead.
        """
        return model

    def identify_model(self, model: str) -> str:
        """``model``'s identity for provenance and the unit cache: what the core calls.

        The SHA-256 of the weights of a model given as an object in memory
        (`assoc.models.memory.fingerprint`), else [`model_fingerprint`][assoc.scoring.scorer.Scorer.model_fingerprint].
        """
        from assoc.models.memory import fingerprint, in_memory

        loaded = in_memory(model)
        return fingerprint(loaded) if loaded is not None else self.model_fingerprint(model)


def merge_reports(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Reports added key by key: numbers summed, dicts merged the same way, anything else the last one's."""
    out: dict[str, Any] = {}
    for report in reports:
        for key, value in report.items():
            known = out.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float, dict)):
                out[key] = value
            elif isinstance(value, dict):
                out[key] = merge_reports([known, value]) if isinstance(known, dict) else merge_reports([value])
            elif isinstance(known, (int, float)) and not isinstance(known, bool):
                out[key] = known + value
            else:
                out[key] = value
    return out

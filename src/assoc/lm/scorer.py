"""The neutral base of every scorer that runs a language model: :class:`LMScorer` (the bridge to :mod:`assoc.scoring`).

An :class:`LMScorer` is a unit scorer: :meth:`~LMScorer.plan` cuts the study's items into work units
(model x block of ``unit_size`` items, JSON payloads) after checking **every model before any
work** (its kind resolved, the kind's ``check`` run, the scorer's request kinds served by the kind:
one line otherwise, :func:`assoc.lm.loading.check_model`); :meth:`~LMScorer.load_worker` opens the
model with the one loader (:func:`assoc.lm.loading.open_model`: a
:class:`~assoc.lm.kinds.LanguageModel` of its kind, taken from the process's model cache);
:meth:`~LMScorer.run_unit` calls the subclass's :meth:`~LMScorer.score_items` with the unit's
checkpoint namespace, so a killed run resumes inside the unit, and deletes the checkpoints once
the unit's rows are done (the rows, stored by the driver, are the one copy of the results).

This is the only module of :mod:`assoc.lm` that imports :mod:`assoc.scoring` (a test keeps it so):
the engines and kinds sit below the scoring layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from assoc.lm.options import MODEL_OPTIONS, ModelSettings
from assoc.scoring.scorer import Scorer
from assoc.scoring.units import WorkUnit
from assoc.stimuli.design import Filling, MaskItem

if TYPE_CHECKING:
    from assoc.components.options import Option
    from assoc.infra.cache import Cache, Namespace
    from assoc.lm.kinds import LanguageModel
    from assoc.stimuli.sets import Stimuli


@dataclass
class LMWorker:
    """The worker state of an :class:`LMScorer`: the opened model and the run's cache (None with ``cache=False``).

    ``model`` is a :class:`~assoc.lm.kinds.LanguageModel`; a local kind's loaded engine (a
    :class:`~assoc.lm.masked.MaskedLM`, a :class:`~assoc.lm.causal.CausalLM`) is its ``engine``.
    """

    model: LanguageModel
    cache: Cache | None

    def close(self) -> None:
        """Close the model's handle (shared weights stay in the process's model cache until it frees them)."""
        self.model.close()


def encode_items(items: Sequence[MaskItem], masks: dict[str, dict[str, tuple[str, ...]]]) -> list[Any]:
    """A JSON payload for ``items`` (whole fillings with all their design's options).

    Blocks of ``[design, [[group, [option, ...]], ...], [[query, text, target_group, target,
    attribute_group, attribute], ...]]``, so the options of a design are written once per block.
    """
    blocks: list[Any] = []
    last: Filling | None = None
    for item in items:
        filling = item.filling
        if filling is last:
            continue
        last = filling
        if not blocks or blocks[-1][0] != filling.design:
            mask = [[group, list(options)] for group, options in masks[filling.design].items()]
            blocks.append([filling.design, mask, []])
        blocks[-1][2].append(
            [
                filling.query,
                filling.text,
                filling.target_group,
                filling.target,
                filling.attribute_group,
                filling.attribute,
            ]
        )
    return blocks


def _joined_reports(reports: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Reports added key by key: numbers summed, dicts merged the same way, lists joined, else the last one's."""
    out: dict[str, Any] = {}
    for report in reports:
        for key, value in report.items():
            known = out.get(key)
            if isinstance(value, dict):
                out[key] = _joined_reports([known, value] if isinstance(known, dict) else [value])
            elif isinstance(value, list):
                out[key] = [*known, *value] if isinstance(known, list) else list(value)
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(known, (int, float)):
                out[key] = known + value if not isinstance(known, bool) else value
            else:
                out[key] = value
    return out


def decode_items(payload: Sequence[Any]) -> list[MaskItem]:
    """The items of a payload from :func:`encode_items`, in their original order."""
    items: list[MaskItem] = []
    for design, mask, fillings in payload:
        for fields in fillings:
            filling = Filling(design, *fields)
            items.extend(MaskItem(filling, group, option) for group, options in mask for option in options)
    return items


class LMScorer(Scorer):
    """Base of every scorer that runs a language model: work units, the one loader, model options, checkpoints.

    Class attributes
    ----------------
    requests:
        The request kinds the scorer sends (:data:`assoc.lm.requests.REQUEST_KINDS`); a model whose kind
        does not serve one of them is refused before any work. Scorers that work on a kind's engine
        directly (fmat's word pieces) name the kinds they take in ``model_kinds`` instead.
    request_sets:
        Alternatives to ``requests`` for a scorer that asks different kinds of model differently, in order of
        preference: a model's kind must serve one of the sets, and the scorer sends it the first set it serves
        (:meth:`requests_for`; DiscrimEval sends ``continuation`` to a likelihood model, else ``generate``).
        Empty (the default): ``requests`` alone.
    model_kinds:
        The model kinds the scorer accepts (``None``: every registered kind that serves ``requests``, or one
        of ``request_sets``).
    default_kind:
        The kind of a bare spec whose files cannot tell (``None``: the scorer's one kind, if it takes one).

    Subclasses declare their options with :data:`assoc.lm.MODEL_OPTIONS` (or
    :func:`assoc.lm.options_for` of the kinds they accept), and implement :meth:`score_items`; those
    whose items are not the stimuli's ``[MASK]`` items also implement :meth:`unit_blocks` and
    :meth:`decode`. :meth:`check_items` checks items before any model loads.
    """

    requests: ClassVar[frozenset[str]] = frozenset()
    request_sets: ClassVar[tuple[frozenset[str], ...]] = ()
    model_kinds: ClassVar[tuple[str, ...] | None] = None
    default_kind: ClassVar[str | None] = None
    options: ClassVar[tuple[Option, ...]] = MODEL_OPTIONS

    # -- models -------------------------------------------------------------------------------------
    @classmethod
    def request_alternatives(cls) -> tuple[frozenset[str], ...]:
        """The request kinds the scorer may send a model, as alternatives: ``request_sets``, else ``(requests,)``."""
        return tuple(frozenset(s) for s in cls.request_sets) or (frozenset(cls.requests),)

    def requests_for(self, kind: type[LanguageModel]) -> frozenset[str] | None:
        """The request kinds this scorer sends a model of ``kind``: the first alternative it serves (None: none)."""
        for wanted in self.request_alternatives():
            if set(wanted) <= set(kind.serves):
                return frozenset(wanted)
        return None

    def accepted_kinds(self) -> list[str]:
        """The model kinds this scorer takes: ``model_kinds``, else every registered kind serving its requests."""
        if self.model_kinds is not None:
            return list(self.model_kinds)
        from assoc.lm.loading import registered_kinds

        return [name for name, kind in registered_kinds().items() if self.requests_for(kind) is not None]

    def model_requests(self, model: str) -> list[str]:
        """The request kinds sent to ``model`` (what its kind must serve): the alternative its kind serves."""
        wanted = self.requests_for(self.model_kind(model))
        return sorted(wanted if wanted is not None else self.requests)

    def model_kind(self, model: str) -> type[LanguageModel]:
        """The kind of ``model`` (:func:`assoc.lm.loading.resolve_kind`), refused in one line when not accepted."""
        from assoc.lm.loading import resolve_kind

        return resolve_kind(model, kinds=self.accepted_kinds(), default_kind=self.default_kind, scorer=self.name)

    def check_models(self, models: Sequence[str]) -> None:
        """Check every model before any work: its kind, the request kinds it serves, the kind's own checks."""
        from assoc.lm.loading import check_model

        for model in models:
            check_model(
                model,
                self.params,
                kinds=self.accepted_kinds(),
                default_kind=self.default_kind,
                scorer=self.name,
                requests=self.model_requests(model),
            )

    def resolved_device(self) -> str:
        """The device the models run on: the ``device`` option with ``auto`` resolved (CUDA when available)."""
        settings = ModelSettings.of(self.params)
        device = settings.device_for_backend
        if device == "auto":
            from assoc.lm.identity import resolve_device

            device = resolve_device(device)
        return device

    def describe_model(self, model: str) -> dict[str, Any]:
        """What provenance records of ``model`` beside its spec and fingerprint: its kind, and its device.

        The device only for a local kind: the one ``device="auto"`` resolved to, or for a model held in
        memory its own.
        """
        from assoc.models.memory import in_memory

        kind = self.model_kind(model)
        record: dict[str, Any] = {"kind": kind.kind}
        described = kind.describe_spec(model, self.params, self.run_cache())
        record.update({k: v for k, v in described.items() if k != "kind"})
        if kind.local:
            held = in_memory(model)
            if isinstance(held, tuple):
                record["device"] = str(held[0].get_input_embeddings().weight.device)
            else:
                record["device"] = self.resolved_device()
        return record

    def model_fingerprint(self, model: str) -> str:
        """The weights' identity without loading them (the kind's ``identify``: a folder's hash or the Hub commit)."""
        return self.model_kind(model).identify(model, self.params, self.run_cache())

    def identify_model(self, model: str) -> str:
        """``model``'s identity as the run first found it, for the whole run (unit cache, provenance, check at load).

        A model folder whose files change during the run (replaced, rewritten) would otherwise have its rows
        stored under one identity and described in provenance under another; :meth:`load_worker` refuses
        weights that are not the ones the run started with.
        """
        known: dict[str, str] = self.__dict__.setdefault("_identities", {})
        if model not in known:
            known[model] = super().identify_model(model)
        return known[model]

    def unit_options(self, model: str) -> dict[str, Any]:
        """The options in ``model``'s unit-cache key; for a local kind ``device`` as resolved (``auto`` -> ``cpu``).

        So ``device="auto"`` and ``device="cpu"`` share their results on a machine without CUDA, and a
        run on a GPU never reads a CPU run's rows.
        """
        options = super().unit_options(model)
        if "device" in options and self.model_kind(model).local:
            options["device"] = self.resolved_device()
        return options

    # -- work units ---------------------------------------------------------------------------------
    def check_items(self, items: list[Any], models: Sequence[str]) -> None:
        """Raise :class:`~assoc.errors.StimuliError` or :class:`~assoc.errors.OptionError` for bad items.

        Called in :meth:`plan`, after the models' checks and before any model loads.
        """

    def items_per_unit(self) -> int:
        """Items per unit: the ``unit_size`` option.

        The default, 512, is large enough that a unit's engine calls fill their batches on a CPU and
        the per-unit cost (a Ray call, a cache pack) is small, and small enough for progress, load
        balance and resuming; on GPUs a unit of 512 short queries takes milliseconds (docs/scale.md).
        """
        return int(self.params["unit_size"])

    def preferred_unit_items(self, models: Sequence[str], per_unit: int) -> int:
        """``per_unit``, or, while ``unit_size`` is at its default, what the models' kinds prefer (``unit_items``).

        Every model's kind must prefer a size (the smallest is taken): a remote kind's units are only the
        grain of planning (its answers are stored as they arrive), so one unit per study keeps the server busy.
        """
        default = next((o.default for o in MODEL_OPTIONS if o.name == "unit_size"), None)
        if per_unit != default or not models:
            return per_unit
        preferred = [self.model_kind(model).unit_items for model in models]
        if any(size is None for size in preferred):
            return per_unit
        return min(int(size) for size in preferred if size is not None)

    def unit_resources(self, model: str) -> dict[str, float]:
        """What one worker of ``model`` needs: a GPU when a local kind runs it on CUDA, else one CPU."""
        if self.model_kind(model).local and self.resolved_device().startswith("cuda"):
            return {"GPU": 1.0, "CPU": 1.0}
        return {"CPU": 1.0}

    def unit_blocks(self, stimuli: Stimuli, models: Sequence[str]) -> list[tuple[Any, int]]:
        """The study cut into ``(payload, size)`` blocks of :meth:`items_per_unit` items, in order.

        The default cuts the stimuli's ``[MASK]`` items (:meth:`assoc.Stimuli.mask_items`) into blocks of
        whole filled queries (each with every option of its design: :func:`encode_items`), after
        :meth:`check_items`; :meth:`decode` reads a block back.
        """
        items = stimuli.mask_items()
        self.check_items(items, models)
        masks = {design.name: dict(design.mask) for design in stimuli.designs}
        blocks: list[list[MaskItem]] = []
        count, last, per_unit = 0, None, self.preferred_unit_items(models, self.items_per_unit())
        for item in items:
            if item.filling is not last:
                last = item.filling
                if not blocks or count == per_unit:
                    blocks.append([])
                    count = 0
                count += 1
            blocks[-1].append(item)
        return [(encode_items(block, masks), len(block)) for block in blocks]

    def decode(self, payload: Any) -> list[Any]:
        """The items of a unit's payload (the default reads :meth:`unit_blocks`' ``[MASK]`` items back)."""
        return decode_items(payload)

    def plan(self, stimuli: Stimuli, models: Sequence[str]) -> list[WorkUnit]:
        """One unit per model and block of items (:meth:`unit_blocks`), after every model is checked."""
        self.check_stimuli(stimuli)
        self.check_models(models)
        blocks = self.unit_blocks(stimuli, models)
        resources = {model: self.unit_resources(model) for model in models}
        return [
            WorkUnit(key=f"{model}#{i}", model=model, payload=payload, size=size, resources=resources[model])
            for model in models
            for i, (payload, size) in enumerate(blocks)
        ]

    def open_options(self) -> dict[str, Any]:
        """The options the one loader opens a model with: the scorer's options (``params``).

        A scorer whose kind needs more than ``params`` keep (the chat scorers: a base URL's credentials,
        kept out of ``params`` so that provenance never holds them) overrides it.
        """
        return self.params

    def load_worker(self, model: str) -> LMWorker:
        """Open ``model`` with the one loader (the process's model cache keeps it for later units and calls)."""
        from assoc.lm.loading import open_model

        cache = self.run_cache()
        opened = open_model(
            model,
            self.open_options(),
            cache,
            kinds=self.accepted_kinds(),
            default_kind=self.default_kind,
            scorer=self.name,
            requests=self.model_requests(model),
        )
        loaded = getattr(getattr(opened, "engine", None), "fingerprint", None)
        expected = self.identify_model(model)
        from assoc.lm.identity import is_content_fingerprint

        if opened.local and loaded is not None and is_content_fingerprint(expected) and str(loaded) != expected:
            opened.close()
            from assoc.errors import ModelError

            raise ModelError(
                f"model {model!r} changed while the run was going: the weights loaded now ({str(loaded)[:19]}...) are "
                f"not those the run started with ({expected[:19]}...), under which its rows are kept; run again "
                "once the folder stays as it is"
            )
        return LMWorker(opened, cache if cache.enabled else None)

    def unit_checkpoints(self, state: LMWorker, unit: WorkUnit, kind: str | None = None) -> Namespace | None:
        """Where ``unit``'s partial results are checkpointed while it is computed (None with ``cache=False``).

        A :meth:`~assoc.scoring.scorer.Scorer.unit_progress` namespace named ``kind`` (default
        :meth:`checkpoint_name`) that also holds what the model's numbers
        depend on beyond the options (:meth:`assoc.lm.kinds.LanguageModel.cache_parts`: the weights'
        fingerprint, dtype, device type and any backend other than PyTorch).
        """
        if not state.model.local:  # a remote kind stores every answer on arrival: that is its checkpoint
            return None
        return self.unit_progress(unit, kind=kind or self.checkpoint_name(), **state.model.cache_parts())

    def checkpoint_name(self) -> str:
        """The name of a unit's checkpoints while it is computed (default ``"<scorer>-log-prob"``)."""
        return f"{self.name}-log-prob"

    def run_unit(self, state: LMWorker, unit: WorkUnit) -> list[dict[str, Any]]:
        """The rows of one unit: :meth:`score_items` with the unit's checkpoints, deleted once the rows are done."""
        items = self.decode(unit.payload)
        checkpoints = self.unit_checkpoints(state, unit)
        rows = self.score_items(state.model, items, checkpoints)
        for row in rows:
            row.setdefault("model", unit.model)
        if checkpoints is not None:
            checkpoints.discard()
        return rows

    def unit_report(self, state: LMWorker, unit: WorkUnit) -> dict[str, Any] | None:
        """What the model did for ``unit`` (:meth:`assoc.lm.LanguageModel.take_report`: requests sent, refusals)."""
        return state.model.take_report()

    def combine_unit_reports(self, reports: list[dict[str, Any]]) -> dict[str, Any]:
        """The units' reports added up: numbers summed, dicts merged the same way, lists (failures) joined."""
        return _joined_reports(reports)

    def score_items(
        self, model: LanguageModel, items: list[Any], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """The table rows of ``items`` under ``model``; store partial results in ``checkpoints`` (may be None).

        ``model`` is the opened :class:`~assoc.lm.kinds.LanguageModel`: send it requests
        (``model.sentence(...)``, ``model.choose(...)``, with ``checkpoints=checkpoints``), or use its
        ``engine`` for a local kind. Rows without a ``model`` key get the unit's model.
        """
        raise NotImplementedError(f"scorer {self.name!r} (an LMScorer) does not implement score_items()")

"""What the masked-LM scorers (fmat, pll) share: their work units and their workers.

A unit is one model x a block of consecutive filled queries (with every ``[MASK]``
option of each); a worker takes the model from the process's model cache
(:func:`assoc.lm.masked.cached_masked_lm`: loaded once per process, kept for later calls) and
computes the units of that model with it. While a unit is computed, its log probabilities
are checkpointed chunk by chunk (:meth:`MaskedLMScorer.unit_checkpoints`), so a killed run
resumes inside the unit; once the unit's rows are done the checkpoints are deleted, and the
rows (stored by the driver) are the one copy of the results in the cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assoc.scoring.scorer import Scorer
from assoc.scoring.units import WorkUnit
from assoc.stimuli.design import Filling, MaskItem

if TYPE_CHECKING:
    from assoc.infra.cache import Cache, Namespace
    from assoc.stimuli.sets import Stimuli


@dataclass
class MaskedLMWorker:
    """The worker state of a masked-LM scorer: the loaded model and the run's cache (None with ``cache=False``)."""

    lm: Any
    cache: Cache | None

    def close(self) -> None:
        """Drop this worker's handle and any temporary tokens it added.

        The weights stay in the process's model cache until :func:`assoc.lm.masked.release_masked_lms`
        or the cache's memory budget frees them.
        """
        self.lm.close()


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


def decode_items(payload: Sequence[Any]) -> list[MaskItem]:
    """The items of a payload from :func:`encode_items`, in their original order."""
    items: list[MaskItem] = []
    for design, mask, fillings in payload:
        for fields in fillings:
            filling = Filling(design, *fields)
            items.extend(MaskItem(filling, group, option) for group, options in mask for option in options)
    return items


class MaskedLMScorer(Scorer):
    """Base of the masked-LM scorers: work units of filled queries, one model loaded per worker.

    Subclasses implement :meth:`check_items` (checks before any model loads) and
    :meth:`run_unit` (``state.lm`` is the :class:`~assoc.lm.masked.MaskedLM`; checkpoint long units
    with :meth:`unit_checkpoints`), and declare :data:`assoc.lm.masked.options.MODEL_OPTIONS`.
    """

    def check_items(self, items: list[MaskItem], models: Sequence[str]) -> None:
        """Raise :class:`~assoc.errors.StimuliError` or :class:`~assoc.errors.OptionError` for bad items.

        Called in :meth:`plan`, before any model loads.
        """

    def unit_fillings(self) -> int:
        """Filled queries per unit: the ``unit_size`` option.

        The default, 512, is large enough that a unit's engine calls fill their batches on a CPU and
        the per-unit cost (a Ray call, a cache pack) is small, and small enough for progress, load
        balance and resuming; on GPUs a unit of 512 short queries takes milliseconds (docs/scale.md).
        """
        return int(self.params["unit_size"])

    def unit_resources(self) -> dict[str, float]:
        """What one worker needs: a GPU when the device is CUDA, else one CPU."""
        device = str(self.params.get("device", "cpu"))
        return {"GPU": 1.0, "CPU": 1.0} if device.startswith("cuda") else {"CPU": 1.0}

    def check_backend(self, models: Sequence[str]) -> None:
        """Refuse a ``backend`` the device, dtype or models cannot run (:class:`~assoc.errors.OptionError`).

        Called in :meth:`plan`, before any model loads: the ONNX backends run float32 weights on
        the CPU, for models loaded by name or directory (:mod:`assoc.lm.masked.onnx`).
        """
        from assoc.errors import OptionError
        from assoc.lm.masked.options import check_backend_settings
        from assoc.scoring.models import in_memory

        backend = self.params["backend"]
        check_backend_settings(backend, device=self.params["device"], dtype=self.params["dtype"])
        if backend != "torch":
            held = [model for model in models if in_memory(model) is not None]
            if held:
                raise OptionError(
                    f"backend {backend!r} applies to models loaded by name or directory; {held[0]!r} is in "
                    "memory (use backend='torch')"
                )

    def plan(self, stimuli: Stimuli, models: Sequence[str]) -> list[WorkUnit]:
        """One unit per model and block of :meth:`unit_fillings` filled queries, in design order."""
        self.check_stimuli(stimuli)
        self.check_backend(models)
        items = stimuli.mask_items()
        self.check_items(items, models)
        masks = {design.name: dict(design.mask) for design in stimuli.designs}
        blocks: list[list[MaskItem]] = []
        count, last, per_unit = 0, None, self.unit_fillings()
        for item in items:
            if item.filling is not last:
                last = item.filling
                if not blocks or count == per_unit:
                    blocks.append([])
                    count = 0
                count += 1
            blocks[-1].append(item)
        payloads = [(encode_items(block, masks), len(block)) for block in blocks]
        resources = self.unit_resources()
        return [
            WorkUnit(key=f"{model}#{i}", model=model, payload=payload, size=size, resources=resources)
            for model in models
            for i, (payload, size) in enumerate(payloads)
        ]

    def load_worker(self, model: str) -> MaskedLMWorker:
        """Take ``model`` from the process's model cache and open the engine's result cache.

        The model is loaded on the configured device and dtype the first time and reused after.
        """
        from assoc.lm.masked import cached_masked_lm

        p = self.params
        cache = self.run_cache()
        lm = cached_masked_lm(
            model, device=p["device"], dtype=p["dtype"], revision=p["revision"], memo=cache, backend=p["backend"]
        )
        return MaskedLMWorker(lm, cache if cache.enabled else None)

    def unit_checkpoints(self, state: MaskedLMWorker, unit: WorkUnit, kind: str) -> Namespace | None:
        """Where ``unit``'s log probabilities are checkpointed while it is computed (None with ``cache=False``).

        A :meth:`~assoc.scoring.scorer.Scorer.unit_progress` namespace that also names what the engine's
        numbers depend on beyond the options (:func:`assoc.lm.masked.compute.engine_parts`: the weights'
        fingerprint, dtype, device type and any backend other than PyTorch).
        Call ``discard()`` on it once the unit's rows are computed.
        """
        from assoc.lm.masked.compute import engine_parts

        return self.unit_progress(unit, kind=kind, **engine_parts(state.lm))

    def model_fingerprint(self, model: str) -> str:
        """The weights' identity (local directory hash or Hub commit), without loading the model."""
        from assoc.lm.masked.loading import model_fingerprint

        return model_fingerprint(model, self.params["revision"], self.run_cache())

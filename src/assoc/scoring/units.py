"""Work units: how a scorer describes its work so that an executor can run it anywhere.

A scorer that opts in (see :class:`~assoc.scoring.scorer.Scorer` and ``docs/write-a-plugin.md``)
cuts a study into independent :class:`WorkUnit` objects (e.g. one model x one chunk of
filled sentences). An executor (:mod:`assoc.executors`) runs them, in this process or
on a Ray cluster; the driver (:func:`assoc.executors.driver.run_study`) stores each
finished unit's rows in the on-disk cache as it arrives and merges all rows, in plan
order, into one association table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assoc.errors import AssocError, PluginError


@dataclass(frozen=True)
class WorkUnit:
    """One independent piece of a study.

    Attributes
    ----------
    key:
        Unique within the study and stable across runs (e.g. ``"bert-base-uncased#3"``);
        it names the unit in errors and, with the payload, keys the unit's cached rows.
    model:
        The model the unit runs on, exactly as the user gave it (``""`` for a model-free
        scorer). A worker loads it once (``Scorer.load_worker``) and reuses it for every
        unit of that model it runs.
    payload:
        What the unit computes: JSON-compatible data (dicts, lists, text, numbers, booleans,
        None), so that it can be sent to another machine and hashed for the cache.
    size:
        The amount of work, in the scorer's items (e.g. sentences): progress bars count it.
    resources:
        What one worker running the unit needs, in Ray's resource names: ``{"CPU": 1}``,
        ``{"GPU": 1, "CPU": 1}``, ... The local executor ignores it.
    """

    key: str
    model: str
    payload: Any = field(hash=False)
    size: int = 1
    resources: Mapping[str, float] = field(default_factory=lambda: {"CPU": 1.0}, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:
            raise PluginError(f"a work unit needs a non-empty text key, got {self.key!r}")
        if not isinstance(self.model, str):
            raise PluginError(f"work unit {self.key!r}: model must be text, got {self.model!r}")
        if not isinstance(self.size, int) or isinstance(self.size, bool) or self.size < 0:
            raise PluginError(f"work unit {self.key!r}: size must be a non-negative integer, got {self.size!r}")
        for name, amount in dict(self.resources).items():
            if not isinstance(name, str) or not isinstance(amount, (int, float)) or amount < 0:
                raise PluginError(
                    f"work unit {self.key!r}: resources map names to non-negative numbers, got {name!r}: {amount!r}"
                )

    def fingerprint(self) -> str:
        """A digest of the key, model and payload: the unit's cache key."""
        from assoc.infra.cache import digest

        return digest([self.key, self.model, self.payload])[:40]


@dataclass
class UnitOutcome:
    """What a worker sends back for one unit: its rows, the warnings raised meanwhile, the threads used, its report.

    ``threads`` is torch's intra-op thread count while the unit ran (``None``: torch was not imported
    in the worker); provenance records it (:mod:`assoc.infra.threads`). ``report`` is what the scorer
    counted of the unit (``Scorer.unit_report``: requests sent, retries,
    tokens used; ``None``: nothing), which the driver combines into the run report.
    """

    key: str
    rows: list[dict[str, Any]]
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (category as module:qualname, message)
    threads: int | None = None
    report: dict[str, Any] | None = None


class UnitError(AssocError):
    """A work unit failed in a way that retrying cannot fix (e.g. its model cannot be loaded)."""

    def __init__(self, unit: WorkUnit, cause: str, finished: int = 0):
        model = f"model {unit.model!r}" if unit.model else "no model"
        super().__init__(
            f"work unit {unit.key!r} ({model}) failed: {cause}; {finished} finished unit(s) are kept "
            "in the cache, so running the same study again resumes from there"
        )
        self.unit = unit


def check_plan(units: Any, models: Sequence[str], scorer: str) -> list[WorkUnit]:
    """Validate a scorer's plan: a list of :class:`WorkUnit` with unique keys, JSON payloads and known models."""
    if not isinstance(units, (list, tuple)):
        raise PluginError(f"scorer {scorer!r}: plan() must return a list of WorkUnit, got {type(units).__name__}")
    seen: set[str] = set()
    known = set(models)
    for unit in units:
        if not isinstance(unit, WorkUnit):
            raise PluginError(f"scorer {scorer!r}: plan() returned {type(unit).__name__}, not a WorkUnit")
        if unit.key in seen:
            raise PluginError(f"scorer {scorer!r}: two work units share the key {unit.key!r}")
        seen.add(unit.key)
        if unit.model and unit.model not in known:
            raise PluginError(
                f"scorer {scorer!r}: work unit {unit.key!r} names model {unit.model!r}, "
                f"which is not one of the models being scored"
            )
        try:
            json.dumps(unit.payload, allow_nan=True)
        except (TypeError, ValueError) as exc:
            raise PluginError(
                f"scorer {scorer!r}: the payload of work unit {unit.key!r} is not JSON-compatible ({exc})"
            ) from exc
    return list(units)

"""Model-free scorers that describe their work as units, for the executor tests.

They live in an importable module (not in a test file) because Ray workers unpickle
them: the tests put this directory on the workers' ``PYTHONPATH``.

``value = scale * (len(target) - len(attribute))`` for every word pair of every design;
one unit per model and block of ``per_unit`` pairs. When ``$ASSOC_TEST_UNIT_LOG`` names a
file, every ``load_worker`` and ``run_unit`` call appends a line to it (``load <model>
<pid>`` / ``unit <key> <pid>``), so tests can count work across processes;
``$ASSOC_TEST_UNIT_SLEEP`` seconds are slept per unit (with ``$ASSOC_TEST_UNIT_STUCK`` set, in one step
that Ctrl-C cannot interrupt, as a long torch step); loading the model named by
``$ASSOC_TEST_FAIL_MODEL`` raises ``OSError``.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import numpy as np

from assoc import Option, Scorer, hookimpl
from assoc.components.options import CACHE_OPTIONS
from assoc.scoring.units import WorkUnit


def _log(line: str, path: str | None) -> None:
    path = path or os.environ.get("ASSOC_TEST_UNIT_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


class LengthUnits(Scorer):
    """Length differences of word pairs, computed unit by unit."""

    name = "length_units"
    description = "test scorer with work units"
    citation = "none"
    measure = "length_difference"
    requires_models = True
    default_models = ("len",)
    extra_columns = {"design": "the design"}
    options = (
        Option("scale", float, 1.0, "multiplier"),
        Option("per_unit", int, 2, "pairs per unit"),
        Option("log", str, None, "call log file (default $ASSOC_TEST_UNIT_LOG)"),
        Option("sleep", float, 0.0, "seconds slept per unit (added to $ASSOC_TEST_UNIT_SLEEP)"),
        Option("fail_model", str, None, "a model whose load_worker raises (or $ASSOC_TEST_FAIL_MODEL)"),
        Option("fail_flag", str, None, "with fail_model: raise only while this file exists"),
        Option("numpy_values", bool, False, "values as numpy float32 scalars (as numpy-based scorers return them)"),
        Option("report", bool, False, "report each unit computed (Scorer.unit_report): its pairs, per model"),
        Option("incomplete", str, None, "a target whose units are not complete (Scorer.unit_complete): never cached"),
        Option("count_in_merge", bool, False, "merge_units writes the run report: rows and units' reports it got"),
        Option(
            "die_at",
            str,
            None,
            "the key of a unit whose worker process kills itself the first time "
            "(a marker file next to the log remembers it)",
        ),
        *CACHE_OPTIONS,
    )

    def plan(self, stimuli: Any, models: Any) -> list[WorkUnit]:
        pairs = [[d.name, *pair] for d in stimuli for pair in d.word_pairs()]
        size = self.params["per_unit"]
        blocks = [pairs[i : i + size] for i in range(0, len(pairs), size)]
        return [WorkUnit(f"{m}#{i}", m, block, size=len(block)) for m in models for i, block in enumerate(blocks)]

    def load_worker(self, model: str) -> dict[str, Any]:
        _log(f"load {model} {os.getpid()}", self.params["log"])
        flag = self.params["fail_flag"]
        failing = model == self.params["fail_model"] and (flag is None or os.path.exists(flag))
        if failing or model == os.environ.get("ASSOC_TEST_FAIL_MODEL"):
            raise OSError(f"cannot open model {model}")
        return {"model": model, "pid": os.getpid()}

    def run_unit(self, state: Any, unit: WorkUnit) -> list[dict[str, Any]]:
        assert state["model"] == unit.model
        _log(f"unit {unit.key} {os.getpid()}", self.params["log"])
        seconds = self.params["sleep"] + float(os.environ.get("ASSOC_TEST_UNIT_SLEEP", "0"))
        if os.environ.get("ASSOC_TEST_UNIT_STUCK"):
            # as one long torch step: this thread does not return to Python (nor see SIGINT) until it is done
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                time.sleep(seconds)
            finally:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        else:
            time.sleep(seconds)
        if unit.key == self.params["die_at"]:
            marker = str(self.params["log"]) + ".died"
            if not os.path.exists(marker):
                open(marker, "w").close()  # noqa: SIM115
                os.kill(os.getpid(), signal.SIGKILL)  # a worker lost mid-study, as the OOM killer would do
        number = np.float32 if self.params["numpy_values"] else float
        return [
            dict(
                model=unit.model,
                design=d,
                target_group=tg,
                target=t,
                attribute_group=ag,
                attribute=a,
                value=number(self.params["scale"] * (len(t) - len(a))),
            )
            for d, tg, t, ag, a in unit.payload
        ]

    def unit_report(self, state: Any, unit: WorkUnit) -> dict[str, Any] | None:
        if not self.params["report"]:
            return None
        return {"units": 1, "pairs": len(unit.payload), "by_model": {unit.model: len(unit.payload)}, "last": unit.key}

    def unit_complete(self, rows: list[dict[str, Any]]) -> bool:
        return all(row["target"] != self.params["incomplete"] for row in rows)

    def merge_units(self, rows: list[dict[str, Any]], models: Any, reports: list[dict[str, Any]]) -> Any:
        if not self.params["count_in_merge"]:
            return super().merge_units(rows, models, reports)
        from assoc import set_run_report

        return set_run_report(self.merge(rows, models), {"rows": len(rows), "reports": len(reports)})


@hookimpl
def register_scorers(register: Any) -> None:
    register(LengthUnits)


class ThreadsUnits(Scorer):
    """``value`` = torch's intra-op thread count seen inside the unit, for every word pair (tests of ``threads=``).

    torch is imported inside :meth:`run_unit` (not at module level), as a scorer that loads it
    lazily would; ``fail_at`` names a design whose unit raises after reading the count.
    """

    name = "threads_units"
    description = "test scorer: records torch.get_num_threads() inside each unit"
    citation = "none"
    measure = "torch_threads"
    default_models = ("m",)
    options = (Option("fail_at", str, None, "a design whose unit raises RuntimeError"), *CACHE_OPTIONS)

    def plan(self, stimuli: Any, models: Any) -> list[WorkUnit]:
        return [
            WorkUnit(f"{m}#{d.name}", m, [[d.name, *pair] for pair in d.word_pairs()]) for m in models for d in stimuli
        ]

    def run_unit(self, state: Any, unit: WorkUnit) -> list[dict[str, Any]]:
        import torch

        seen = torch.get_num_threads()
        if unit.payload and unit.payload[0][0] == self.params["fail_at"]:
            raise RuntimeError(f"unit {unit.key} fails on purpose")
        return [
            dict(model=unit.model, target_group=tg, target=t, attribute_group=ag, attribute=a, value=float(seen))
            for _, tg, t, ag, a in unit.payload
        ]


class ThreadsScore(Scorer):
    """The same as :class:`ThreadsUnits` through ``score()`` (a scorer without work units)."""

    name = "threads_score"
    description = "test scorer without units: records torch.get_num_threads() inside score()"
    citation = "none"
    measure = "torch_threads"
    default_models = ("m",)
    options = (Option("fail", bool, False, "raise RuntimeError inside score()"),)

    def score(self, stimuli: Any, models: Any, *, progress: bool) -> Any:
        import torch

        from assoc.table.schema import from_records

        seen = torch.get_num_threads()
        if self.params["fail"]:
            raise RuntimeError("score() fails on purpose")
        rows = [
            dict(model=m, target_group=tg, target=t, attribute_group=ag, attribute=a, value=float(seen))
            for m in models
            for d in stimuli
            for tg, t, ag, a in d.word_pairs()
        ]
        return from_records(rows, scorer=self.name, measure=self.measure)


class TorchFree(Scorer):
    """Word-length differences without torch, in units: a run that must not load torch even with ``threads=``."""

    name = "torch_free_units"
    description = "test scorer with units that never imports torch"
    citation = "none"
    measure = "length_difference"
    default_models = ("m",)

    def plan(self, stimuli: Any, models: Any) -> list[WorkUnit]:
        return [WorkUnit(f"{m}#all", m, [p for d in stimuli for p in d.word_pairs()]) for m in models]

    def run_unit(self, state: Any, unit: WorkUnit) -> list[dict[str, Any]]:
        return [
            dict(model=unit.model, target_group=tg, target=t, attribute_group=ag, attribute=a, value=len(t) - len(a))
            for tg, t, ag, a in unit.payload
        ]


class ThreadsPlugin:
    """The thread-recording scorers, for ``assoc.plugins.register(ThreadsPlugin(), name=...)``."""

    @hookimpl
    def register_scorers(self, register: Any) -> None:
        register(ThreadsUnits)
        register(ThreadsScore)
        register(TorchFree)

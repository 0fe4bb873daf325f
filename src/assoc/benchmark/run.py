"""One run, every benchmark: [`run_benchmarks`][assoc.run_benchmarks] (``assoc benchmark run``).

Runs a chosen set of registered benchmarks ([`Benchmark`][assoc.Benchmark]; default: every
one) on a set of models of any kind, and writes into one folder:

* ``tables/<benchmark>.parquet``: each benchmark's association table (every model that ran it), as
  ``assoc score`` writes it;
* ``results/<benchmark>.jsonl``: its analysis, as ``assoc analyze`` writes it (JSON Lines: a result's columns
  may mix numbers and text, ``1``, ``2`` and ``all``, which Parquet cannot hold), with its provenance beside it;
* ``summary.csv``: one table of headline numbers per benchmark, model and headline row, with intervals,
  read through each analysis's ``headline`` declaration
  ([`assoc.reporting.headlines.headline_table`][assoc.reporting.headlines.headline_table], what ``assoc report`` reads),
  and a row per benchmark a model could not run (``status`` ``skipped``, with the reason) or whose analysis failed
  (``failed``);
* ``report.html`` and ``card.md``: the report and bias card of the run ([`assoc.report`][assoc.report]);
* ``run.json``: what was asked and what each benchmark came to, rewritten (atomically) after each one.

Every file is written atomically. A run that is stopped (killed, a machine that goes down) is resumed by
running the same command again: a benchmark whose files are there for the same models, options and stimuli
is read back, not run; one that was under way resumes from the units its scorer had cached (and a chat
model's stored replies), so nothing is computed twice.

A model whose kind the benchmark's scorer does not take (a chat model on HolisticBias) is **skipped** for
that benchmark, with the scorer's own one-line reason; everything else that can be checked (options, models,
stimuli, the output folder) is checked for every benchmark before any of them runs.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.errors import AssocError, ModelError, OptionError, UnknownNameError
from assoc.reporting.headlines import HEADLINE_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

    from assoc.analysis.base import Analysis
    from assoc.benchmark.declaration import Benchmark
    from assoc.executors import Executor
    from assoc.infra.threads import ThreadSetting
    from assoc.lm.kinds import LanguageModel
    from assoc.models.names import ModelName
    from assoc.scoring.scorer import Scorer
    from assoc.stimuli.sets import Stimuli

#: Bump when the files of a run change meaning: a run folder of another version is not reused.
RUN_VERSION = 1
MANIFEST = "run.json"
SUMMARY = "summary.csv"
REPORT = "report.html"
CARD = "card.md"
#: The columns of the summary: the headline table's (``benchmark`` for its ``source``), then what became of it.
SUMMARY_COLUMNS = ("benchmark", *HEADLINE_COLUMNS[1:], "status", "reason")
#: The scorer options that take a subset: a scorer that declares them cuts its own stimuli (``docs/benchmarks-run.md``).
SUBSET_OPTIONS = ("limit", "sample", "sample_seed")


@dataclass
class BenchmarkRun:
    """What [`run_benchmarks`][assoc.run_benchmarks] did: the files it wrote and what each benchmark came to.

    Attributes
    ----------
    out:
        The run's folder.
    summary:
        The summary table (``summary.csv``; `SUMMARY_COLUMNS`).
    tables, results:
        Per benchmark that ran, the path of its association table and of its analysis result.
    skipped:
        Per benchmark, the models that did not run it and why (``{benchmark: {model: reason}}``); a
        benchmark no model could run is listed with all of them.
    failed:
        Per benchmark whose analysis failed, the reason (its table is written all the same).
    reused:
        The benchmarks read back from an earlier run of the same study in ``out``.
    report, card:
        The report and the bias card (None when not written).
    report_error:
        Why the report could not be written (``""`` when it was, or was not asked for).
    """

    out: Path
    summary: pd.DataFrame
    tables: dict[str, Path] = field(default_factory=dict)
    results: dict[str, Path] = field(default_factory=dict)
    skipped: dict[str, dict[str, str]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    reused: list[str] = field(default_factory=list)
    report: Path | None = None
    card: Path | None = None
    report_error: str = ""


@dataclass
class _Model:
    """One model of the run: how it was written, its spec as scorers get it, what tables show, its kind."""

    name: ModelName
    spec: str
    shown: str
    kind: type[LanguageModel] | None  # None: no registered kind knows it (static embeddings, ...)

    @property
    def given(self) -> str:
        """What ``assoc.score`` is given: ``LABEL=SPEC`` (the spec resolved), or the spec."""
        return f"{self.name.label}={self.spec}" if self.name.label is not None else self.spec


@dataclass
class _Plan:
    """One benchmark, checked: its scorer's options, stimuli and analysis options, and who runs it."""

    benchmark: Benchmark
    scorer_options: dict[str, Any]
    analysis_options: dict[str, Any]
    stimuli: Stimuli
    models: list[_Model]
    skipped: dict[str, str]
    key: str = ""


def _say(text: str, progress: bool) -> None:
    if progress:
        sys.stderr.write(f"assoc benchmark run: {text}\n")
        sys.stderr.flush()


def run_benchmarks(
    models: Sequence[str],
    benchmarks: Sequence[str] | None = None,
    *,
    out: str | Path,
    sample: int | None = None,
    limit: int | None = None,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    analysis_options: Mapping[str, Any] | None = None,
    report: bool = True,
    title: str | None = None,
    progress: bool | None = None,
    executor: str | Executor | None = None,
    threads: int | ThreadSetting | None = None,
) -> BenchmarkRun:
    """Run benchmarks on models and write their tables, analyses, one summary and the report into ``out``.

    Parameters
    ----------
    models:
        The models, each ``[LABEL=]SPEC`` of any kind (``small=./gpt2``, ``chat:gpt-4o-mini``); a chat
        model needs its ``chat:`` prefix here (a name alone could be any kind).
    benchmarks:
        Registered benchmark names (``assoc.benchmarks()``); ``None``: every registered benchmark.
    out:
        The run's folder (created; the files are listed in [`assoc.benchmark.run`][assoc.benchmark.run]). Running again
        with the same folder resumes: what is done is read back, nothing is computed twice.
    sample, limit, seed:
        A stated subset of every benchmark: ``sample`` items drawn (seeded by ``seed``) or the first
        ``limit``, as each benchmark defines a subset: a scorer that declares the options ``limit``,
        ``sample`` and ``sample_seed`` takes them (HolisticBias keeps whole cells), otherwise the stimuli's
        ``subset`` (per group). A benchmark that can take neither is skipped, with the reason.
    options:
        Scorer options. ``{"name": value}`` goes to every benchmark's scorer that declares ``name`` (an
        option no chosen scorer declares is an error); ``{"benchmark.name": value}`` (or ``{"benchmark":
        {"name": value}}``) to that benchmark's scorer only.
    analysis_options:
        Analysis options, the same way (``{"discrim_eval.random_slopes": False}``).
    report:
        Also write ``report.html`` and ``card.md`` ([`assoc.report`][assoc.report]).
    title:
        The report's title (default: ``"assoc benchmarks"`` and the models).
    progress, executor, threads:
        As for [`assoc.score`][assoc.score], for every scorer of the run.

    Returns
    -------
    BenchmarkRun
        The summary table and the paths of everything written, what was skipped or failed, and why.
    """
    from assoc.infra.io import check_writable_dir
    from assoc.infra.progress import default_enabled
    from assoc.infra.threads import resolve_threads

    show = default_enabled() if progress is None else bool(progress)
    setting = resolve_threads(threads)
    if sample is not None and limit is not None:
        raise OptionError("give sample or limit, not both")
    for name, value in (("sample", sample), ("limit", limit)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise OptionError(f"{name} must be a positive integer, got {value!r}")
    folder = Path(out).expanduser()
    check_writable_dir(folder, "run folder (out)")
    chosen = _benchmarks(benchmarks)
    run_models = _models(models)
    scorer_options = _split_options(options, [b.name for b in chosen], "option")
    analysis_given = _split_options(analysis_options, [b.name for b in chosen], "analysis option")
    subset = {"sample": sample, "limit": limit, "seed": seed} if sample is not None or limit is not None else {}
    plans = [_plan(b, run_models, scorer_options, analysis_given, subset) for b in chosen]
    _check_used(scorer_options[None], plans, "scorer", "option")
    _check_used(analysis_given[None], plans, "analysis", "analysis option")
    for plan in plans:
        plan.key = _key(plan, subset)

    manifest = _read_manifest(folder)
    manifest.update(
        {
            "version": RUN_VERSION,
            "models": [
                {"name": m.name.text, "spec": _shown_value(m.spec), "shown": m.shown, "kind": m.kind and m.kind.kind}
                for m in run_models
            ],
            "benchmarks_asked": [b.name for b in chosen],
            "subset": subset,
            "finished": False,
        }
    )
    entries: dict[str, Any] = manifest.setdefault("benchmarks", {})
    done = BenchmarkRun(out=folder, summary=_empty_summary())
    frames: dict[str, tuple[pd.DataFrame | None, pd.DataFrame | None]] = {}
    for plan in plans:
        name = plan.benchmark.name
        if plan.skipped:
            done.skipped[name] = dict(plan.skipped)
        entry = entries.get(name)
        table_path, result_path = folder / "tables" / f"{name}.parquet", folder / "results" / f"{name}.jsonl"
        if not plan.models:
            entries[name] = _entry(plan, "skipped", reason="no model of the run can run it")
            _say(f"{name}: skipped (no model of the run can run it)", show)
            _write_manifest(folder, manifest)
            frames[name] = (None, None)
            continue
        if (
            isinstance(entry, dict)
            and entry.get("key") == plan.key
            and entry.get("status") == "done"
            and table_path.is_file()
            and result_path.is_file()
        ):
            from assoc.table.files import read_table

            _say(f"{name}: done in an earlier run of this study, read back", show)
            done.reused.append(name)
            frames[name] = (read_table(table_path), read_table(result_path))
            done.tables[name], done.results[name] = table_path, result_path
            continue
        frames[name] = _run_one(plan, table_path, result_path, done, show, executor, setting)
        status = "failed" if name in done.failed else "done"
        entries[name] = _entry(plan, status, reason=done.failed.get(name, ""))
        _write_manifest(folder, manifest)

    done.summary = _summary(plans, frames, done)
    _write_summary(done.summary, folder / SUMMARY, manifest)
    manifest["summary"] = SUMMARY
    if report:
        _report(done, frames, folder, title or _title(run_models), show)
        manifest["report"], manifest["card"] = REPORT, CARD
    manifest["finished"] = True
    _write_manifest(folder, manifest)
    return done


# -- before any work ----------------------------------------------------------------------------------------


def scorer_of(benchmark: Benchmark) -> type[Scorer]:
    """The benchmark's registered scorer class (an :class:`~assoc.errors.UnknownNameError` when not installed)."""
    from assoc.plugins.manager import get_scorer

    return get_scorer(benchmark.scorer)


def analysis_of(benchmark: Benchmark) -> type[Analysis]:
    """The benchmark's registered analysis class (an :class:`~assoc.errors.UnknownNameError` when not installed)."""
    from assoc.plugins.manager import get_analysis

    return get_analysis(benchmark.analysis)


def request_kinds(benchmark: Benchmark) -> tuple[frozenset[str], ...]:
    """What the benchmark asks of a model, as alternatives (its scorer's); ``()`` for a scorer of no request kind.

    ``(frozenset({"sentence"}),)``: every model must serve ``sentence``;
    ``(frozenset({"continuation"}), frozenset({"generate"}))``: one or the other, the first preferred
    (:meth:`assoc.lm.LMScorer.request_alternatives`).
    """
    alternatives = getattr(scorer_of(benchmark), "request_alternatives", None)
    return tuple(alternatives()) if callable(alternatives) else ()


def _benchmarks(names: Sequence[str] | None) -> list[Benchmark]:
    """The benchmarks asked for (each once, in the order given), or every registered one."""
    from assoc.plugins import manager

    if names is None:
        found = list(manager.benchmarks().values())
        if not found:
            raise UnknownNameError(
                "benchmark", "", {}, hint="no benchmark is registered (install assoc-bias-benchmarks)"
            )
        return found
    if isinstance(names, str):
        names = [names]
    chosen = [manager.get_benchmark(str(name)) for name in dict.fromkeys(names)]
    if not chosen:
        raise OptionError("no benchmark given (leave benchmarks out to run every registered one)")
    return chosen


def _models(models: Sequence[str]) -> list[_Model]:
    """The run's models: names checked, labels split, kinds resolved (one line for a model nothing can open)."""
    from assoc.api import _model_identity
    from assoc.lm.loading import resolve_kind
    from assoc.models.names import ModelName, check_labels, split_label

    if isinstance(models, str):
        models = [models]
    if not models:
        raise OptionError("give at least one model ([LABEL=]SPEC; a chat model as chat:<name>)")
    out: list[_Model] = []
    names: list[ModelName] = []
    for written in models:
        if not isinstance(written, str):
            raise OptionError(f"a benchmark run takes models by name ([LABEL=]SPEC), got {type(written).__name__}")
        name = split_label(written)
        spec = _model_identity(name.spec)
        resolved = ModelName(name.text, spec, name.label)
        names.append(resolved)
        try:
            kind: type[LanguageModel] | None = resolve_kind(spec, scorer="benchmark run")
        except ModelError:
            kind = None  # not a language model a kind knows: a scorer that takes kinds says what is wrong with it
        out.append(_Model(resolved, spec, resolved.shown, kind))
    check_labels(names)
    if len({m.spec for m in out}) != len(out):
        raise OptionError(f"a model is listed twice: {[m.name.text for m in out]}")
    return out


def _split_options(
    given: Mapping[str, Any] | None, benchmarks: Sequence[str], what: str
) -> dict[str | None, dict[str, Any]]:
    """``{None: options for every benchmark, benchmark: its own}`` from ``name`` / ``benchmark.name`` / nested keys."""
    out: dict[str | None, dict[str, Any]] = {None: {}, **{b: {} for b in benchmarks}}
    for key, value in (given or {}).items():
        key = str(key)
        if key in out and key is not None and isinstance(value, Mapping):
            out[key].update(value)
            continue
        head, dot, rest = key.partition(".")
        if dot:
            if head not in out:
                raise OptionError(f"{what} {key!r}: {head!r} is not a benchmark of this run ({', '.join(benchmarks)})")
            out[head][rest] = value
        else:
            out[None][key] = value
    return out


def _declared(cls: Any) -> set[str]:
    return {option.name for option in getattr(cls, "options", ())}


def _check_used(common: Mapping[str, Any], plans: Sequence[_Plan], kind: str, what: str) -> None:
    """An option meant for every benchmark that none of the chosen scorers (or analyses) declares is an error."""
    for name in common:
        if not any(name in _declared(_component(plan.benchmark, kind)) for plan in plans):
            raise OptionError(
                f"{what} {name!r}: no {kind} of the chosen benchmarks ({', '.join(p.benchmark.name for p in plans)}) "
                "takes it"
            )


def _component(benchmark: Benchmark, kind: str) -> Any:
    return scorer_of(benchmark) if kind == "scorer" else analysis_of(benchmark)


def _plan(
    benchmark: Benchmark,
    models: Sequence[_Model],
    scorer_given: Mapping[str | None, Mapping[str, Any]],
    analysis_given: Mapping[str | None, Mapping[str, Any]],
    subset: Mapping[str, Any],
) -> _Plan:
    """Check one benchmark before any work: its scorer, options, stimuli and analysis; who runs it, who is skipped."""
    from assoc.stimuli.sets import Stimuli

    scorer_cls = scorer_of(benchmark)
    analysis_cls = analysis_of(benchmark)
    declared = _declared(scorer_cls)
    options = {k: v for k, v in scorer_given[None].items() if k in declared}
    options.update(benchmark.scorer_options)
    options.update(scorer_given[benchmark.name])
    stimuli = Stimuli.load(benchmark.stimuli)
    reason = ""
    if subset:
        if {"limit", "sample", "sample_seed"} <= declared:
            options.update(limit=subset["limit"], sample=subset["sample"], sample_seed=subset["seed"])
        elif callable(cut := getattr(stimuli, "subset", None)):
            stimuli = cut(limit=subset["limit"], sample=subset["sample"], seed=subset["seed"])
        else:
            reason = (
                f"benchmark {benchmark.name!r} cannot take a subset (its scorer {benchmark.scorer!r} has no "
                "limit/sample options and its stimuli no subset): run it without --sample/--limit"
            )
    scorer = scorer_cls(**options)
    analysis = {
        **benchmark.analysis_options,
        **{k: v for k, v in analysis_given[None].items() if k in _declared(analysis_cls)},
    }
    analysis.update(analysis_given[benchmark.name])
    analysis_cls(**analysis)  # options checked before any work
    scorer.check_stimuli(stimuli)
    running: list[_Model] = []
    skipped: dict[str, str] = {}
    for model in models:
        why = reason or _refusal(scorer, model)
        if why:
            skipped[model.shown] = why
        else:
            running.append(model)
    if running:
        from assoc.api import _check_cache_dir

        _check_cache_dir(scorer)
        check = getattr(scorer, "check_models", None)
        if callable(check):
            check([m.spec for m in running])  # a folder without its tokenizer, an endpoint option: before any work
    return _Plan(benchmark, options, analysis, stimuli, running, skipped)


def _refusal(scorer: Scorer, model: _Model) -> str:
    """Why ``scorer`` does not take ``model``'s kind (its own one-line refusal), or ``""`` when it does."""
    accepted = getattr(scorer, "accepted_kinds", None)
    if not callable(accepted) or model.kind is None or model.kind.kind in accepted():
        return ""
    try:
        scorer.check_models([model.spec])  # type: ignore[attr-defined]
    except ModelError as exc:
        return str(exc)
    return f"scorer {scorer.name!r} does not take {model.kind.kind} models"  # its check did not say why


def _key(plan: _Plan, subset: Mapping[str, Any]) -> str:
    """What a benchmark's files depend on: its declaration, options, stimuli and models (their weights' identity)."""
    scorer = scorer_of(plan.benchmark)(**plan.scorer_options)
    record = {
        "version": RUN_VERSION,
        "benchmark": plan.benchmark.describe(),
        "scorer_options": {k: v for k, v in scorer.params.items() if k not in ("cache", "cache_dir")},
        "analysis_options": plan.analysis_options,
        "stimuli": [plan.stimuli.name, plan.stimuli.fingerprint()],
        "subset": dict(subset),
        "models": [[m.shown, m.spec, scorer.identify_model(m.spec)] for m in plan.models],
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()


# -- the work ----------------------------------------------------------------------------------------------


def _run_one(
    plan: _Plan,
    table_path: Path,
    result_path: Path,
    done: BenchmarkRun,
    show: bool,
    executor: str | Executor | None,
    threads: ThreadSetting,
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Score one benchmark on its models and analyse the table; an analysis that refuses is recorded, not raised."""
    import warnings

    from assoc import api

    name = plan.benchmark.name
    shown = ", ".join(m.shown for m in plan.models)
    _say(f"{name}: scoring {shown} (scorer {plan.benchmark.scorer}, stimuli {plan.stimuli.name})", show)
    table = api.score(
        plan.benchmark.scorer,
        plan.stimuli,
        [m.given for m in plan.models],
        progress=show,
        executor=executor,
        out=table_path,
        threads=threads,
        **plan.scorer_options,
    )
    done.tables[name] = table_path
    _say(f"{name}: analysis {plan.benchmark.analysis}", show)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            result = api.analyze(plan.benchmark.analysis, table, out=result_path, **plan.analysis_options)
    except AssocError as exc:
        done.failed[name] = f"analysis {plan.benchmark.analysis!r}: {exc}"
        _say(f"{name}: {done.failed[name]}", show)
        result_path.unlink(missing_ok=True)
        return table, None
    done.results[name] = result_path
    return table, result


def _entry(plan: _Plan, status: str, *, reason: str = "") -> dict[str, Any]:
    name = plan.benchmark.name
    return {
        "key": plan.key,
        "status": status,
        "reason": reason,
        "benchmark": plan.benchmark.describe(),
        "scorer_options": {k: _shown_value(v) for k, v in plan.scorer_options.items()},
        "analysis_options": plan.analysis_options,
        "stimuli": plan.stimuli.name,
        "models": [m.shown for m in plan.models],
        "skipped": plan.skipped,
        "table": f"tables/{name}.parquet" if plan.models else None,
        "result": f"results/{name}.jsonl" if status == "done" else None,
    }


def _shown_value(value: Any) -> Any:
    """An option's value as the manifest may keep it: a URL without its credentials (``assoc.lm.safe_url``)."""
    if isinstance(value, str) and "://" in value:
        from assoc.lm.remote.urls import safe_url

        return safe_url(value)
    return value


def _read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of an earlier run in ``folder`` (``{}`` when none, or one of another version)."""
    path = folder / MANIFEST
    if not path.is_file():
        return {}
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # unreadable: every benchmark is run again (from the units' cache)
    return found if isinstance(found, dict) and found.get("version") == RUN_VERSION else {}


def _write_manifest(folder: Path, manifest: Mapping[str, Any]) -> None:
    from assoc.infra.io import atomic_write

    with atomic_write(folder / MANIFEST, encoding="utf-8") as handle:
        handle.write(json.dumps(manifest, indent=1, sort_keys=True, default=str) + "\n")


# -- the summary and the report ------------------------------------------------------------------------------


def _empty_summary() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(columns=list(SUMMARY_COLUMNS))


def _summary(
    plans: Sequence[_Plan], frames: Mapping[str, tuple[pd.DataFrame | None, pd.DataFrame | None]], done: BenchmarkRun
) -> pd.DataFrame:
    """The headline numbers of every benchmark's result, then a row per skipped model and per failed analysis.

    The numbers are :func:`~assoc.reporting.headlines.headline_table`'s (what ``assoc report`` reads).
    """
    import pandas as pd

    from assoc.reporting.headlines import headline_table

    parts: list[pd.DataFrame] = []
    for plan in plans:
        name = plan.benchmark.name
        base = {"benchmark": name, "analysis": plan.benchmark.analysis}
        result = frames.get(name, (None, None))[1]
        if result is not None:
            headlines = headline_table(result, source=name, analysis=plan.benchmark.analysis)
            parts.append(headlines.rename(columns={"source": "benchmark"}).assign(status="ok", reason=""))
        elif name in done.failed:
            parts.append(
                pd.DataFrame(
                    [{**base, "model": m.shown, "status": "failed", "reason": done.failed[name]} for m in plan.models]
                )
            )
        if plan.skipped:
            parts.append(
                pd.DataFrame(
                    [
                        {**base, "model": model, "status": "skipped", "reason": why}
                        for model, why in plan.skipped.items()
                    ]
                )
            )
    parts = [p for p in parts if len(p)]
    if not parts:
        return _empty_summary()
    return pd.concat(parts, ignore_index=True).reindex(columns=list(SUMMARY_COLUMNS))


def _write_summary(summary: pd.DataFrame, path: Path, manifest: Mapping[str, Any]) -> None:
    from assoc.table.files import write_table
    from assoc.table.provenance import make_provenance, set_provenance

    record = make_provenance(
        kind="benchmark_run",
        models=[m["shown"] for m in manifest.get("models", [])],
        benchmarks={name: entry.get("status") for name, entry in manifest.get("benchmarks", {}).items()},
        subset=manifest.get("subset"),
    )
    write_table(set_provenance(summary.copy(), record), path)


def _title(models: Sequence[_Model]) -> str:
    return f"assoc benchmarks: {', '.join(m.shown for m in models)}"


def _report(
    done: BenchmarkRun,
    frames: Mapping[str, tuple[pd.DataFrame | None, pd.DataFrame | None]],
    folder: Path,
    title: str,
    show: bool,
) -> None:
    """The run's report and bias card (:func:`assoc.report`) of every table and result; a failure is recorded."""
    from assoc.reporting import report

    inputs: dict[str, pd.DataFrame] = {}
    for name, (table, result) in frames.items():
        if result is not None:
            inputs[name] = result
        if table is not None:
            inputs[f"{name} table"] = table
    if not inputs:
        return
    _say("report", show)
    try:
        report(inputs, out=folder / REPORT, card=folder / CARD, title=title)
    except AssocError as exc:
        done.report_error = str(exc)
        return
    done.report, done.card = folder / REPORT, folder / CARD

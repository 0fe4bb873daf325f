"""The Python API: ``assoc.score``, ``assoc.compare``, ``assoc.analyze``, ``assoc.scorers``, ``assoc.analyses``."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.analysis.base import with_estimate
from assoc.errors import OptionError, TableError
from assoc.plugins import manager as plugins
from assoc.scoring.output import check_output
from assoc.stimuli.model import Stimuli
from assoc.table.files import as_table, get_provenance, make_provenance, set_provenance, write_table

if TYPE_CHECKING:
    import pandas as pd

    from assoc.executors import Executor

StimuliLike = "Stimuli | str | Path | Mapping[str, Any]"
#: ``table.attrs`` key where a scorer may leave a report of its run (kept in the provenance as ``"run"``).
RUN_REPORT_KEY = "assoc_run"
#: In a run report: how many ``value`` cells of the table are NaN (each scorer documents why it writes NaN).
NAN_VALUES_KEY = "nan_values"


def scorers() -> dict[str, str]:
    """Installed scorers: name -> one-line description."""
    reg = plugins.registry()
    return {name: entry.description for name, entry in sorted(reg.scorers.items())}


def analyses() -> dict[str, str]:
    """Installed analyses: name -> one-line description."""
    reg = plugins.registry()
    return {name: entry.description for name, entry in sorted(reg.analyses.items())}


def stimuli_sets() -> dict[str, str]:
    """Bundled stimuli sets: name -> description."""
    reg = plugins.registry()
    return {name: entry.description for name, entry in sorted(reg.stimuli.items())}


def _resolve_models(scorer_cls: Any, models: str | Sequence[str] | None) -> list[str]:
    if isinstance(models, str):
        models = [models]
    chosen = list(models) if models else list(scorer_cls.default_models)
    if not chosen and scorer_cls.requires_models:
        raise OptionError(f"scorer {scorer_cls.name!r} needs at least one model (pass models=[...] or --model)")
    for model in chosen:
        if not isinstance(model, str) or not model.strip():
            raise OptionError(f"model identifiers must be non-empty text, got {model!r}")
    chosen = [_model_identity(model) for model in chosen]
    if len(set(chosen)) != len(chosen):
        raise OptionError(f"a model is listed twice: {chosen}")
    return chosen


def _model_identity(model: str) -> str:
    """One name per model, so one model is one rater in the ``model`` column.

    A local directory or file becomes its absolute, resolved path (``m/``, ``./m`` and ``/abs/m``
    are one model); anything else (a Hub id, a named embedding) is kept as typed.
    """
    path = Path(model).expanduser()
    return str(path.resolve()) if path.exists() else model


def score(
    scorer: str,
    stimuli: Stimuli | str | Path | Mapping[str, Any],
    models: str | Sequence[str] | None = None,
    *,
    progress: bool | None = None,
    executor: str | Executor | None = None,
    out: str | Path | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Score ``stimuli`` with the scorer named ``scorer`` on ``models``.

    Parameters
    ----------
    scorer:
        A registered scorer name (``assoc.scorers()`` lists them).
    stimuli:
        A :class:`Stimuli`, a dict, a YAML/JSON file, or a bundled name such as ``"caliskan:weat1"``.
    models:
        Model identifiers; ``None`` uses the scorer's default models.
    progress:
        Show progress bars (default: only when stderr is a terminal).
    executor:
        Where the work runs: ``"local"`` (default: this process), ``"ray"`` (a Ray cluster:
        ``$RAY_ADDRESS`` or a local one started for the run; ``pip install 'assoc[ray]'``) or an
        :class:`~assoc.executors.Executor` such as ``RayExecutor(address=...)``. Every executor
        gives the same table; only scorers that describe their work as units
        (:meth:`~assoc.scoring.scorer.Scorer.plan`) can run on a non-local executor.
    out:
        Also write the table there (:func:`~assoc.table.write_table`). The path, like the cache
        directory, is checked before any scoring: a problem is an :class:`~assoc.errors.OutputError`
        at once, not after the work.
    **options:
        The scorer's options; unknown names and bad values raise :class:`~assoc.errors.OptionError`.

    Returns
    -------
    pandas.DataFrame
        An association table (see :mod:`assoc.table.files`) with provenance in ``.attrs["assoc"]``.
    """
    from assoc.executors import get_executor
    from assoc.executors.run import run_study
    from assoc.infra.progress import default_enabled, quiet_libraries

    reg = plugins.registry()
    scorer_cls = plugins.get_scorer(scorer)
    instance = scorer_cls(**options)
    chosen = _resolve_models(scorer_cls, models)
    _check_runs_on(scorer_cls, executor)
    check_outputs(out)
    _check_cache_dir(instance)
    loaded = Stimuli.load(stimuli)
    instance.check_stimuli(loaded)
    show = default_enabled() if progress is None else progress
    with quiet_libraries(show):
        if scorer_cls.supports_units():
            runner = get_executor(executor)
            try:
                table, executed = run_study(instance, loaded, chosen, executor=runner, progress=show)
            finally:
                if runner is not executor:  # made here from a name: release what it started (a local Ray)
                    runner.close()
        else:
            table, executed = instance.score(loaded, chosen, progress=show), {"name": "local", "units": None}
    # A scorer may report how the run went (requests sent, retries, token usage, refusals, ...) as a
    # JSON-able dict in attrs["assoc_run"]; it is kept in the provenance under "run".
    run = table.attrs.pop(RUN_REPORT_KEY, None) if hasattr(table, "attrs") else None
    table = check_output(table, scorer_cls, loaded, chosen)
    missing = int(table["value"].isna().sum())
    if missing:  # legitimate NaN (documented: out of vocabulary, a refusal, ...), counted for the analyses
        run = {**(run if isinstance(run, dict) else {}), NAN_VALUES_KEY: missing}
    plugin = reg.scorers[scorer].plugin
    set_provenance(
        table,
        make_provenance(
            kind="score",
            scorer=scorer,
            plugin=plugin,
            plugin_version=plugins.plugin_version(plugin),
            models=chosen,
            model_fingerprints=_fingerprints(instance, chosen),
            options=instance.params,
            stimuli=loaded.name,
            stimuli_sha256=loaded.fingerprint(),
            citation=scorer_cls.citation,
            executor=executed,
            **({"run": run} if run is not None else {}),
        ),
    )
    if out is not None:
        write_table(table, out)
    return table


def check_outputs(out: str | Path | None, what: str = "output table") -> None:
    """Check before any work that a table can be written at ``out`` (and its provenance sidecar).

    Raises :class:`~assoc.errors.TableError` for a format assoc cannot write and
    :class:`~assoc.errors.OutputError` for a path that cannot be written (a folder, a file
    where a folder should be, no permission, a read-only file); ``None`` checks nothing.
    """
    from assoc.infra.io import check_output_file
    from assoc.table.files import sidecar_path, table_format

    if out is None:
        return
    check_output_file(out, what)
    table_format(out)
    if table_format(out) != "parquet":
        sidecar = sidecar_path(out)
        if sidecar.is_dir():
            from assoc.errors import OutputError

            raise OutputError(f"{what} {out}: its provenance sidecar {sidecar} is a folder; remove or rename it")


def _check_cache_dir(instance: Any) -> None:
    """Check before any work that the scorer's cache directory (when it caches) can be written."""
    if not instance.params.get("cache", False):
        return
    from assoc.infra.cache import default_root
    from assoc.infra.io import check_writable_dir

    chosen = instance.params.get("cache_dir")
    where = "cache directory (cache_dir)" if chosen else "cache directory ($ASSOC_CACHE_DIR or the user cache)"
    check_writable_dir(chosen or default_root(), where)


def expected_nan_values(provenance: Mapping[str, Any]) -> int | None:
    """How many NaN values the scorer runs behind a table reported (None: no record of a run).

    A score table's run report counts them (:data:`NAN_VALUES_KEY`); a compare table adds up its runs.
    """
    kind = provenance.get("kind")
    if kind == "score":
        run = provenance.get("run")
        return int(run.get(NAN_VALUES_KEY, 0)) if isinstance(run, Mapping) else 0
    if kind == "compare" and isinstance(provenance.get("runs"), list):
        counts = [expected_nan_values(p) if isinstance(p, Mapping) else None for p in provenance["runs"]]
        return None if any(c is None for c in counts) else sum(c for c in counts if c is not None)
    return None


def _warn_unexpected_nan(data: pd.DataFrame, name: str) -> None:
    """Warn when the table holds NaN values that no scorer run reported.

    Analyses leave NaN values out (an out-of-vocabulary word has no measurement); that is
    right only for NaN the scorer documented and counted. NaN from anywhere else (a table
    edited by hand, a model that broke) would be averaged around silently: say so.
    """
    if "value" not in data.columns:
        return
    missing = int(data["value"].isna().sum())
    if not missing:
        return
    expected = expected_nan_values(get_provenance(data))
    if expected is not None and expected == missing:
        return
    reason = (
        "the table has no provenance that accounts for them"
        if expected is None
        else f"the scorer run behind the table reported {expected:,}"
    )
    warnings.warn(
        f"input of analysis {name!r}: {missing:,} of {len(data):,} values are NaN and {reason}; the analysis "
        "leaves NaN values out, so check where they come from",
        stacklevel=3,
    )


def _fingerprints(scorer: Any, models: Sequence[str]) -> dict[str, str]:
    """Each model's exact identity for provenance.

    A Hub commit or a hash of local weights (the scorer's :meth:`~assoc.scoring.scorer.Scorer.model_fingerprint`);
    a failure is recorded, not raised, after a finished run.
    """
    out = {}
    for model in models:
        try:
            out[model] = str(scorer.model_fingerprint(model))
        except Exception as exc:  # the scores exist already: a missing fingerprint must not lose them
            out[model] = f"unknown ({type(exc).__name__}: {exc})"
    return out


def _check_runs_on(scorer_cls: Any, executor: Any) -> None:
    """Refuse a non-local executor for a scorer without work units.

    Such a scorer runs only in this process; a clear error beats a silent local run of a study
    meant for a cluster.
    """
    name = getattr(executor, "name", executor)
    if name not in (None, "local") and not scorer_cls.supports_units():
        raise OptionError(
            f"scorer {scorer_cls.name!r} does not describe its work as units (Scorer.plan/run_unit), "
            f"so it runs only in this process: drop executor={name!r} (--executor)"
        )


def compare(
    stimuli: Stimuli | str | Path | Mapping[str, Any],
    scorers: Mapping[str, Mapping[str, Any] | None] | Sequence[str],
    *,
    models: Mapping[str, str | Sequence[str] | None] | None = None,
    progress: bool | None = None,
    executor: str | Executor | None = None,
    out: str | Path | None = None,
) -> pd.DataFrame:
    """Run several scorers on the same stimuli and return one table.

    ``scorers`` maps scorer names to their options (``{"fmat": {"batch_size": 8}, "weat": {}}``),
    or is a list of names. Models come from each scorer's ``"models"`` option key
    (``{"fmat": {"models": ["bert-base-uncased"]}}``), from ``models[name]``, or
    the scorer's defaults. Rows keep their ``scorer`` column; extra columns of one
    scorer are empty (``NaN``) for the others. Every option of every scorer is
    validated before any scorer runs, and so are the stimuli: a design that one of the
    scorers cannot use (e.g. no ``[MASK]`` query for ``fmat``) is a
    :class:`~assoc.errors.StimuliError` naming the scorer and what it needs. ``executor``
    runs every scorer's work there (see :func:`score`). To ask whether the methods agree,
    pass the result to ``analyze("convergence", ...)`` (``docs/compare.md``). ``out`` also writes
    the table there, checked before any scorer runs (see :func:`score`).
    """
    import pandas as pd

    from assoc.executors import get_executor

    check_outputs(out)
    loaded = Stimuli.load(stimuli)
    plan = scorers if isinstance(scorers, Mapping) else {name: {} for name in scorers}
    if not plan:
        raise OptionError("compare needs at least one scorer")
    runs = []
    for name, opts in plan.items():
        opts = dict(opts or {})
        chosen = opts.pop("models", None)
        if chosen is None and models is not None:
            chosen = models.get(name)
        scorer_cls = plugins.get_scorer(name)
        scorer_cls(**opts)  # validate early: a typo in the last scorer must not waste the first one's run
        _resolve_models(scorer_cls, chosen)
        instance = scorer_cls(**opts)
        instance.check_stimuli(loaded)
        _check_cache_dir(instance)
        _check_runs_on(scorer_cls, executor)
        runs.append((name, chosen, opts))
    runner = get_executor(executor)  # one executor (one Ray session) for every scorer
    tables, provenance = [], []
    try:
        for name, chosen, opts in runs:
            table = score(name, loaded, chosen, progress=progress, executor=runner, **opts)
            provenance.append(get_provenance(table))
            tables.append(table)
    finally:
        if runner is not executor:
            runner.close()
    # An extra column of one scorer is missing (NaN) on the other scorers' rows: "" would claim a value
    # (and would mix text into a bool column); write_table/read_table keep NaN in every format.
    combined = pd.concat(tables, ignore_index=True, sort=False)
    set_provenance(
        combined,
        make_provenance(kind="compare", runs=provenance, stimuli=loaded.name, stimuli_sha256=loaded.fingerprint()),
    )
    if out is not None:
        write_table(combined, out)
    return combined


def analyze(
    name: str, table: pd.DataFrame | str | Path, *, out: str | Path | None = None, **options: Any
) -> pd.DataFrame:
    """Run the analysis ``name`` on an association table (a DataFrame or a .csv/.parquet/.jsonl path).

    Options are the analysis's own (``assoc analyses`` lists them). The result
    is a DataFrame with provenance (the input table's provenance is kept under
    ``"input"``). ``out`` also writes the result there, checked before the analysis runs.
    """
    import pandas as pd

    reg = plugins.registry()
    analysis_cls = plugins.get_analysis(name)
    instance = analysis_cls(**options)
    check_outputs(out, "output table (out)")
    data = as_table(table, validate=analysis_cls.requires_association_table, where=f"input of analysis {name!r}")
    if len(data) == 0:
        raise TableError(f"input of analysis {name!r} has no rows")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _warn_unexpected_nan(data, name)
        result = instance.run(data)
    for warning in caught:  # re-emit so callers see them, and keep them in provenance
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if not isinstance(result, pd.DataFrame):
        raise TableError(f"analysis {name!r} returned {type(result).__name__}, not a DataFrame")
    result = with_estimate(result, analysis_cls.estimate_column)
    plugin = reg.analyses[name].plugin
    set_provenance(
        result,
        make_provenance(
            kind="analysis",
            analysis=name,
            plugin=plugin,
            plugin_version=plugins.plugin_version(plugin),
            options=instance.params,
            citation=analysis_cls.citation,
            warnings=[str(w.message) for w in caught],
            input=get_provenance(data),
        ),
    )
    if out is not None:
        write_table(result, out)
    return result

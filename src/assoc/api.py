"""The Python API: ``assoc.score``, ``assoc.compare``, ``assoc.analyze``, ``assoc.scorers``, ``assoc.analyses``."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.analysis.base import check_requirement, with_estimate
from assoc.errors import OptionError, TableError
from assoc.models.names import ModelName
from assoc.plugins import manager as plugins
from assoc.scoring.output import RUN_REPORT_KEY, check_output, pop_run_report  # noqa: F401 (RUN_REPORT_KEY re-exported)
from assoc.stimuli.sets import Stimuli
from assoc.table.files import as_table, write_table
from assoc.table.provenance import get_provenance, make_provenance, set_provenance

if TYPE_CHECKING:
    import pandas as pd

    from assoc.executors import Executor
    from assoc.infra.threads import ThreadSetting

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


def _resolve_models(scorer_cls: Any, models: Any) -> tuple[list[str], dict[str, ModelName]]:
    """The model specs of a run, and how the user named each (``[LABEL=]SPEC``, :mod:`assoc.models.names`).

    ``models`` is a name, a list of names and loaded models, a ``{name: model}`` dict, or one
    loaded model (:mod:`assoc.models.memory`); ``None`` or empty: the scorer's defaults. A name may
    carry a label (``small=./models/gpt2``): the scorer gets the SPEC (a local path resolved, an
    in-memory model registered), and the returned map gives each spec its :class:`ModelName`, whose
    label the table shows instead. Two models under one label, or one model under two, are refused.
    """
    from assoc.models.memory import as_model_list, register_model
    from assoc.models.names import check_labels, split_label

    given = as_model_list(models)
    if not given:
        given = [(None, model) for model in scorer_cls.default_models]
    if not given and scorer_cls.requires_models:
        raise OptionError(f"scorer {scorer_cls.name!r} needs at least one model (pass models=[...] or --model)")
    chosen = []
    names: dict[str, ModelName] = {}
    for name, model in given:
        if isinstance(model, str):
            if not model.strip():
                raise OptionError(f"model identifiers must be non-empty text, got {model!r}")
            if name is not None and name != model:
                raise OptionError(f"a models dict maps names to loaded models; {name!r}: {model!r} is a name")
            written = split_label(model)
            spec = _model_identity(written.spec)
            names[spec] = ModelName(written.text, spec, written.label)
            chosen.append(spec)
        elif model is None:
            raise OptionError("model identifiers must be non-empty text or loaded models, got None")
        else:
            spec = register_model(model, name)
            names[spec] = ModelName(spec, spec, None)
            chosen.append(spec)
    if len(set(chosen)) != len(chosen):
        raise OptionError(f"a model is listed twice: {chosen}")
    check_labels(names.values())
    return chosen, names


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
    models: Any = None,
    *,
    progress: bool | None = None,
    executor: str | Executor | None = None,
    out: str | Path | None = None,
    threads: int | ThreadSetting | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Score ``stimuli`` with the scorer named ``scorer`` on ``models``.

    Parameters
    ----------
    scorer:
        A registered scorer name (``assoc.scorers()`` lists them).
    stimuli:
        A [`Stimuli`][assoc.Stimuli], a dict, a YAML/JSON file, or a bundled name such as ``"caliskan:weat1"``.
    models:
        Model identifiers (one name or a list), each ``[LABEL=]SPEC``: SPEC a local folder, a Hub id
        or ``<kind prefix>:<model>``, LABEL the short name the table, plots and reports show instead
        (``"small=./models/gpt2"``; ``docs/models.md``); ``None`` uses the scorer's default models. A
        model already in memory can be given instead of a name (a ``(transformers model, tokenizer)``
        pair for ``fmat``/``pll``, a sentence-transformers model for ``sbert_*``, gensim
        ``KeyedVectors`` for ``weat``), alone, in the list, or in a ``{name: model}`` dict that
        names it; the table records the name (``memory:<source>@<hash>`` when none is given) and
        provenance the SHA-256 of its weights (`assoc.models.memory`).
    progress:
        Report progress (default: on): a bar when standard error is a terminal, else the size of the
        job and then a plain line every 10 s (`$ASSOC_PROGRESS_INTERVAL`); ``False``: nothing.
    executor:
        Where the work runs: ``"local"`` (default: this process), ``"ray"`` (a Ray cluster:
        ``$RAY_ADDRESS`` or a local one started for the run; ``pip install ray``) or an
        `Executor` such as ``RayExecutor(address=...)``. Every executor
        gives the same table; only scorers that describe their work as units
        ([`plan`][assoc.scoring.scorer.Scorer.plan]) can run on a non-local executor.
    out:
        Also write the table there ([`write_table`][assoc.write_table]). The path, like the cache
        directory, is checked before any scoring: a problem is an [`OutputError`][assoc.errors.OutputError]
        at once, not after the work.
    threads:
        torch's intra-op threads for the run (``torch.set_num_threads``), set around the work in
        this process or in every Ray worker and restored afterwards, also after an error. Default:
        ``$ASSOC_THREADS``, else torch's own default. A value that is not a positive integer is an
        [`OptionError`][assoc.OptionError] before any work. Provenance records the request and the
        count torch used (``executor.threads``; ``docs/scale.md``). A setting already parsed
        (`assoc.infra.threads.resolve_threads`, what the command line passes) is used as it is.
    **options:
        The scorer's options; unknown names and bad values raise [`OptionError`][assoc.OptionError].

    Returns
    -------
    pandas.DataFrame
        An association table (see `assoc.table.schema`) with provenance in ``.attrs["assoc"]``.
    """
    from assoc.infra.threads import resolve_threads

    setting = resolve_threads(threads)
    instance, chosen, names = _prepare(scorer, models, executor, options)
    check_outputs(out)
    loaded = Stimuli.load(stimuli)
    instance.check_stimuli(loaded)
    table = _run(scorer, instance, loaded, chosen, names, progress=progress, executor=executor, threads=setting)
    if out is not None:
        write_table(table, out)
    return table


def _prepare(
    scorer: str, models: Any, executor: str | Executor | None, options: Mapping[str, Any]
) -> tuple[Any, list[str], dict[str, ModelName]]:
    """The scorer built from its validated options, and its models (specs, and how each was named).

    Everything that can be checked before any work is: the options, the models' names and labels,
    the executor, the cache directory.
    """
    from assoc.executors.driver import check_runs_on

    scorer_cls = plugins.get_scorer(scorer)
    instance = scorer_cls(**options)
    chosen, names = _resolve_models(scorer_cls, models)
    check_runs_on(scorer_cls, executor, chosen)
    _check_cache_dir(instance)
    return instance, chosen, names


def _run(
    scorer: str,
    instance: Any,
    loaded: Stimuli,
    chosen: list[str],
    names: Mapping[str, ModelName],
    *,
    progress: bool | None,
    executor: str | Executor | None,
    threads: ThreadSetting,
) -> pd.DataFrame:
    """Run a prepared scorer (the driver decides how), check its table and attach provenance.

    The scorer runs on the specs ``chosen``; its table's ``model`` column then shows each model's label
    where it has one (``names``), and provenance records each model's label, spec, path, kind,
    fingerprint and device (``model_names``; ``models`` and ``model_fingerprints`` by the names shown).
    """
    from assoc.executors.driver import run_scorer
    from assoc.infra.progress import default_enabled, quiet_libraries

    reg = plugins.registry()
    scorer_cls = type(instance)
    show = default_enabled() if progress is None else progress
    runner = plugins.get_executor(executor)  # a name is looked up among the registered executors
    try:
        with quiet_libraries(progress):
            table, executed = run_scorer(instance, loaded, chosen, executor=runner, progress=show, threads=threads)
    finally:
        if runner is not executor:  # made here from a name: release what it started (a local Ray)
            runner.close()
    run = pop_run_report(table)  # how the run went, if the scorer said (set_run_report): kept under "run"
    table = check_output(table, scorer_cls, loaded, chosen)
    missing = int(table["value"].isna().sum())
    if missing:  # legitimate NaN (documented: out of vocabulary, a refusal, ...), counted for the analyses
        run = {**(run if isinstance(run, dict) else {}), NAN_VALUES_KEY: missing}
    fingerprints = _fingerprints(instance, chosen)
    shown = {spec: names[spec].shown if spec in names else spec for spec in chosen}
    if any(label != spec for spec, label in shown.items()):
        column = table["model"]
        table["model"] = column.map(lambda model: shown.get(model, model)).astype(column.dtype)
    return _with_provenance(
        table,
        reg.scorers[scorer],
        instance,
        kind="score",
        scorer=scorer,
        models=[shown[spec] for spec in chosen],
        model_fingerprints={shown[spec]: fingerprints[spec] for spec in chosen},
        model_names=[_model_record(instance, names.get(spec), spec, fingerprints[spec]) for spec in chosen],
        stimuli=loaded.name,
        stimuli_sha256=loaded.fingerprint(),
        stimuli_meta=loaded.meta,
        executor=executed,
        **({"run": run} if run is not None else {}),
    )


def _with_provenance(table: pd.DataFrame, registered: Any, instance: Any, **fields: Any) -> pd.DataFrame:
    """``table`` with the provenance of a scorer's or analysis's run: its plugin, options, citation and ``fields``."""
    plugin = registered.plugin
    record = make_provenance(
        **fields,
        plugin=plugin,
        plugin_version=plugins.plugin_version(plugin),
        options=instance.params,
        citation=type(instance).citation,
    )
    return set_provenance(table, record)


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

    A score table's run report counts them (:data:`NAN_VALUES_KEY`); a compare table and a concatenation of
    tables (``--table`` repeated) add up their runs.
    """
    kind = provenance.get("kind")
    if kind == "score":
        run = provenance.get("run")
        return int(run.get(NAN_VALUES_KEY, 0)) if isinstance(run, Mapping) else 0
    if kind in ("compare", "combined") and isinstance(provenance.get("runs"), list):
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


def _model_record(scorer: Any, name: ModelName | None, spec: str, fingerprint: str) -> dict[str, Any]:
    """What provenance keeps of one model: ``{label, spec, path, kind, fingerprint}`` and what the scorer adds.

    ``spec`` is the model as the scorer ran it (a local folder resolved); ``path`` the local folder or
    file it names, else ``None``; ``kind`` and ``device`` come from the scorer
    (:meth:`~assoc.scoring.scorer.Scorer.describe_model`; ``None`` when it says nothing).
    """
    path = Path(spec).expanduser()
    record: dict[str, Any] = {
        "label": name.label if name is not None else None,
        "spec": spec,
        "path": str(path) if path.exists() else None,
        "kind": None,
        "fingerprint": fingerprint,
    }
    try:
        record.update(scorer.describe_model(spec))
    except Exception as exc:  # the scores exist already: a missing description must not lose them
        record["kind"] = f"unknown ({type(exc).__name__}: {exc})"
    return record


def _fingerprints(scorer: Any, models: Sequence[str]) -> dict[str, str]:
    """Each model's exact identity for provenance.

    A Hub commit, a hash of local weights or of an in-memory model's weights
    (:meth:`~assoc.scoring.scorer.Scorer.identify_model`); a failure is recorded, not raised,
    after a finished run.
    """
    out = {}
    for model in models:
        try:
            out[model] = str(scorer.identify_model(model))
        except Exception as exc:  # the scores exist already: a missing fingerprint must not lose them
            out[model] = f"unknown ({type(exc).__name__}: {exc})"
    return out


def compare(
    stimuli: Stimuli | str | Path | Mapping[str, Any],
    scorers: Mapping[str, Mapping[str, Any] | None] | Sequence[str],
    *,
    models: Mapping[str, Any] | None = None,
    progress: bool | None = None,
    executor: str | Executor | None = None,
    out: str | Path | None = None,
    threads: int | ThreadSetting | None = None,
) -> pd.DataFrame:
    """Run several scorers on the same stimuli and return one table.

    ``scorers`` maps scorer names to their options (``{"fmat": {"batch_size": 8}, "weat": {}}``),
    or is a list of names. Models come from each scorer's ``"models"`` option key
    (``{"fmat": {"models": ["bert-base-uncased"]}}``), from ``models[name]``, or
    the scorer's defaults. Rows keep their ``scorer`` column; extra columns of one
    scorer are empty (``NaN``) for the others. Every option of every scorer is
    validated before any scorer runs, and so are the stimuli: a design that one of the
    scorers cannot use (e.g. no ``[MASK]`` query for ``fmat``) is a
    [`StimuliError`][assoc.StimuliError] naming the scorer and what it needs. ``executor``
    runs every scorer's work there (see [`score`][assoc.score]). To ask whether the methods agree,
    pass the result to ``analyze("convergence", ...)`` (``docs/compare.md``). ``out`` also writes
    the table there, checked before any scorer runs (see [`score`][assoc.score]). ``threads`` sets torch's
    intra-op threads for every scorer's run (see [`score`][assoc.score]; default ``$ASSOC_THREADS``).
    """
    import pandas as pd

    from assoc.infra.threads import resolve_threads

    setting = resolve_threads(threads)
    check_outputs(out)
    loaded = Stimuli.load(stimuli)
    plan = scorers if isinstance(scorers, Mapping) else {name: {} for name in scorers}
    if not plan:
        raise OptionError("compare needs at least one scorer")
    runs = []
    for name, opts in plan.items():  # every scorer built and checked once, before any of them runs
        opts = dict(opts or {})
        chosen = opts.pop("models", None)
        if chosen is None and models is not None:
            chosen = models.get(name)
        instance, resolved, names = _prepare(name, chosen, executor, opts)
        instance.check_stimuli(loaded)
        runs.append((name, instance, resolved, names))
    runner = plugins.get_executor(executor)  # one executor (one Ray session) for every scorer
    tables, provenance = [], []
    try:
        for name, instance, resolved, names in runs:
            table = _run(name, instance, loaded, resolved, names, progress=progress, executor=runner, threads=setting)
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
        make_provenance(
            kind="compare",
            runs=provenance,
            stimuli=loaded.name,
            stimuli_sha256=loaded.fingerprint(),
            stimuli_meta=loaded.meta,
        ),
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
    # What the analysis can read (its declared Requirement), checked here for every analysis alike.
    check_requirement(instance, data, installed_scorers=set(reg.scorers), where=f"analysis {name!r}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _warn_unexpected_nan(data, name)
        result = instance.run(data)
    for warning in caught:  # re-emit so callers see them, and keep them in provenance
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if not isinstance(result, pd.DataFrame):
        raise TableError(f"analysis {name!r} returned {type(result).__name__}, not a DataFrame")
    result = with_estimate(result, analysis_cls.estimate_column)
    result = _with_provenance(
        result,
        reg.analyses[name],
        instance,
        kind="analysis",
        analysis=name,
        warnings=[str(w.message) for w in caught],
        input=get_provenance(data),
    )
    if out is not None:
        write_table(result, out)
    return result

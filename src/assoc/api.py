"""The Python API: ``assoc.score``, ``assoc.compare``, ``assoc.analyze``, ``assoc.scorers``, ``assoc.analyses``."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.analysis.base import with_estimate
from assoc.errors import OptionError, TableError
from assoc.plugins import manager as plugins
from assoc.scoring.output import RUN_REPORT_KEY, check_output, pop_run_report  # noqa: F401 (RUN_REPORT_KEY re-exported)
from assoc.stimuli.model import Stimuli
from assoc.table.files import as_table, get_provenance, make_provenance, set_provenance

if TYPE_CHECKING:
    import pandas as pd

    from assoc.executors import Executor


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


def _resolve_models(scorer_cls: Any, models: Any) -> list[str]:
    """The model names of a run: names as given (local paths resolved), in-memory models registered.

    ``models`` is a name, a list of names and loaded models, a ``{name: model}`` dict, or one
    loaded model (:mod:`assoc.scoring.models`); ``None`` or empty: the scorer's defaults.
    """
    from assoc.scoring.models import as_model_list, register_model

    given = as_model_list(models)
    if not given:
        given = [(None, model) for model in scorer_cls.default_models]
    if not given and scorer_cls.requires_models:
        raise OptionError(f"scorer {scorer_cls.name!r} needs at least one model (pass models=[...] or --model)")
    chosen = []
    for name, model in given:
        if isinstance(model, str):
            if not model.strip():
                raise OptionError(f"model identifiers must be non-empty text, got {model!r}")
            if name is not None and name != model:
                raise OptionError(f"a models dict maps names to loaded models; {name!r}: {model!r} is a name")
            chosen.append(_model_identity(model))
        elif model is None:
            raise OptionError("model identifiers must be non-empty text or loaded models, got None")
        else:
            chosen.append(register_model(model, name))
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
    models: Any = None,
    *,
    progress: bool | None = None,
    executor: str | Executor | None = None,
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
        Model identifiers (one name or a list); ``None`` uses the scorer's default models. A model
        already in memory can be given instead of a name (a ``(transformers model, tokenizer)``
        pair for ``fmat``/``pll``, a sentence-transformers model for ``sbert_*``, gensim
        ``KeyedVectors`` for ``weat``), alone, in the list, or in a ``{name: model}`` dict that
        names it; the table records the name (``memory:<source>@<hash>`` when none is given) and
        provenance the SHA-256 of its weights (:mod:`assoc.scoring.models`).
    progress:
        Show progress bars (default: only when stderr is a terminal).
    executor:
        Where the work runs: ``"local"`` (default: this process), ``"ray"`` (a Ray cluster:
        ``$RAY_ADDRESS`` or a local one started for the run; ``pip install 'assoc[ray]'``) or an
        :class:`~assoc.executors.Executor` such as ``RayExecutor(address=...)``. Every executor
        gives the same table; only scorers that describe their work as units
        (:meth:`~assoc.scoring.scorer.Scorer.plan`) can run on a non-local executor.
    **options:
        The scorer's options; unknown names and bad values raise :class:`~assoc.errors.OptionError`.

    Returns
    -------
    pandas.DataFrame
        An association table (see :mod:`assoc.table.files`) with provenance in ``.attrs["assoc"]``.
    """
    instance, chosen = _prepare(scorer, models, executor, options)
    loaded = Stimuli.load(stimuli)
    instance.check_stimuli(loaded)
    return _run(scorer, instance, loaded, chosen, progress=progress, executor=executor)


def _prepare(
    scorer: str, models: Any, executor: str | Executor | None, options: Mapping[str, Any]
) -> tuple[Any, list[str]]:
    """The scorer built from its validated options, and its models: everything checked before any work."""
    from assoc.executors.run import check_runs_on

    scorer_cls = plugins.get_scorer(scorer)
    instance = scorer_cls(**options)
    chosen = _resolve_models(scorer_cls, models)
    check_runs_on(scorer_cls, executor, chosen)
    return instance, chosen


def _run(
    scorer: str,
    instance: Any,
    loaded: Stimuli,
    chosen: list[str],
    *,
    progress: bool | None,
    executor: str | Executor | None,
) -> pd.DataFrame:
    """Run a prepared scorer (the driver decides how), check its table and attach provenance."""
    from assoc.executors.run import run_scorer
    from assoc.infra.progress import default_enabled, quiet_libraries

    reg = plugins.registry()
    scorer_cls = type(instance)
    show = default_enabled() if progress is None else progress
    with quiet_libraries(show):
        table, executed = run_scorer(instance, loaded, chosen, executor=executor, progress=show)
    run = pop_run_report(table)  # how the run went, if the scorer said (set_run_report): kept under "run"
    table = check_output(table, scorer_cls, loaded, chosen)
    return _with_provenance(
        table,
        reg.scorers[scorer],
        instance,
        kind="score",
        scorer=scorer,
        models=chosen,
        model_fingerprints=_fingerprints(instance, chosen),
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
    pass the result to ``analyze("convergence", ...)`` (``docs/compare.md``).
    """
    import pandas as pd

    from assoc.executors import get_executor

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
        instance, resolved = _prepare(name, chosen, executor, opts)
        instance.check_stimuli(loaded)
        runs.append((name, instance, resolved))
    runner = get_executor(executor)  # one executor (one Ray session) for every scorer
    tables, provenance = [], []
    try:
        for name, instance, resolved in runs:
            table = _run(name, instance, loaded, resolved, progress=progress, executor=runner)
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
    return combined


def analyze(name: str, table: pd.DataFrame | str | Path, **options: Any) -> pd.DataFrame:
    """Run the analysis ``name`` on an association table (a DataFrame or a .csv/.parquet/.jsonl path).

    Options are the analysis's own (``assoc analyses`` lists them). The result
    is a DataFrame with provenance (the input table's provenance is kept under
    ``"input"``).
    """
    import pandas as pd

    reg = plugins.registry()
    analysis_cls = plugins.get_analysis(name)
    instance = analysis_cls(**options)
    data = as_table(table, validate=analysis_cls.requires_association_table, where=f"input of analysis {name!r}")
    if len(data) == 0:
        raise TableError(f"input of analysis {name!r} has no rows")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = instance.run(data)
    for warning in caught:  # re-emit so callers see them, and keep them in provenance
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if not isinstance(result, pd.DataFrame):
        raise TableError(f"analysis {name!r} returned {type(result).__name__}, not a DataFrame")
    result = with_estimate(result, analysis_cls.estimate_column)
    return _with_provenance(
        result,
        reg.analyses[name],
        instance,
        kind="analysis",
        analysis=name,
        warnings=[str(w.message) for w in caught],
        input=get_provenance(data),
    )

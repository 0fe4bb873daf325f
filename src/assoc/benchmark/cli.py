"""The ``assoc benchmark`` commands: ``list`` the registered benchmarks, ``run`` them on models.

:func:`benchmark_group` builds the group; :mod:`assoc.cli` adds it, handing over what its scoring commands share
(:class:`CommandParts`: the command class that adds ``--executor`` and every executor's options, ``--threads``,
the executor's context, the table printer), so that ``run`` takes them as ``assoc score`` does and this module
never imports :mod:`assoc.cli`. Only click is imported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import click


class CommandParts(NamedTuple):
    """What the core's scoring commands share, handed over by :mod:`assoc.cli`."""

    scoring_command: type[click.Command]  # adds --executor and each executor's options
    threads_option: Callable[[Any], Any]  # the --threads option
    threads: Callable[[str | None], Any]  # --threads parsed
    executor: Callable[[str, Any], Any]  # the executor's context manager, from --executor and its options
    echo_table: Callable[[Any], None]  # a table printed for reading


def benchmark_group(parts: CommandParts) -> click.Group:
    """The ``benchmark`` group: ``list`` and ``run`` (of the scoring command class: the executor options)."""

    @click.group(name="benchmark")
    def group() -> None:
        """Run the registered benchmarks on models: one summary of headline numbers (docs/benchmarks-run.md)."""

    @group.command(name="list")
    def list_command() -> None:
        """List the registered benchmarks: scorer, stimuli, analysis, request kinds and the model kinds serving them."""
        for line in benchmark_lines():
            click.echo(line)

    @group.command(name="run", cls=parts.scoring_command)
    @click.option(
        "--model",
        "-m",
        "models",
        multiple=True,
        required=True,
        help="[LABEL=]SPEC of any kind (a folder, a Hub id, chat:<name>, ...); repeatable.",
    )
    @click.option(
        "--benchmark",
        "-b",
        "benchmarks",
        multiple=True,
        help="A registered benchmark (assoc benchmark list); repeatable. Default: every one.",
    )
    @click.option("--out", required=True, help="The run's folder: tables, results, summary.csv, report.html, card.md.")
    @click.option(
        "--sample", type=click.IntRange(min=1), default=None, help="N items per group of each benchmark, drawn."
    )
    @click.option("--limit", type=click.IntRange(min=1), default=None, help="The first N items per group instead.")
    @click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample.")
    @click.option(
        "--option",
        "-o",
        "options",
        multiple=True,
        metavar="[BENCHMARK.]KEY=VALUE",
        help="Scorer option: for every benchmark whose scorer has it, or for BENCHMARK only; repeatable.",
    )
    @click.option(
        "--analysis-option",
        "-a",
        "analysis_options",
        multiple=True,
        metavar="[BENCHMARK.]KEY=VALUE",
        help="Analysis option, the same way; repeatable.",
    )
    @click.option("--report/--no-report", default=True, show_default=True, help="Write report.html and card.md.")
    @click.option("--title", default=None, help="The report's title.")
    @click.option("--progress/--no-progress", default=None, help="Progress lines and bars (default: on).")
    @parts.threads_option
    def run_command(
        models: tuple[str, ...],
        benchmarks: tuple[str, ...],
        out: str,
        sample: int | None,
        limit: int | None,
        seed: int,
        options: tuple[str, ...],
        analysis_options: tuple[str, ...],
        report: bool,
        title: str | None,
        progress: bool | None,
        threads: str | None,
        executor: str,
        **executor_options: str | None,
    ) -> None:
        """Run benchmarks on models; write each table and analysis, one summary, the report and bias card.

        Running the same command again resumes: what is done is read back, nothing is computed twice.
        """
        from assoc.benchmark.run import run_benchmarks
        from assoc.plugins import manager

        chosen_threads = parts.threads(threads)
        names = list(benchmarks) or list(manager.benchmarks())
        scorer_given = parse_options(options, names, "scorer", "--option")
        analysis_given = parse_options(analysis_options, names, "analysis", "--analysis-option")
        with parts.executor(executor, executor_options) as runner:
            done = run_benchmarks(
                list(models),
                list(benchmarks) or None,
                out=out,
                sample=sample,
                limit=limit,
                seed=seed,
                options=scorer_given,
                analysis_options=analysis_given,
                report=report,
                title=title,
                progress=progress,
                executor=runner,
                threads=chosen_threads,
            )
        shown = done.summary[done.summary["status"] == "ok"][
            ["benchmark", "model", "estimate", "row", "value", "low", "high", "n"]
        ]
        if len(shown):
            parts.echo_table(shown)
        for benchmark, skipped in done.skipped.items():
            for model, why in skipped.items():
                click.echo(f"skipped: {benchmark} on {model}: {why}", err=True)
        for benchmark, why in done.failed.items():
            click.echo(f"failed: {benchmark}: {why}", err=True)
        if done.report_error:
            click.echo(f"failed: report: {done.report_error}", err=True)
        click.echo(
            f"wrote {done.out} (summary.csv{', report.html, card.md' if done.report else ''}, run.json)", err=True
        )
        if done.failed or done.report_error:
            raise SystemExit(3)

    return group


def parse_options(pairs: Sequence[str], benchmarks: Sequence[str], kind: str, flag: str) -> dict[str, dict[str, Any]]:
    """``[BENCHMARK.]KEY=VALUE`` pairs as typed options per benchmark, parsed by each scorer's (or analysis's) options.

    A pair without a benchmark goes to every chosen benchmark whose scorer (analysis) declares the key; one that no
    chosen benchmark's declares, or that names a benchmark not chosen, is an :class:`~assoc.errors.OptionError`.
    """
    from assoc.benchmark.run import analysis_of, scorer_of
    from assoc.components.options import parse_cli_options
    from assoc.errors import OptionError
    from assoc.plugins import manager

    declared: dict[str, Any] = {}
    for name in benchmarks:
        benchmark = manager.get_benchmark(name)
        declared[name] = scorer_of(benchmark) if kind == "scorer" else analysis_of(benchmark)
    out: dict[str, dict[str, Any]] = {name: {} for name in benchmarks}
    for pair in pairs:
        key, sep, _ = pair.partition("=")
        if not sep:
            raise OptionError(f"{flag} expects [BENCHMARK.]KEY=VALUE, got {pair!r}")
        head, dot, rest = key.partition(".")
        if dot:
            if head not in out:
                raise OptionError(f"{flag} {pair!r}: {head!r} is not a benchmark of this run ({', '.join(benchmarks)})")
            cls = declared[head]
            owner = f"{kind} {getattr(cls, 'name', head)!r} of benchmark {head!r}"
            out[head].update(parse_cli_options(cls.options, [pair.split(".", 1)[1]], owner=owner))
            continue
        takers = [name for name, cls in declared.items() if key.strip().replace("-", "_") in _names(cls.options)]
        if not takers:
            raise OptionError(
                f"{flag} {pair!r}: no {kind} of the chosen benchmarks ({', '.join(benchmarks)}) takes {key!r}"
            )
        for name in takers:
            cls = declared[name]
            out[name].update(parse_cli_options(cls.options, [pair], owner=f"{kind} {getattr(cls, 'name', name)!r}"))
    return out


def _names(options: Sequence[Any]) -> set[str]:
    return {option.name for option in options} | {old for option in options for old in option.renamed_from}


def benchmark_lines() -> list[str]:
    """One line per registered benchmark: its parts, the request kinds it sends and the model kinds that serve them."""
    from assoc.benchmark.run import request_kinds
    from assoc.errors import AssocError
    from assoc.lm.loading import registered_kinds
    from assoc.plugins import manager

    kinds = registered_kinds()
    lines = []
    for name, benchmark in manager.benchmarks().items():
        try:
            alternatives = request_kinds(benchmark)
        except AssocError as exc:
            lines.append(f"{name}: unavailable ({exc})")
            continue
        asked = " or ".join(", ".join(sorted(a)) for a in alternatives) or "(its scorer's own)"
        serving = [k for k, cls in kinds.items() if any(set(a) <= set(cls.serves) for a in alternatives)]
        lines.append(
            f"{name}: scorer {benchmark.scorer}, stimuli {benchmark.stimuli}, analysis {benchmark.analysis}; "
            f"sends {asked} ({', '.join(serving) or 'no registered kind'} models)"
            + (f" - {benchmark.description}" if benchmark.description else "")
        )
    return lines

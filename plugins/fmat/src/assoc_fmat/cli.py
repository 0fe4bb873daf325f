"""``assoc fmat check | vocab | info``: the R package's helpers on the command line."""

from __future__ import annotations

import click


def _check_output(output: str | None) -> None:
    """Check the --out path before any model loads (one line, not a traceback after the work)."""
    if output:
        from assoc import check_output_file

        check_output_file(output, "--out")


def _emit(frame, output: str | None) -> None:
    if output:
        from assoc import atomic_write

        with atomic_write(output, "w", encoding="utf-8", newline="") as handle:
            frame.to_csv(handle, index=False)
        click.echo(f"wrote {len(frame)} rows to {output}", err=True)
    else:
        import pandas as pd

        with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
            click.echo(frame.to_string(index=False))


_model_option = click.option(
    "-m",
    "--model",
    "models",
    multiple=True,
    required=True,
    help="Hugging Face id or local directory (repeat for several models).",
)
_device_option = click.option("--device", default="cpu", show_default=True, help="cpu, cuda, cuda:N or auto.")
_revision_option = click.option(
    "--revision", default=None, help="Hugging Face revision (branch, tag or commit) of every model."
)
_output_option = click.option("--out", "output", default=None, help="Write a CSV file instead of printing.")


@click.group("fmat")
def fmat_group() -> None:
    """Fill-Mask Association Test helpers (Bao, 2024)."""


@fmat_group.command("check")
@click.argument("queries", nargs=-1, required=True)
@_model_option
@click.option("-n", "--top", "top_n", default=5, show_default=True, help="How many fills to show.")
@_device_option
@_revision_option
@_output_option
def check_command(queries, models, top_n, device, revision, output) -> None:
    """Show the most probable fills of each QUERY's [MASK] (like FMAT's fill_mask_check)."""
    _check_output(output)
    from .helpers import fill_mask_check

    _emit(fill_mask_check(list(queries), list(models), top_n=top_n, device=device, revision=revision), output)


@fmat_group.command("vocab")
@click.argument("words", nargs=-1, required=True)
@_model_option
@click.option(
    "-q",
    "--query",
    default="The word is [MASK].",
    show_default=True,
    help="Context whose [MASK] the words fill (position matters for Ġ/▁ prefixes).",
)
@_device_option
@_revision_option
@_output_option
def vocab_command(words, models, query, device, revision, output) -> None:
    """Check whether WORDS are single vocabulary tokens of each model (like FMAT's BERT_vocab).

    A word like 1800:2019 checks every number of that range.
    """
    _check_output(output)
    from .helpers import vocab_check

    _emit(vocab_check(list(words), list(models), query=query, device=device, revision=revision), output)


@fmat_group.command("info")
@_model_option
@_device_option
@_revision_option
@_output_option
def info_command(models, device, revision, output) -> None:
    """Show vocabulary size, hidden size, layers, casing, mask token and parameters (like FMAT's BERT_info)."""
    _check_output(output)
    from .helpers import model_info

    _emit(model_info(list(models), device=device, revision=revision), output)

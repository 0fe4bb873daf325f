"""PLL: assoc-pll's ``score_sentences`` against minicons' ``MaskedLMScorer.sequence_score`` (sum).

Sentences drawn from the bundled Watson et al. (2023) stimuli (``bench_pll.py``'s), a
bert-base-shaped masked LM (random weights, the real uncased vocabulary) built once. minicons runs
in its own virtual environment (``bench_pll.py`` creates it: torch first, then minicons, which may
pin a different transformers), in batches of 8 sentences per ``sequence_score`` call.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from benchmarks.harness import Comparison, Contest, Side, now, set_threads

MINICONS_BATCH = 8


def prepare(workdir: Path, args: argparse.Namespace) -> tuple[Comparison, dict[str, Any], None]:
    from benchmarks.bench_pll import DEFAULT_VENV, build_model, ensure_minicons, watson_sentences

    n = 6 if args.quick else 48
    model = build_model(workdir / "model")
    python = ensure_minicons(args.minicons_venv or DEFAULT_VENV)
    if python is None:
        raise SystemExit("pll: the minicons environment could not be created (see above)")
    comparison = Comparison(
        name="pll",
        title="PLL",
        sides=[
            Side("assoc", "assoc `assoc_pll.sentences.score_sentences`"),
            Side(
                "minicons",
                f"minicons `MaskedLMScorer.sequence_score` (sum, {MINICONS_BATCH} sentences per call)",
                python=str(python),
            ),
        ],
        contests=[Contest("assoc", "minicons", "minicons / assoc")],
        clocks=("process", "imported", "loaded"),
        workload=(
            f"{n} sentences of the bundled watson2023 stimuli, PLL (every token masked in turn), a bert-base-shaped "
            "masked LM (12 layers, 768 hidden, random weights) loaded from disk by every side."
        ),
    )
    spec = {"model": str(model), "sentences": watson_sentences(n), "device": args.device, "threads": args.threads}
    return comparison, spec, None


def run_side(side: str, spec: dict[str, Any], stamps: Any, threads: int | None) -> dict[str, Any]:
    import torch

    set_threads(threads)
    sentences, device = spec["sentences"], spec["device"]
    if side == "assoc":
        import transformers  # noqa: F401 - the same library code as minicons' side before the clock
        from assoc_pll.sentences import score_sentences

        from assoc.lm.masked import load_masked_lm

        stamps.imported = now()
        with load_masked_lm(spec["model"], device=device) as lm:
            stamps.loaded = now()
            plls = [r.pll for r in score_sentences(lm, sentences)]
        stamps.done = now()
        return {"plls": plls, "threads": torch.get_num_threads()}
    from minicons import scorer

    stamps.imported = now()
    lm = scorer.MaskedLMScorer(spec["model"], device)
    stamps.loaded = now()
    plls = []
    for i in range(0, len(sentences), MINICONS_BATCH):
        plls += lm.sequence_score(sentences[i : i + MINICONS_BATCH], reduction=lambda x: x.sum(0).item())
    stamps.done = now()
    return {"plls": plls, "threads": torch.get_num_threads()}


def checks(results: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[list[Any]]:
    ours, theirs = results["assoc"]["plls"], results["minicons"]["plls"]
    if len(ours) != len(theirs):
        raise SystemExit(f"pll: assoc scored {len(ours)} sentences, minicons {len(theirs)}")
    diff = max(abs(a - b) for a, b in zip(ours, theirs, strict=True))
    return [
        ["max |Δ PLL| assoc vs minicons (round 1)", f"{diff:.2e} over {len(ours)} sentences"],
        [
            "torch threads in the children",
            f"assoc {results['assoc']['threads']}, minicons {results['minicons']['threads']}",
        ],
    ]

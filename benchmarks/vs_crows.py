"""CrowS-Pairs (nangia2020): assoc's crows_pairs scoring against the authors' loop, one forward pass per masked token.

The baseline re-states ``metric.py``'s ``mask_unigram`` (the script itself has no licence and is not in
this repository): the two sentences aligned with ``difflib.SequenceMatcher``, then for each shared token
but the first and the last one unbatched forward pass per sentence with that token masked, float32
log-softmax, the log-probabilities summed. assoc sends all masked copies of all pairs to the masked-LM
engine at once (batched under a token budget, sorted by length, LM head at the masked position only).
Both sides score the first N pairs of the bundled file with a bert-base-shaped masked LM (random weights,
the real uncased vocabulary), loaded from disk.
"""

from __future__ import annotations

import argparse
import resource
from pathlib import Path
from typing import Any

from benchmarks.harness import Comparison, Contest, Side, now, set_threads


def prepare(workdir: Path, args: argparse.Namespace) -> tuple[Comparison, dict[str, Any], None]:
    from benchmarks.bench_pll import build_model

    n = 4 if args.quick else 60
    model = build_model(workdir / "model")
    comparison = Comparison(
        name="crows",
        title="CrowS-Pairs (nangia2020)",
        sides=[
            Side("assoc", "assoc `assoc_bias_benchmarks.crows_pairs.scoring.score_pairs` (metric nangia2020)"),
            Side("loop", "metric.py's loop: one unbatched forward pass per masked shared token"),
        ],
        contests=[Contest("assoc", "loop", "loop / assoc")],
        clocks=("process", "imported", "loaded"),
        workload=(
            f"the first {n} pairs of CrowS-Pairs (bundled file), both sentences, every shared token but the first and "
            "the last masked in turn; a bert-base-shaped masked LM (12 layers, 768 hidden, random weights)."
        ),
    )
    return comparison, {"model": str(model), "pairs": n, "device": args.device, "threads": args.threads}, None


def _loop(model_dir: str, pairs: list[Any], device: str) -> list[tuple[float, float]]:
    import difflib

    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval().to(device)
    out = []
    with torch.inference_mode():
        for pair in pairs:
            sent1, sent2 = (s.lower() for s in pair.sent1_sent2)  # the uncased rule
            ids1, ids2 = tokenizer.encode(sent1), tokenizer.encode(sent2)
            matcher = difflib.SequenceMatcher(None, [str(x) for x in ids1], [str(x) for x in ids2])
            t1: list[int] = []
            t2: list[int] = []
            for op in matcher.get_opcodes():
                if op[0] == "equal":
                    t1 += list(range(op[1], op[2]))
                    t2 += list(range(op[3], op[4]))
            scores = [0.0, 0.0]
            for i in range(1, len(t1) - 1):
                for side, (ids, position) in enumerate(((ids1, t1[i]), (ids2, t2[i]))):
                    masked = torch.tensor([ids], device=device)
                    masked[0, position] = tokenizer.mask_token_id
                    logits = model(masked)[0].squeeze(0)[position]
                    scores[side] += torch.log_softmax(logits, dim=0)[ids[position]].item()
            first, second = scores
            out.append((first, second) if pair.stereo_antistereo == "stereo" else (second, first))
    return out


def run_side(side: str, spec: dict[str, Any], stamps: Any, threads: int | None) -> dict[str, Any]:
    import torch

    set_threads(threads)
    from assoc_bias_benchmarks.crows_pairs.items import crows_pairs_stimuli, pairs_of

    pairs = pairs_of(crows_pairs_stimuli())[: spec["pairs"]]
    if side == "assoc":
        import transformers  # noqa: F401 - the same library code as the loop's side before the clock
        from assoc_bias_benchmarks.crows_pairs.scoring import score_pairs

        from assoc.lm import load_masked_lm

        stamps.imported = now()
        with load_masked_lm(spec["model"], device=spec["device"]) as lm:
            stamps.loaded = now()
            scores = [(more.score, less.score) for more, less in score_pairs(lm, pairs, metric="nangia2020")]
    else:
        import transformers  # noqa: F401

        stamps.imported = now()
        stamps.loaded = now()  # the loop loads its model inside (counted in its time)
        scores = _loop(spec["model"], pairs, spec["device"])
    stamps.done = now()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux
    return {"scores": scores, "threads": torch.get_num_threads(), "peak_mb": peak}


def checks(results: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[list[Any]]:
    ours, theirs = results["assoc"]["scores"], results["loop"]["scores"]
    diff = max(abs(a - b) for x, y in zip(ours, theirs, strict=True) for a, b in zip(x, y))
    same = sum((a[0] > a[1]) == (b[0] > b[1]) for a, b in zip(ours, theirs))
    return [
        ["max |Δ score| assoc vs loop (round 1)", f"{diff:.2e} over {len(ours)} pairs"],
        ["pairs with the same decision (sent_more > sent_less)", f"{same} of {len(ours)}"],
        [
            "peak resident memory (MB)",
            f"assoc {results['assoc']['peak_mb']:.0f}, loop {results['loop']['peak_mb']:.0f}",
        ],
        ["torch threads in the children", f"assoc {results['assoc']['threads']}, loop {results['loop']['threads']}"],
    ]

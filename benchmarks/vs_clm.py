"""clm: assoc's causal-LM scorer against lm-evaluation-harness and minicons on Bao (2024) fill-mask items.

Every side computes the same two numbers for every (filled query, option) of the workload, on a
GPT-2-small-shaped causal LM (12 layers x 768, 50,257 vocabulary rows, random weights, the tiny
trained byte-level BPE tokenizer) loaded from disk, under the same BOS convention (the BOS token
before every text):

* assoc: ``assoc_clm.scorer.score_items`` (what the ``clm`` scorer runs per work unit): the
  sentence log P and the option log P of each item, each query's prefix computed once;
* lm-eval: ``HFLM.loglikelihood`` with requests ``("", sentence)`` and ``(BOS + prefix, option)``,
  batch size 32 (its ``auto`` probing costs more than it saves on a CPU);
* minicons: ``IncrementalLMScorer.sequence_score`` (sum, ``bos_token=True``) and
  ``conditional_score`` (sum, ``bos_token=True``), 32 texts per call.

The workload: ``--quick`` the first filled query of designs 2A-Q1, 3A-Q1 and 4A-Q1 with all their
options (228 items); the full run every item of every bao2024 design (11,404 items; about an hour
per peer on 2 CPU cores, minutes on a GPU). Peak resident memory (and peak CUDA memory on a GPU)
of each side's process is reported with the checks.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from benchmarks.harness import Comparison, Contest, Side, now, set_threads

BATCH = 32
QUICK_DESIGNS = ("2A-Q1", "3A-Q1", "4A-Q1")


def workload(quick: bool) -> list[list[str]]:
    """[design, filled text, mask group, option] of every item of the workload."""
    from assoc_fmat.bundled import load_bao2024

    stimuli = load_bao2024()
    items = stimuli.mask_items()
    if quick:
        firsts: dict[str, Any] = {}
        for item in items:
            if item.filling.design in QUICK_DESIGNS:
                firsts.setdefault(item.filling.design, item.filling)
        items = [item for item in items if item.filling is firsts.get(item.filling.design)]
    return [[it.filling.design, it.filling.text, it.mask_group, it.option] for it in items]


def prepare(workdir: Path, args: argparse.Namespace) -> tuple[Comparison, dict[str, Any], None]:
    from assoc.testing.tiny_clm import build_gpt2_small

    items = workload(args.quick)
    which = "designs " + ", ".join(QUICK_DESIGNS) + ", first query" if args.quick else "every design"
    model = build_gpt2_small(workdir / "gpt2-small")
    comparison = Comparison(
        name="clm",
        title="clm (causal LMs)",
        sides=[
            Side("assoc", "assoc `assoc_clm.scorer.score_items` (sentence and option log P, shared prefixes)"),
            Side("lm-eval", f"lm-evaluation-harness `HFLM.loglikelihood`, batch size {BATCH}"),
            Side("minicons", f"minicons `IncrementalLMScorer` sequence_score + conditional_score, {BATCH} per call"),
        ],
        contests=[Contest("assoc", "lm-eval", "lm-eval / assoc"), Contest("assoc", "minicons", "minicons / assoc")],
        clocks=("process", "imported", "loaded"),
        workload=(
            f"{len(items)} fill-mask items of bao2024 ({which}): "
            "log P(sentence) and log P(option | prefix) of each, BOS first, a GPT-2-small-shaped causal LM "
            "(12 x 768, 50,257 rows, random weights) loaded from disk by every side."
        ),
    )
    spec = {"model": str(model), "items": items, "device": args.device, "threads": args.threads}
    return comparison, spec, None


def _texts(items: list[list[str]]) -> tuple[list[str], list[str], list[str]]:
    from assoc import fill_mask

    sentences, prefixes, options = [], [], []
    for _, text, _, option in items:
        sentence, (start, end) = fill_mask(text, option)
        sentences.append(sentence)
        prefixes.append(sentence[:start])
        options.append(sentence[start:end])
    return sentences, prefixes, options


def _peak_memory(torch: Any, device: str) -> dict[str, float]:
    import resource

    out = {"peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if str(device).startswith("cuda"):
        out["peak_cuda_mib"] = torch.cuda.max_memory_allocated() / 2**20
    return out


def run_side(side: str, spec: dict[str, Any], stamps: Any, threads: int | None) -> dict[str, Any]:
    import torch

    set_threads(threads)
    device, items = spec["device"], spec["items"]
    sentences, prefixes, options = _texts(items)
    import transformers  # noqa: F401 - the same library code on every side before the clock

    if side == "assoc":
        from assoc_clm.scorer import score_items

        from assoc import Filling, MaskItem
        from assoc.lm import load_causal_lm

        stamps.imported = now()
        mask_items = [MaskItem(Filling(design, text, text), group, option) for design, text, group, option in items]
        with load_causal_lm(spec["model"], device=device) as lm:
            stamps.loaded = now()
            rows = score_items(lm, mask_items, bos="auto")
        stamps.done = now()
        sentence = [r["sentence_log_prob"] for r in rows]
        option = [r["option_log_prob"] for r in rows]
    elif side == "lm-eval":
        from lm_eval.api.instance import Instance
        from lm_eval.models.huggingface import HFLM

        stamps.imported = now()
        lm = HFLM(pretrained=spec["model"], batch_size=BATCH, device=device, dtype="float32")
        stamps.loaded = now()
        bos = lm.tokenizer.bos_token
        pairs = [("", s) for s in sentences] + [(bos + p, o) for p, o in zip(prefixes, options)]
        requests = [Instance("loglikelihood", {}, pair, i) for i, pair in enumerate(pairs)]
        values = [v for v, _ in lm.loglikelihood(requests, disable_tqdm=True)]
        stamps.done = now()
        sentence, option = values[: len(sentences)], values[len(sentences) :]
    else:
        from minicons import scorer

        stamps.imported = now()
        lm = scorer.IncrementalLMScorer(spec["model"], device=device)
        stamps.loaded = now()

        def total(x: Any) -> float:
            return float(x.sum(0).item())

        sentence, option = [], []
        for i in range(0, len(sentences), BATCH):
            sentence += lm.sequence_score(sentences[i : i + BATCH], reduction=total, bos_token=True)
            context = [p.rstrip() for p in prefixes[i : i + BATCH]]
            # minicons joins prefix + " " + option: the prefixes here end in one space (bao2024 queries)
            option += lm.conditional_score(context, options[i : i + BATCH], reduction=total, bos_token=True)
        stamps.done = now()
    return {"sentence": sentence, "option": option, "threads": torch.get_num_threads(), **_peak_memory(torch, device)}


def checks(results: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[list[Any]]:
    ours = results["assoc"]
    rows: list[list[Any]] = []
    for peer in ("lm-eval", "minicons"):
        theirs = results[peer]
        for key in ("sentence", "option"):
            if len(ours[key]) != len(theirs[key]):
                raise SystemExit(f"clm: assoc gave {len(ours[key])} {key} values, {peer} {len(theirs[key])}")
            diff = max(abs(a - b) for a, b in zip(ours[key], theirs[key], strict=True))
            rel = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(ours[key], theirs[key], strict=True))
            rows.append(
                [f"max |Δ {key} log P| assoc vs {peer} (round 1)", f"{diff:.2e} (relative {rel:.1e}, float32 sums)"]
            )
    for side in ("assoc", "lm-eval", "minicons"):
        memory = f"{results[side]['peak_rss_mib']:.0f} MiB resident"
        if "peak_cuda_mib" in results[side]:
            memory += f", {results[side]['peak_cuda_mib']:.0f} MiB CUDA"
        rows.append([f"peak memory of the {side} process (round 1)", memory])
    rows.append(
        [
            "torch threads in the children",
            ", ".join(f"{s} {results[s]['threads']}" for s in ("assoc", "lm-eval", "minicons")),
        ]
    )
    return rows

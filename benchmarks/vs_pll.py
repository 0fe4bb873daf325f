"""PLL: assoc's ``pseudo_log_likelihoods`` (the pll scorer's) against minicons' ``MaskedLMScorer.sequence_score``.

Sentences drawn from the bundled Watson et al. (2023) stimuli (``bench_pll.py``'s), a
bert-base-shaped masked LM (random weights, the real uncased vocabulary) built once. minicons runs
in its own virtual environment (``bench_pll.py`` creates it: torch first, then minicons, which may
pin a different transformers), in batches of 8 sentences per ``sequence_score`` call.

A first result: a one-sentence ``assoc.score("pll", ...)`` study in a fresh process with
``backend="torch"``, ``"onnx"`` and ``"onnx-int8"`` (``assoc-1s*``). The ONNX sides run the
export a first use made and checked (while the comparison is prepared) without torch or
transformers (:mod:`assoc.lm.masked.torch_free`); they report whether either was imported, and the
comparison stops if so. Every one-sentence side starts from a copy of that first use's memo, the
exports linked, and an empty result cache.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from benchmarks.harness import Comparison, Contest, Side, now, set_threads

MINICONS_BATCH = 8
#: the one-sentence study of the ``assoc-1s*`` sides: "Mary is a firefighter from Kansas"
ONE_SENTENCE = {
    "designs": [
        {
            "name": "one",
            "queries": ["{TARGET} is a [MASK] from {ATTRIB}"],
            "mask": {"FEM": ["firefighter"]},
            "target": {"female": ["Mary"]},
            "attribute": {"state": ["Kansas"]},
        }
    ]
}
ONE_SENTENCE_SIDES = ("assoc-1s", "assoc-1s-onnx", "assoc-1s-onnx-int8")
#: ``python -m benchmarks pll --only one-sentence``: the one-sentence sides alone, without minicons
GROUPS = {"one-sentence": ONE_SENTENCE_SIDES}


def prepare(workdir: Path, args: argparse.Namespace) -> tuple[Comparison, dict[str, Any], None]:
    from benchmarks.bench_pll import DEFAULT_VENV, build_model, ensure_minicons, watson_sentences

    n = 6 if args.quick else 48
    model = build_model(workdir / "model")
    only_one_sentence = getattr(args, "only", None) == "one-sentence"
    python = None if only_one_sentence else ensure_minicons(args.minicons_venv or DEFAULT_VENV)
    if python is None and not only_one_sentence:
        raise SystemExit("pll: the minicons environment could not be created (see above)")
    from benchmarks.vs_fmat import _first_use, _onnx_installed

    onnx = args.device == "cpu" and _onnx_installed()
    first_use = _first_use(str(model), workdir / "first-use", onnx)
    one_sentence = [
        Side("assoc-1s", "assoc `score('pll')`, a one-sentence study"),
        *(
            [
                Side("assoc-1s-onnx", "assoc `score('pll')`, a one-sentence study, `backend='onnx'` (no torch)"),
                Side("assoc-1s-onnx-int8", "the same, `backend='onnx-int8'` (opt-in; no torch)"),
            ]
            if onnx
            else []
        ),
    ]
    comparison = Comparison(
        name="pll",
        title="PLL",
        sides=[
            Side("assoc", "assoc `assoc.lm.pseudo_log_likelihoods`"),
            Side(
                "minicons",
                f"minicons `MaskedLMScorer.sequence_score` (sum, {MINICONS_BATCH} sentences per call)",
                python=str(python) if python is not None else None,
            ),
            *one_sentence,
        ],
        contests=[
            Contest("assoc", "minicons", "minicons / assoc"),
            *(
                [
                    Contest("assoc-1s-onnx", "assoc-1s", "one sentence: backend=torch / backend=onnx"),
                    Contest("assoc-1s-onnx-int8", "assoc-1s", "one sentence: backend=torch / backend=onnx-int8"),
                ]
                if onnx
                else []
            ),
        ],
        clocks=("process", "imported", "loaded"),
        workload=(
            (
                ""
                if only_one_sentence
                else f"{n} sentences of the bundled watson2023 stimuli, PLL (every token masked in turn), "
            )
            + "a bert-base-shaped "
            "masked LM (12 layers, 768 hidden, random weights) loaded from disk by every side. The one-sentence "
            "sides score 'Mary is a firefighter from Kansas' with `assoc.score('pll')`, starting from what a first "
            "use of the model leaves in the cache (made once in preparation) with an empty result cache."
        ),
    )
    spec = {
        "model": str(model),
        "sentences": watson_sentences(n),
        "device": args.device,
        "threads": args.threads,
        "first_use": first_use,
    }
    return comparison, spec, None


def side_spec(side: str, spec: dict[str, Any], workdir: Path, index: int) -> dict[str, Any]:
    """The one-sentence sides start from a copy of the first use's memo (:func:`benchmarks.vs_fmat.side_spec`)."""
    from benchmarks.vs_fmat import side_spec as fmat_side_spec

    return fmat_side_spec(side, spec, workdir, index) if side in ONE_SENTENCE_SIDES else spec


def run_side(side: str, spec: dict[str, Any], stamps: Any, threads: int | None) -> dict[str, Any]:
    if side in ONE_SENTENCE_SIDES:
        return _one_sentence(side, spec, stamps, threads)
    import torch

    set_threads(threads)
    sentences, device = spec["sentences"], spec["device"]
    if side == "assoc":
        import transformers  # noqa: F401 - the same library code as minicons' side before the clock

        from assoc.lm import pseudo_log_likelihoods as score_sentences
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


def _one_sentence(side: str, spec: dict[str, Any], stamps: Any, threads: int | None) -> dict[str, Any]:
    """A one-sentence ``assoc.score("pll")`` study in this fresh process (no torch import on the ONNX sides)."""
    import sys

    from benchmarks.vs_fmat import _backend

    backend = _backend(side)
    options: dict[str, Any] = {"backend": backend} if backend != "torch" else {}
    if backend == "torch":
        import transformers  # noqa: F401 - the same library code as the other torch sides before the clock

        set_threads(threads)
    elif threads:
        options["threads"] = threads
    import assoc

    stamps.imported = now()
    table = assoc.score("pll", ONE_SENTENCE, models=[spec["model"]], device=spec["device"], progress=False, **options)
    stamps.done = now()
    heavy = sorted(name for name in ("torch", "transformers") if name in sys.modules)
    used = sys.modules["torch"].get_num_threads() if "torch" in sys.modules else threads
    return {"plls": [float(v) for v in table["value"]], "threads": used, "heavy_imports": heavy}


def checks(results: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[list[Any]]:
    head = []
    if "assoc" in results and "minicons" in results:  # not with --only one-sentence
        ours, theirs = results["assoc"]["plls"], results["minicons"]["plls"]
        if len(ours) != len(theirs):
            raise SystemExit(f"pll: assoc scored {len(ours)} sentences, minicons {len(theirs)}")
        diff = max(abs(a - b) for a, b in zip(ours, theirs, strict=True))
        head.append(["max |Δ PLL| assoc vs minicons (round 1)", f"{diff:.2e} over {len(ours)} sentences"])
    rows = []
    for side in ("assoc-1s-onnx", "assoc-1s-onnx-int8"):
        if side not in results:
            continue
        if results[side]["heavy_imports"]:
            raise SystemExit(f"pll: side {side!r} imported {', '.join(results[side]['heavy_imports'])}")
        delta = max(abs(a - b) for a, b in zip(results[side]["plls"], results["assoc-1s"]["plls"], strict=True))
        if side == "assoc-1s-onnx" and delta > 1e-4:  # a sum of 9 log probabilities, each within 1e-5
            raise SystemExit(f"pll: {side} differs from assoc-1s by {delta:.2e}")
        rows.append([f"max |Δ PLL| {side} vs assoc-1s (round 1)", f"{delta:.2e} (one sentence)"])
    if rows:
        rows.append(["torch or transformers imported by the backend=onnx/onnx-int8 sides", "no (round 1)"])
    labels = {
        "torch": "first use, PyTorch: weights' fingerprint and the engine's checks",
        "onnx": "first use, backend=onnx: export, its check against PyTorch, the torch-free record",
        "onnx-int8": "first use, backend=onnx-int8: the int8 copy",
    }
    for backend, seconds in spec.get("first_use", {}).items():
        rows.append([f"{labels[backend]} (made in preparation, not in the rounds)", f"{seconds:.1f} s"])
    named = ("assoc", "minicons") if head else ("assoc-1s",)
    threads = ", ".join(f"{side} {results[side]['threads']}" for side in named)
    return [*head, *rows, ["torch threads in the children", threads]]

"""FMAT: the fmat scorer against transformers' fill-mask pipeline and a batched masked-LM loop.

The study is ``bench_fmat.py --workload study``'s: 8 gender x occupation templates x 60
occupations = 480 unique queries x 6 single-token options (he/man/boy, she/woman/girl), on a
bert-base-shaped masked LM (12 layers, 768 hidden, the real bert-base-uncased vocabulary, random
weights: speed does not depend on them) built once into a temporary directory. Sides:

* ``assoc``: ``assoc.score("fmat", study, models=[model])`` (result cache on, in an empty directory);
* ``pipeline``: ``pipeline("fill-mask")`` called once per query with ``targets`` = its options
  (the R package FMAT's engine);
* ``batched``: what a competent user writes: ``AutoTokenizer`` + ``AutoModelForMaskedLM``, the
  queries in batches of 32 (in the study's order) padded, one forward pass per batch,
  ``log_softmax`` at the mask position, the option ids gathered (single-token options only);
* ``assoc-1q`` and ``load``: a one-query study with assoc, against the model's own load time
  (``AutoModelForMaskedLM.from_pretrained`` + ``AutoTokenizer.from_pretrained``), and
  ``pipeline-1q``: the fill-mask pipeline on that one query;
* ``assoc-onnx``, ``assoc-onnx-int8``, ``assoc-1q-onnx``, ``assoc-1q-onnx-int8`` (CPU only): the
  480-query and the one-query study with ``backend="onnx"`` / ``"onnx-int8"``, which run the
  checked export without torch or transformers (:mod:`assoc.lm.masked.torch_free`; each such side
  reports whether torch or transformers was imported, and the comparison stops if one was).

What a first use leaves in the cache is made while the comparison is prepared, not in the rounds:
the ONNX export with its check against PyTorch, the int8 copy, and the facts remembered about the
weights (their fingerprint, the engine's fast-path checks), each a one-time cost per model reported
on its own line. Every assoc side of every round starts from a copy of that memo, with the exports
linked and an empty result cache: a later study on a cached model, not the first ever.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from benchmarks.harness import Comparison, Contest, Side, now, set_threads

BATCH = 32
ONE_QUERY = "[MASK] works as a {TARGET}."


def one_query_study() -> dict[str, Any]:
    from benchmarks.bench_fmat import OPTIONS

    return {"designs": [{"name": "one", "queries": [ONE_QUERY], "mask": OPTIONS, "target": {"Occupation": ["nurse"]}}]}


ONNX_SIDES = ("assoc-onnx", "assoc-onnx-int8", "assoc-1q-onnx", "assoc-1q-onnx-int8")
#: ``python -m benchmarks fmat --only one-query``: the one-query study's fresh-process sides alone (minutes)
GROUPS = {"one-query": ("assoc-1q", "pipeline-1q", "load", "assoc-1q-onnx", "assoc-1q-onnx-int8")}


def prepare(workdir: Path, args: argparse.Namespace) -> tuple[Comparison, dict[str, Any], None]:
    from assoc_fmat.log_probs import items_of

    from benchmarks.bench_fmat import build_model, options_per_query, stimuli

    layers, hidden, queries = (2, 128, 16) if args.quick else (12, 768, 480)
    model = build_model(str(workdir / "model"), layers, hidden)
    options_of = options_per_query(items_of(stimuli(queries)))
    options_of_1q = options_per_query(items_of(assoc_stimuli(one_query_study())))
    onnx = args.device == "cpu" and _onnx_installed()
    first_use = _first_use(model, workdir / "first-use", onnx)
    onnx_sides = [
        Side("assoc-onnx", "assoc `score('fmat', backend='onnx')` (ONNX Runtime, float32; no torch)"),
        Side("assoc-onnx-int8", "assoc `score('fmat', backend='onnx-int8')` (int8, opt-in; no torch)"),
        Side("assoc-1q-onnx", "assoc, a one-query study, `backend='onnx'` (no torch)"),
        Side("assoc-1q-onnx-int8", "assoc, a one-query study, `backend='onnx-int8'` (no torch)"),
    ]
    onnx_contests = [
        Contest("assoc-onnx", "pipeline", "pipeline / assoc backend=onnx"),
        Contest("assoc-onnx", "assoc", "assoc backend=torch / assoc backend=onnx"),
        Contest("assoc-onnx-int8", "assoc", "assoc backend=torch / assoc backend=onnx-int8"),
        Contest("assoc-1q-onnx", "pipeline-1q", "pipeline, one query / assoc one-query backend=onnx"),
        Contest("assoc-1q-onnx", "assoc-1q", "assoc one-query backend=torch / backend=onnx"),
        Contest("assoc-1q-onnx", "load", "model load alone / assoc one-query study backend=onnx"),
        Contest("assoc-1q-onnx-int8", "assoc-1q", "assoc one-query backend=torch / backend=onnx-int8"),
    ]
    comparison = Comparison(
        name="fmat",
        title="FMAT",
        sides=[
            Side("assoc", "assoc `score('fmat')`"),
            Side("pipeline", "transformers `pipeline('fill-mask')`, one call per query with `targets`"),
            Side("batched", f"batched `AutoModelForMaskedLM` loop ({BATCH} queries per forward pass)"),
            Side("assoc-1q", "assoc, a one-query study"),
            Side("pipeline-1q", "transformers `pipeline('fill-mask')`, the one query"),
            Side("load", "the model's own load (`from_pretrained`: model + tokenizer)"),
            *(onnx_sides if onnx else []),
        ],
        contests=[
            Contest("assoc", "pipeline", "pipeline / assoc"),
            Contest("assoc", "batched", "batched loop / assoc"),
            Contest("assoc-1q", "load", "model load alone / assoc one-query study (1 = no cost beyond the load)"),
            Contest("assoc-1q", "pipeline-1q", "pipeline, one query / assoc one-query study"),
            *(onnx_contests if onnx else []),
        ],
        clocks=("process", "imported"),
        workload=(
            (
                ""
                if getattr(args, "only", None) == "one-query"
                else f"{len(options_of)} unique queries x 6 single-token options (`bench_fmat.py --workload study`), "
                "and "
            )
            + f"a one-query study (`{ONE_QUERY}`, target nurse, the same 6 options), on a bert-base-shaped masked LM "
            f"({layers} layers, {hidden} hidden, bert-base-uncased vocabulary, random weights) loaded from disk by "
            "every side; imports and model load included (clock process). Every assoc side starts from what a "
            "first use of the model leaves in the cache (the ONNX exports and their checks, the weights' "
            "fingerprint, the engine's checks; made once in preparation) with an empty result cache."
        ),
    )
    spec = {
        "model": model,
        "device": args.device,
        "threads": args.threads,
        "queries": queries,
        "options_of": options_of,
        "options_of_1q": options_of_1q,
        "first_use": first_use,
    }
    return comparison, spec, None


def assoc_stimuli(study: dict[str, Any]) -> Any:
    import assoc

    return assoc.Stimuli.from_dict(study)


def _onnx_installed() -> bool:
    from assoc.lm.onnx import missing_packages

    return not missing_packages()


def _first_use(model: str, root: Path, onnx: bool) -> dict[str, float]:
    """What a first use of ``model`` leaves in the cache root ``root``; the seconds of each step.

    PyTorch: the weights' fingerprint and the engine's fast-path checks. ONNX (``onnx``): the
    float32 export with its probe check against PyTorch, the first batch's check and the record
    that lets later processes run it without torch; then the int8 copy.
    """
    import time

    from assoc.infra.cache import Cache
    from assoc.lm.masked import MaskRequest, load_masked_lm

    seconds = {}
    backends = ["torch", *(["onnx", "onnx-int8"] if onnx else [])]
    for backend in backends:
        with load_masked_lm(model, backend=backend, memo=Cache(root)) as lm:
            start = time.perf_counter()
            lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5,))])  # exports, checks, runs
            seconds[backend] = time.perf_counter() - start
    return seconds


def side_spec(side: str, spec: dict[str, Any], workdir: Path, index: int) -> dict[str, Any]:
    """Every assoc side starts from a copy of the first use's memo, the exports linked, and no results.

    A cache hit would not be a study's run; the memo (the weights' fingerprint, the engine's and
    the exports' checks, the record of a torch-free export) is what a later run finds.
    """
    import shutil

    cache = workdir / f"cache-{side}-{index}"
    if side.startswith("assoc"):
        prepared = workdir / "first-use"
        cache.mkdir(parents=True, exist_ok=True)
        if (prepared / "memo").is_dir() and not (cache / "memo").exists():
            shutil.copytree(prepared / "memo", cache / "memo")
        if (prepared / "models").is_dir() and not (cache / "models").exists():
            (cache / "models").symlink_to(prepared / "models", target_is_directory=True)
    return {**spec, "env": {"ASSOC_CACHE_DIR": str(cache)}}


def _backend(side: str) -> str:
    return "onnx-int8" if side.endswith("onnx-int8") else "onnx" if side.endswith("onnx") else "torch"


def run_side(side: str, spec: dict[str, Any], stamps: Any, threads: int | None) -> dict[str, Any]:
    import sys
    import warnings

    warnings.simplefilter("ignore")  # pipeline target warnings; nothing here is out of vocabulary
    model, device = spec["model"], spec["device"]
    if side.startswith("assoc"):
        backend = _backend(side)
        options: dict[str, Any] = {"backend": backend} if backend != "torch" else {}
        if backend == "torch":
            import transformers  # noqa: F401 - the same library code as the other sides before the clock

            set_threads(threads)
        elif threads:
            options["threads"] = threads  # assoc's setting: ONNX Runtime's intra-op threads without torch
        import assoc
        from benchmarks.bench_fmat import stimuli

        study = one_query_study() if "-1q" in side else stimuli(spec["queries"])
        stamps.imported = now()
        table = assoc.score("fmat", study, models=[model], progress=False, device=device, **options)
        stamps.done = now()
        values = [[s, m, float(v)] for s, m, v in zip(table["sentence"], table["mask"], table["value"])]
        heavy = sorted(name for name in ("torch", "transformers") if name in sys.modules)
        used = sys.modules["torch"].get_num_threads() if "torch" in sys.modules else threads
        return {"values": values, "threads": used, "heavy_imports": heavy}
    import torch

    set_threads(threads)
    if side in ("pipeline", "pipeline-1q"):
        from transformers import pipeline

        stamps.imported = now()
        pipe = pipeline("fill-mask", model=model, device=device)
        mask = pipe.tokenizer.mask_token
        stamps.loaded = now()
        values = []
        for sentence, options in spec["options_of_1q" if side == "pipeline-1q" else "options_of"].items():
            for r in pipe(sentence.replace("[MASK]", mask), targets=options, top_k=len(options)):
                values.append([sentence, r["token_str"], math.log(r["score"])])
        stamps.done = now()
        return {"values": values, "threads": torch.get_num_threads()}
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    stamps.imported = now()
    tokenizer = AutoTokenizer.from_pretrained(model)
    lm = AutoModelForMaskedLM.from_pretrained(model).to(device).eval()
    stamps.loaded = now()
    if side == "load":
        return {"threads": torch.get_num_threads()}
    sentences = list(spec["options_of"])
    values = []
    with torch.inference_mode():
        for start in range(0, len(sentences), BATCH):
            batch = sentences[start : start + BATCH]
            texts = [s.replace("[MASK]", tokenizer.mask_token) for s in batch]
            encoded = tokenizer(texts, padding=True, return_tensors="pt").to(device)
            logits = lm(**encoded).logits
            rows, cols = (encoded["input_ids"] == tokenizer.mask_token_id).nonzero(as_tuple=True)
            log_probs = torch.log_softmax(logits[rows, cols].float(), dim=-1).cpu()
            for row, sentence in zip(rows.tolist(), batch, strict=True):
                options = spec["options_of"][sentence]
                ids = tokenizer.convert_tokens_to_ids(options)
                values += [[sentence, o, float(log_probs[row, i])] for o, i in zip(options, ids, strict=True)]
    stamps.done = now()
    return {"values": values, "threads": torch.get_num_threads()}


def max_difference(ours: list[list[Any]], theirs: list[list[Any]]) -> tuple[float, int]:
    """Largest |log P difference| over the (sentence, option) pairs both sides scored, and their number."""
    mine = {(s, o): v for s, o, v in ours}
    pairs = [(mine[(s, o)], v) for s, o, v in theirs if (s, o) in mine]
    return max(abs(a - b) for a, b in pairs), len(pairs)


def checks(results: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[list[Any]]:
    rows = []
    expected = {
        "": sum(len(o) for o in spec["options_of"].values()),
        "-1q": sum(len(o) for o in spec["options_of_1q"].values()),
    }
    pairs = [("assoc", "pipeline"), ("assoc", "batched"), ("assoc-1q", "pipeline-1q")]
    onnx = [side for side in ONNX_SIDES if side in results]
    for side in onnx:
        if results[side]["heavy_imports"]:
            raise SystemExit(f"fmat: side {side!r} imported {', '.join(results[side]['heavy_imports'])}")
        torch_side = "assoc-1q" if "-1q" in side else "assoc"
        pairs += [(side, torch_side), (side, "pipeline-1q" if "-1q" in side else "pipeline")]
    for ours, side in pairs:
        if ours not in results or side not in results:
            continue  # a group of the sides (--only)
        diff, n = max_difference(results[ours]["values"], results[side]["values"])
        wanted = expected["-1q" if "-1q" in ours else ""]
        if n != wanted:
            raise SystemExit(f"fmat: only {n} of {wanted} log probabilities of {side} match {ours}'s")
        if _backend(ours) == "onnx" and diff > 1e-5:
            raise SystemExit(f"fmat: {ours} differs from {side} by {diff:.2e} > 1e-5")
        rows.append([f"max |Δ log P| {ours} vs {side} (round 1)", f"{diff:.2e} over {n} values"])
    if onnx:
        rows.append(
            [
                "torch or transformers imported by the backend=onnx/onnx-int8 sides",
                "no (round 1; every round's report: side_info in the JSON)",
            ]
        )
    labels = {
        "torch": "first use, PyTorch: weights' fingerprint and the engine's checks",
        "onnx": "first use, backend=onnx: torch.onnx.export, its check against PyTorch, the torch-free record",
        "onnx-int8": "first use, backend=onnx-int8: the int8 copy of the checked export",
    }
    for backend, seconds in spec.get("first_use", {}).items():
        rows.append([f"{labels[backend]} (made in preparation, not in the rounds)", f"{seconds:.1f} s"])
    torch_side = "assoc" if "assoc" in results else "assoc-1q"
    rows.append(["torch threads in the children", results[torch_side]["threads"]])
    return rows

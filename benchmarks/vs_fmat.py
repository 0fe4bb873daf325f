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
  (``AutoModelForMaskedLM.from_pretrained`` + ``AutoTokenizer.from_pretrained``);
* ``assoc-onnx`` (CPU only): the same study with ``backend="onnx"`` (the forward passes on ONNX
  Runtime, :mod:`assoc.lm.masked.onnx`). The model is exported once while the comparison is prepared,
  as a first use would, into a directory every round's (otherwise empty) cache links to: the
  export is a one-time cost per model, reported on its own line, not in the rounds; the check of
  the export against PyTorch, made on every load, is in the rounds.
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


def prepare(workdir: Path, args: argparse.Namespace) -> tuple[Comparison, dict[str, Any], None]:
    from assoc_fmat.log_probs import items_of

    from benchmarks.bench_fmat import build_model, options_per_query, stimuli

    layers, hidden, queries = (2, 128, 16) if args.quick else (12, 768, 480)
    model = build_model(str(workdir / "model"), layers, hidden)
    options_of = options_per_query(items_of(stimuli(queries)))
    onnx = args.device == "cpu" and _onnx_installed()
    export_seconds = _export(model, workdir / "onnx-export") if onnx else None
    comparison = Comparison(
        name="fmat",
        title="FMAT",
        sides=[
            Side("assoc", "assoc `score('fmat')`"),
            Side("pipeline", "transformers `pipeline('fill-mask')`, one call per query with `targets`"),
            Side("batched", f"batched `AutoModelForMaskedLM` loop ({BATCH} queries per forward pass)"),
            Side("assoc-1q", "assoc, a one-query study"),
            Side("load", "the model's own load (`from_pretrained`: model + tokenizer)"),
            *([Side("assoc-onnx", "assoc `score('fmat', backend='onnx')` (ONNX Runtime, float32)")] if onnx else []),
        ],
        contests=[
            Contest("assoc", "pipeline", "pipeline / assoc"),
            Contest("assoc", "batched", "batched loop / assoc"),
            Contest("assoc-1q", "load", "model load alone / assoc one-query study (1 = no cost beyond the load)"),
            *(
                [
                    Contest("assoc-onnx", "pipeline", "pipeline / assoc backend=onnx"),
                    Contest("assoc-onnx", "assoc", "assoc backend=torch / assoc backend=onnx"),
                ]
                if onnx
                else []
            ),
        ],
        clocks=("process", "imported"),
        workload=(
            f"{len(options_of)} unique queries x 6 single-token options (`bench_fmat.py --workload study`), a "
            f"bert-base-shaped masked LM ({layers} layers, {hidden} hidden, bert-base-uncased vocabulary, random "
            "weights) loaded from disk by every side; imports and model load included (clock process)."
        ),
    )
    spec = {
        "model": model,
        "device": args.device,
        "threads": args.threads,
        "queries": queries,
        "options_of": options_of,
        "export_seconds": export_seconds,
    }
    return comparison, spec, None


def _onnx_installed() -> bool:
    from assoc.lm.onnx import missing_packages

    return not missing_packages()


def _export(model: str, root: Path) -> float:
    """Export ``model`` for ``backend="onnx"`` into the cache root ``root`` (a first use); its seconds."""
    import time

    from assoc.infra.cache import Cache
    from assoc.lm.masked import MaskRequest, load_masked_lm

    with load_masked_lm(model, backend="onnx", memo=Cache(root)) as lm:
        start = time.perf_counter()
        lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5,))])  # exports, checks, runs
        return time.perf_counter() - start


def side_spec(side: str, spec: dict[str, Any], workdir: Path, index: int) -> dict[str, Any]:
    """Every assoc run gets an empty result cache (a cache hit would not be a study's first run).

    The ``assoc-onnx`` side's cache links to the export made in :func:`prepare` (``models/``) and
    holds nothing else: results, fingerprints and checks start empty as for ``assoc``.
    """
    cache = workdir / f"cache-{side}-{index}"
    if side == "assoc-onnx":
        cache.mkdir(parents=True, exist_ok=True)
        if not (cache / "models").exists():
            (cache / "models").symlink_to(workdir / "onnx-export" / "models", target_is_directory=True)
    return {**spec, "env": {"ASSOC_CACHE_DIR": str(cache)}}


def run_side(side: str, spec: dict[str, Any], stamps: Any, threads: int | None) -> dict[str, Any]:
    import warnings

    import torch

    set_threads(threads)
    warnings.simplefilter("ignore")  # pipeline target warnings; nothing here is out of vocabulary
    model, device = spec["model"], spec["device"]
    if side in ("assoc", "assoc-1q", "assoc-onnx"):
        import transformers  # noqa: F401 - the same library code as the other sides before the clock

        import assoc
        from benchmarks.bench_fmat import stimuli

        study = one_query_study() if side == "assoc-1q" else stimuli(spec["queries"])
        stamps.imported = now()
        backend = {"backend": "onnx"} if side == "assoc-onnx" else {}
        table = assoc.score("fmat", study, models=[model], progress=False, device=device, **backend)
        stamps.done = now()
        values = [[s, m, float(v)] for s, m, v in zip(table["sentence"], table["mask"], table["value"])]
        return {"values": values, "threads": torch.get_num_threads()}
    if side == "pipeline":
        from transformers import pipeline

        stamps.imported = now()
        pipe = pipeline("fill-mask", model=model, device=device)
        mask = pipe.tokenizer.mask_token
        stamps.loaded = now()
        values = []
        for sentence, options in spec["options_of"].items():
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
    expected = sum(len(o) for o in spec["options_of"].values())
    pairs = [("assoc", "pipeline"), ("assoc", "batched")]
    if "assoc-onnx" in results:
        pairs += [("assoc-onnx", "pipeline"), ("assoc-onnx", "assoc")]
    for ours, side in pairs:
        diff, n = max_difference(results[ours]["values"], results[side]["values"])
        if n != expected:
            raise SystemExit(f"fmat: only {n} of {expected} log probabilities of {side} match {ours}'s")
        rows.append([f"max |Δ log P| {ours} vs {side} (round 1)", f"{diff:.2e} over {n} values"])
    if spec.get("export_seconds") is not None:
        rows.append(
            [
                "assoc-onnx: the one-time export (torch.onnx.export, made in preparation, not in the rounds)",
                f"{spec['export_seconds']:.1f} s, with its check against PyTorch",
            ]
        )
    rows.append(["torch threads in the children", results["assoc"]["threads"]])
    return rows

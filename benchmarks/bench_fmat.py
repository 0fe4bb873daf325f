"""Benchmark: the fmat scorer vs transformers' fill-mask pipeline called once per query.

The pipeline called once per query with ``targets`` is the R package FMAT's engine.
This script builds a bert-base-shaped masked LM (12 layers, 768 hidden, the real
bert-base-uncased vocabulary; random weights - speed does not depend on them), scores
QUERIES x OPTIONS both ways in the same process and prints queries per minute, the
speed ratio and the maximum absolute difference of log probabilities. With
``--dtypes`` it also measures the accuracy cost of float16/bfloat16 against float32.

    python benchmarks/bench_fmat.py                  # 240 queries x 6 options, 2 threads
    python benchmarks/bench_fmat.py --workload bao2024   # the bundled Bao (2024) studies 2A-4D
    python benchmarks/bench_fmat.py --queries 400 --threads 4 --dtypes
    python benchmarks/bench_fmat.py --workload study --queries 480   # whole calls, model load included

Offline; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

OCCUPATIONS = [
    "nurse",
    "engineer",
    "doctor",
    "teacher",
    "farmer",
    "pilot",
    "lawyer",
    "writer",
    "singer",
    "dancer",
    "baker",
    "chef",
    "judge",
    "clerk",
    "cashier",
    "janitor",
    "plumber",
    "carpenter",
    "mechanic",
    "surgeon",
    "dentist",
    "pharmacist",
    "scientist",
    "professor",
    "librarian",
    "secretary",
    "manager",
    "banker",
    "soldier",
    "sailor",
    # beyond the first 30 (which the default 240-query synthetic workload uses): the study workload's 480 queries
    "architect",
    "accountant",
    "editor",
    "painter",
    "poet",
    "driver",
    "butcher",
    "tailor",
    "gardener",
    "guard",
    "nanny",
    "maid",
    "waiter",
    "waitress",
    "bartender",
    "firefighter",
    "officer",
    "detective",
    "reporter",
    "photographer",
    "musician",
    "actor",
    "actress",
    "athlete",
    "coach",
    "therapist",
    "counselor",
    "physician",
    "veterinarian",
    "programmer",
]
TEMPLATES = [
    "The [MASK] works as a {}.",
    "[MASK] works as a {}.",
    "[MASK] is a {}.",
    "[MASK] wants to be a {}.",
    "Everyone knows that [MASK] is a very good {}.",
    "In the small town, the [MASK] worked as a {} for years.",
    "[MASK] became a {} after finishing school.",
    "My neighbour said that [MASK] was the best {} in the city.",
]
OPTIONS = {"male": ["he", "man", "boy"], "female": ["she", "woman", "girl"]}


def build_model(directory: str, layers: int, hidden: int) -> str:
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    from assoc.testing.tiny_mlm import bert_uncased_vocab_file

    tokenizer = BertTokenizer(vocab=str(bert_uncased_vocab_file()), do_lower_case=True)
    config = BertConfig(
        num_hidden_layers=layers,
        hidden_size=hidden,
        num_attention_heads=max(1, hidden // 64),
        intermediate_size=4 * hidden,
    )
    torch.manual_seed(0)
    BertForMaskedLM(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def stimuli(n_queries: int):
    """``len(TEMPLATES)`` x ``n_queries / len(TEMPLATES)`` occupations: ``n_queries`` unique filled queries."""
    import assoc

    n_targets = n_queries // len(TEMPLATES)
    if n_queries % len(TEMPLATES) or not 1 <= n_targets <= len(OCCUPATIONS):
        raise SystemExit(
            f"--queries must be a multiple of {len(TEMPLATES)} between {len(TEMPLATES)} and "
            f"{len(TEMPLATES) * len(OCCUPATIONS)}, got {n_queries}"
        )
    targets = sorted(OCCUPATIONS[:n_targets])
    designs = [
        {
            "name": f"t{i}",
            "queries": [template.replace("{}", "{TARGET}")],
            "mask": OPTIONS,
            "target": {"Occupation": targets},
        }
        for i, template in enumerate(TEMPLATES)
    ]
    return assoc.Stimuli.from_dict({"designs": designs})


def options_per_query(items) -> dict[str, list[str]]:
    """Each unique filled query (with ``[MASK]``) and its options in order: what one pipeline call gets."""
    options_of: dict[str, list[str]] = {}
    for item in items:
        options = options_of.setdefault(item.filling.text, [])
        if item.option not in options:
            options.append(item.option)
    return options_of


def run_ours(lm, items, batch_tokens: int | None):
    import warnings

    from assoc_fmat.log_probs import score_model

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # out-of-vocabulary options (NaN) are left out of the comparison
        rows = score_model(lm, items, cache=None, batch_tokens=batch_tokens)
    return rows, time.perf_counter() - start


def run_pipeline(lm, options_of):
    """The R package's engine: one pipeline call per unique query, ``targets`` = that query's options."""
    import warnings

    from transformers import pipeline

    pipe = pipeline("fill-mask", model=lm.model, tokenizer=lm.tokenizer, device=lm.device)
    out = {}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the pipeline warns about options it scores by their first sub-token
        for sentence, options in options_of.items():
            results = pipe(sentence.replace("[MASK]", lm.mask_token), targets=options, top_k=len(options))
            out[sentence] = {lm.tokenizer.convert_ids_to_tokens(r["token"]): math.log(r["score"]) for r in results}
    return out, time.perf_counter() - start


# -- the "study" workload: fixed costs included -----------------------------------------------------------


def study_side(side: str, model: str, n_queries: int, threads: int, clock: str, spawned_at: float) -> dict:
    """One side of the study workload, in this (fresh) process; returns its timings in seconds.

    ``clock="imported"``: both sides first import the same library code, torch,
    ``transformers.pipeline`` (which imports transformers' model-loading code) and
    ``assoc``; then the clock runs over everything that is the side's own work: loading the
    model from disk (plus, for assoc, fingerprinting its weights and checking the engine's
    fast paths), scoring every query and collecting the results (assoc: the table with
    provenance, its result cache on, in an empty directory). Model code imported lazily
    (``modeling_bert``) and first-call warm-ups count on both sides. The assoc side then
    also times a second call in the same process (a notebook).

    ``clock="process"``: the clock starts when the parent starts this process
    (``spawned_at``, wall time) and each side imports only what it uses: Python start-up,
    torch, all of transformers' imports and the rest are included.
    """
    import warnings

    import torch

    torch.set_num_threads(threads)
    warnings.simplefilter("ignore")  # out-of-vocabulary options, pipeline target warnings
    if clock == "imported":
        from transformers import pipeline  # noqa: F401 - the same library code on both sides before the clock

        import assoc  # noqa: F401
    study = stimuli(n_queries)
    if side == "pipeline":
        from assoc_fmat.log_probs import items_of
        from transformers import pipeline

        options_of = options_per_query(items_of(study))
        wall, cpu = time.perf_counter(), time.process_time()
        pipe = pipeline("fill-mask", model=model, device="cpu")
        mask = pipe.tokenizer.mask_token
        rows = []
        for sentence, options in options_of.items():
            for r in pipe(sentence.replace("[MASK]", mask), targets=options, top_k=len(options)):
                rows.append({"sentence": sentence, "token": r["token_str"], "value": math.log(r["score"])})
        done_at = time.time()
        out = {"study": time.perf_counter() - wall, "study_cpu": time.process_time() - cpu, "rows": len(rows)}
        if clock == "process":
            out["study"] = done_at - spawned_at
        return out

    import assoc

    wall, cpu = time.perf_counter(), time.process_time()
    table = assoc.score("fmat", study, models=[model], progress=False)
    done_at = time.time()
    out = {"study": time.perf_counter() - wall, "study_cpu": time.process_time() - cpu, "rows": len(table)}
    if clock == "process":
        out["study"] = done_at - spawned_at
        return out
    from assoc_fmat.log_probs import items_of, score_model

    from assoc.lm.masked import cached_masked_lm

    # A second call in the same process (a notebook): the model is not loaded again. Its overhead is
    # its time minus the engine's own time for the same work (measured right after, same process).
    wall, cpu = time.perf_counter(), time.process_time()
    assoc.score("fmat", study, models=[model], progress=False, cache=False)
    out["second_call"], out["second_call_cpu"] = time.perf_counter() - wall, time.process_time() - cpu
    lm, items = cached_masked_lm(model), items_of(study)
    wall, cpu = time.perf_counter(), time.process_time()
    score_model(lm, items, cache=None)
    out["engine_only"], out["engine_only_cpu"] = time.perf_counter() - wall, time.process_time() - cpu
    wall, cpu = time.perf_counter(), time.process_time()
    assoc.score("fmat", study, models=[model], progress=False)  # every unit from the result cache
    out["second_call_cached"] = time.perf_counter() - wall
    out["second_call_cached_cpu"] = time.process_time() - cpu
    return out


def run_study_workload(args: argparse.Namespace) -> None:
    """Alternate fresh processes of both sides ``--rounds`` times under both clocks; print rounds and spread."""
    import json
    import statistics
    import subprocess
    import sys

    results: dict[tuple[str, str], list[dict]] = {
        (side, clock): [] for side in ("pipeline", "assoc") for clock in ("imported", "process")
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = build_model(os.path.join(tmp, "bert-base-shaped"), args.layers, args.hidden)
        print(
            f"workload study: {args.queries} unique queries x 6 options, bert-base-shaped ({args.layers} layers, "
            f"{args.hidden} hidden), {args.threads} threads; each side in a fresh process, model load included, "
            f"the assoc result cache and memo in an empty directory; load average before: {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        for round_ in range(1, args.rounds + 1):
            order = ("pipeline", "assoc") if round_ % 2 else ("assoc", "pipeline")
            line = []
            for clock in ("imported", "process"):
                for side in order:
                    env = {**os.environ, "ASSOC_CACHE_DIR": os.path.join(tmp, f"cache-{side}-{clock}-{round_}")}
                    command = [sys.executable, __file__, "--study-side", side, "--model", path]
                    command += ["--queries", str(args.queries), "--threads", str(args.threads), "--clock", clock]
                    done = subprocess.run(
                        [*command, "--spawned-at", repr(time.time())], capture_output=True, text=True, env=env
                    )
                    if done.returncode:
                        raise SystemExit(f"{side} side failed:\n{done.stderr}")
                    result = json.loads(done.stdout.strip().splitlines()[-1])
                    results[(side, clock)].append(result)
                pipe, ours = results[("pipeline", clock)][-1], results[("assoc", clock)][-1]
                line.append(
                    f"clock {clock}: pipeline {pipe['study']:.2f} s, assoc {ours['study']:.2f} s, "
                    f"ratio {pipe['study'] / ours['study']:.2f}x"
                )
            ours = results[("assoc", "imported")][-1]
            print(
                f"round {round_} ({order[0]} first): {'; '.join(line)}; assoc second call {ours['second_call']:.3f} s "
                f"(cpu {ours['second_call_cpu']:.3f} s) vs score_model alone {ours['engine_only']:.3f} s "
                f"(cpu {ours['engine_only_cpu']:.3f} s); second call with every unit from the result cache "
                f"{ours['second_call_cached']:.3f} s; load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    for clock in ("imported", "process"):
        pipes, ours = results[("pipeline", clock)], results[("assoc", clock)]
        ratios = [p["study"] / a["study"] for p, a in zip(pipes, ours, strict=True)]
        print(
            f"clock {clock}: ratio median {statistics.median(ratios):.2f}x (min {min(ratios):.2f}x, "
            f"max {max(ratios):.2f}x); pipeline median {statistics.median(p['study'] for p in pipes):.2f} s, "
            f"assoc median {statistics.median(a['study'] for a in ours):.2f} s"
        )
    ours = results[("assoc", "imported")]
    overheads = [a["second_call_cpu"] - a["engine_only_cpu"] for a in ours]
    print(
        f"second-call overhead over score_model (cpu): median {statistics.median(overheads):+.3f} s; "
        f"second call from the result cache (wall): max {max(a['second_call_cached'] for a in ours):.3f} s"
    )


def main() -> None:
    import sys

    if "--study-side" in sys.argv:  # a child process of --workload study
        import json

        child = argparse.ArgumentParser()
        child.add_argument("--study-side", choices=("pipeline", "assoc"))
        child.add_argument("--model")
        child.add_argument("--queries", type=int)
        child.add_argument("--threads", type=int)
        child.add_argument("--clock", choices=("imported", "process"))
        child.add_argument("--spawned-at", type=float)
        a = child.parse_args()
        print(json.dumps(study_side(a.study_side, a.model, a.queries, a.threads, a.clock, a.spawned_at)))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--workload",
        choices=("synthetic", "bao2024", "study"),
        default="synthetic",
        help="synthetic: 8 gender x occupation templates (5-13 words) x 30 occupations x 6 options; "
        "bao2024: every filled query of the bundled Bao (2024) studies 2A-4D with each design's own "
        "options (the year studies 4A-4D have 220 options per query); study: a whole "
        "assoc.score call vs the pipeline, each in a fresh process with the model load included "
        "(use --queries 480)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="study workload: alternating rounds")
    parser.add_argument(
        "--queries", type=int, default=240, help="synthetic workload: number of unique filled queries (>= 200)"
    )
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument(
        "--batch-tokens",
        type=int,
        default=None,
        help="engine batch limit (rows x longest row); default: the engine's device default",
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtypes", action="store_true", help="also measure float16/bfloat16 accuracy and speed")
    args = parser.parse_args()
    if args.workload == "study":
        run_study_workload(args)
        return

    import numpy as np
    import torch
    from assoc_fmat.log_probs import items_of

    from assoc.lm import default_batch_tokens
    from assoc.lm.masked import load_masked_lm

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        path = build_model(os.path.join(tmp, "bert-base-shaped"), args.layers, args.hidden)
        lm = load_masked_lm(path, device=args.device)
        if args.workload == "synthetic":
            items = items_of(stimuli(args.queries))
        else:
            import assoc

            items = items_of(assoc.Stimuli.load("bao2024"))
        options_of = options_per_query(items)
        sentences = list(options_of)
        n_tokens = [len(lm.encode(s.replace("[MASK]", lm.mask_token))) for s in sentences]
        print(
            f"model: bert-base-shaped ({args.layers} layers, {args.hidden} hidden, vocab {lm.vocab_size}), "
            f"random weights; device {lm.device}; torch {torch.__version__}; {args.threads} threads; "
            f"batch_tokens {args.batch_tokens or default_batch_tokens(lm.device)}"
        )
        print(
            f"workload {args.workload}: {len(sentences)} unique queries, {len(items)} log probabilities "
            f"({len(items) / len(sentences):.1f} options per query); {sum(n_tokens) / len(n_tokens):.1f} tokens "
            f"per query on average (min {min(n_tokens)}, max {max(n_tokens)}, special tokens included)"
        )
        # warm-up both paths (first-call allocations, lazy imports)
        run_ours(lm, items[:60], args.batch_tokens)
        run_pipeline(lm, {s: options_of[s] for s in sentences[:3]})

        pipe_values, pipe_time = run_pipeline(lm, options_of)
        rows, our_time = run_ours(lm, items, args.batch_tokens)
        # out-of-vocabulary options are NaN here; the pipeline scores them by their first sub-token
        diffs = [abs(row["value"] - pipe_values[row["sentence"]][row["token"]]) for row in rows if not row["oov"]]
        pipe_qpm = len(sentences) / pipe_time * 60
        our_qpm = len(sentences) / our_time * 60
        print(
            f"transformers pipeline('fill-mask'), one call per query with targets: {pipe_time:8.2f} s "
            f"= {pipe_qpm:9.0f} queries/minute"
        )
        print(
            f"assoc fmat engine (batched, mask positions only through the LM head): {our_time:8.2f} s "
            f"= {our_qpm:9.0f} queries/minute"
        )
        print(f"speed ratio: {pipe_time / our_time:.1f}x")
        print(
            f"max |log P difference| vs pipeline: {max(diffs):.3g} over {len(diffs)} values "
            f"({len(rows) - len(diffs)} out-of-vocabulary values left out)"
        )

        if args.dtypes and args.workload != "synthetic":
            print("--dtypes: measured on the synthetic workload only (its options pair up as he/man/boy vs she/...)")
        if args.dtypes and args.workload == "synthetic":
            reference = np.array([row["value"] for row in rows])
            ref_lpr = reference.reshape(-1, 2, 3)  # options ordered he, man, boy | she, woman, girl per sentence
            for dtype in ("bfloat16", "float16"):
                try:
                    low = load_masked_lm(path, device=args.device, dtype=dtype)
                    low_rows, low_time = run_ours(low, items, args.batch_tokens)
                except Exception as exc:  # noqa: BLE001 - report, do not crash the benchmark
                    print(f"{dtype}: not available on {args.device}: {exc}")
                    continue
                values = np.array([row["value"] for row in low_rows])
                lpr = values.reshape(-1, 2, 3)
                d_lpr = np.abs((lpr[:, 0] - lpr[:, 1]) - (ref_lpr[:, 0] - ref_lpr[:, 1]))
                print(
                    f"{dtype}: {low_time:8.2f} s; max |log P - float32| = {np.max(np.abs(values - reference)):.3g}, "
                    f"mean = {np.mean(np.abs(values - reference)):.3g}; max |LPR - float32| = {d_lpr.max():.3g}; "
                    f"r(log P, float32) = {np.corrcoef(values, reference)[0, 1]:.6f}"
                )
                low.close()


if __name__ == "__main__":
    main()

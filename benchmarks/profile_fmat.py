"""Where the time of one ``assoc.score("fmat", ...)`` call goes, in a fresh process.

Runs the fmat study workload of ``benchmarks/bench_fmat.py`` (``--queries`` unique queries x 6
single-token options on a bert-base-shaped model with random weights; 1 query: the time to a first
result) in a fresh child process per round, with an empty cache directory, and splits the call's
wall time into phases by timing the functions that do each part (exclusive time: a phase nested in
another is subtracted from it):

* imports: torch, then transformers' pipeline stack, then assoc (before the call; the pipeline
  pays the first two as well);
* fingerprint: hashing the model directory's files (the cache key and provenance);
* model load / tokenizer load: ``AutoModelForMaskedLM.from_pretrained`` / ``AutoTokenizer``;
* fast-path check: the reference forward passes that check the packed encoder and oneDNN on the
  model's first batch (two rows, the model's own forward);
* forward passes: the engine's batches, of which the matrix products of linear layers are
  measured separately (a second, profiled run in the same process: the torch profiler's time
  of ``linear``/oneDNN operators), with the real tokens and their GFLOP/s;
* per-query work: building the queries, tokenising, turning log probabilities into rows;
* run bookkeeping: the cache (claims, writes), the table, provenance;
* the model's own load time in a fresh process (``from_pretrained`` of model and tokenizer plus
  one forward pass on one sentence, imports excluded), for the one-query comparison.

    python benchmarks/profile_fmat.py                 # 480 queries and 1 query, 3 rounds
    python benchmarks/profile_fmat.py --queries 480 --rounds 1

Offline; nothing is downloaded. Prints Markdown tables (median over rounds, and range) and writes
them to ``docs/benchmarks/fmat-profile.md`` (``--no-write``: print only), which docs/fmat.md includes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = Path(__file__).resolve().parent

PHASES = [
    ("import_torch", "import torch"),
    ("import_transformers", "import transformers' pipeline stack"),
    ("import_assoc", "import assoc"),
    ("fingerprint", "fingerprint (hash of the model's files)"),
    ("model_load", "model load (from_pretrained)"),
    ("tokenizer_load", "tokenizer load"),
    ("check_forward", "fast-path check (reference forward passes)"),
    ("forward", "forward passes"),
    ("per_query", "per-query work (queries, tokenising, rows)"),
    ("bookkeeping", "run bookkeeping (cache, table, provenance)"),
]


class Timers:
    """Exclusive wall time per label for wrapped functions (nested calls are subtracted)."""

    def __init__(self) -> None:
        self.total: dict[str, float] = {}
        self.stack: list[list[Any]] = []

    def wrap(self, owner: Any, attribute: str, label: str | Any) -> None:
        original = getattr(owner, attribute)
        timers = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            name = label(args, kwargs) if callable(label) else label
            frame = [name, time.perf_counter(), 0.0]
            timers.stack.append(frame)
            try:
                return original(*args, **kwargs)
            finally:
                timers.stack.pop()
                elapsed = time.perf_counter() - frame[1]
                timers.total[name] = timers.total.get(name, 0.0) + elapsed - frame[2]
                if timers.stack:
                    timers.stack[-1][2] += elapsed

        if isinstance(owner, type) and isinstance(original, (classmethod, staticmethod)):
            raise TypeError("wrap the bound function")  # pragma: no cover
        setattr(owner, attribute, timed)


def child(queries: int, model: str, threads: int, own_load: bool) -> dict[str, Any]:
    """One round in this fresh process; returns seconds per phase."""
    import warnings

    warnings.simplefilter("ignore")
    out: dict[str, Any] = {}
    start = time.perf_counter()
    import torch

    torch.set_num_threads(threads)
    out["import_torch"] = time.perf_counter() - start
    mark = time.perf_counter()
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline  # noqa: F401

    out["import_transformers"] = time.perf_counter() - mark
    if own_load:
        mark = time.perf_counter()
        lm = AutoModelForMaskedLM.from_pretrained(model)
        tokenizer = AutoTokenizer.from_pretrained(model)
        with torch.inference_mode():
            lm(**tokenizer(["[MASK] is a nurse."], return_tensors="pt"))
        out["own_load"] = time.perf_counter() - mark
        return out
    mark = time.perf_counter()
    import assoc_fmat.log_probs as fmat_scoring

    import assoc
    from assoc.executors import driver as run_module
    from assoc.lm import identity as lm_models
    from assoc.lm.masked import engine

    sys.path.insert(0, str(HERE))
    import bench_fmat

    out["import_assoc"] = time.perf_counter() - mark
    timers = Timers()
    timers.wrap(lm_models, "local_fingerprint", "fingerprint")
    timers.wrap(AutoModelForMaskedLM, "from_pretrained", "model_load")
    timers.wrap(AutoTokenizer, "from_pretrained", "tokenizer_load")

    def forward_label(args: tuple, kwargs: dict) -> str:
        # the fast-path check's reference: the model's own forward with PyTorch's kernels, on probe rows
        return "check_forward" if kwargs.get("shortcut") is False and kwargs.get("onednn") is False else "forward"

    timers.wrap(engine.MaskedLM, "_forward", forward_label)
    timers.wrap(fmat_scoring, "score_model", "per_query")
    timers.wrap(run_module, "run_study", "bookkeeping")
    timers.wrap(assoc, "score", "bookkeeping")
    study = bench_fmat.stimuli(queries) if queries > 1 else one_query_study()
    mark = time.perf_counter()
    assoc.score("fmat", study, models=[model], progress=False)
    out["call"] = time.perf_counter() - mark
    out.update(timers.total)
    out["process"] = time.perf_counter() - start
    # The same forward passes again, profiled: the linear layers' share and the real tokens.
    from torch.profiler import ProfilerActivity, profile

    from assoc.lm.masked import cached_masked_lm

    lm = cached_masked_lm(model)
    items = fmat_scoring.items_of(study)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fmat_scoring.score_model(lm, items, cache=None)
    linear = sum(
        e.self_cpu_time_total for e in prof.key_averages() if "linear" in e.key or e.key.startswith("aten::addmm")
    )
    everything = sum(e.self_cpu_time_total for e in prof.key_averages())
    out["linear_share"] = linear / everything if everything else float("nan")
    sentences = {item.filling.text for item in items}
    out["tokens"] = sum(len(lm.encode(s.replace("[MASK]", lm.mask_token))) for s in sentences)
    out["sentences"] = len(sentences)
    config = lm.model.config
    hidden, inner, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    # multiply-adds per real token: Q, K, V, output (4 h^2) and feed-forward (2 h i) in every layer but
    # the last, where Q, output and feed-forward run at the mask only (counted per sentence)
    per_token = (layers - 1) * (4 * hidden * hidden + 2 * hidden * inner) + 2 * hidden * hidden
    per_mask = 2 * hidden * hidden + 2 * hidden * inner + hidden * hidden + hidden * config.vocab_size
    out["gflop"] = 2 * (out["tokens"] * per_token + len(sentences) * per_mask) / 1e9
    return out


def one_query_study() -> Any:
    import assoc

    design = {
        "name": "t",
        "queries": ["[MASK] is a {TARGET}."],
        "mask": {"male": ["he"], "female": ["she"]},
        "target": {"Occupation": ["nurse"]},
    }
    return assoc.Stimuli.from_dict({"designs": [design]})


def spawn(queries: int, model: str, threads: int, own_load: bool, cache: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", "--queries", str(queries), "--model", model]
    command += ["--threads", str(threads)] + (["--own-load"] if own_load else [])
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "ASSOC_CACHE_DIR": cache})
    if done.returncode:
        raise SystemExit(f"child failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"


def report(queries: int, rounds: list[dict[str, Any]], own: list[dict[str, Any]]) -> list[str]:
    """Markdown lines: the phases of ``rounds`` (median and range) and the forward passes' arithmetic."""
    lines: list[str] = []
    add = lines.append  # the caller prints the lines and writes them to the page
    add(f"\n#### {queries} {'query' if queries == 1 else 'queries'} x 6 options, {len(rounds)} fresh processes\n")
    add("| phase | seconds: median (range) |")
    add("|---|---|")
    for key, label in PHASES:
        values = [r.get(key, 0.0) for r in rounds]
        add(f"| {label} | {spread(values)} |")
    accounted = [sum(r.get(k, 0.0) for k, _ in PHASES) for r in rounds]
    add(f"| **whole process, from `import torch` to the table** | **{spread([r['process'] for r in rounds])}** |")
    add(f"| of which the phases above | {spread(accounted)} |")
    share = statistics.median(r["linear_share"] for r in rounds)
    forward = statistics.median(r["forward"] for r in rounds)
    gflop = rounds[0]["gflop"]
    add(
        f"\nForward passes: {rounds[0]['sentences']} sentences, {rounds[0]['tokens']} real tokens, "
        f"{gflop:.0f} GFLOP; the linear layers' matrix products are {100 * share:.0f}% of the engine's "
        f"operator time (torch profiler), so about {share * forward:.2f} s at "
        f"{gflop / (share * forward) if share * forward else float('nan'):.0f} GFLOP/s."
    )
    if own:
        load = [o["own_load"] + o["import_torch"] + o["import_transformers"] for o in own]
        add(
            "The model's own load in a fresh process (imports of torch and transformers, "
            f"`from_pretrained` of model and tokenizer, one forward pass): {spread(load)}."
        )
    pipeline = pipeline_seconds(queries)
    if pipeline is not None and share * forward:
        seconds, date = pipeline
        add(
            f"\nThe bound this sets: the fill-mask pipeline took {seconds:.2f} s (median, clock process) for the same "
            f"study in `python -m benchmarks fmat` of {date} (`benchmarks/results/fmat.json`); even with every other "
            f"phase at zero, assoc's ratio to the pipeline cannot exceed {seconds:.2f} / {share * forward:.2f} = "
            f"{seconds / (share * forward):.1f} on this machine while the matrix products run at this speed."
        )
    return lines


def pipeline_seconds(queries: int) -> tuple[float, str] | None:
    """The pipeline's median seconds (clock process) and date from the harness's last full fmat run, if any."""
    path = HERE / "results" / "fmat.json"
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if result.get("quick") or f"{queries} unique queries" not in str(result.get("workload", "")):
        return None
    try:
        return float(result["summary"]["pipeline"]["process"]["median"]), str(result["date"])
    except (KeyError, TypeError, ValueError):
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, nargs="*", default=[480, 1])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", help="a model directory (default: build a bert-base-shaped one)")
    parser.add_argument("--no-write", dest="write", action="store_false", help="do not write docs/benchmarks")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--own-load", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        queries = args.queries[0]
        print(json.dumps(child(queries, args.model, args.threads, args.own_load)))
        return
    sys.path.insert(0, str(HERE))
    import bench_fmat
    from harness import QUIET_OTHER_CPU, cpu_sample, header_block, machine_info, other_cpu

    lines: list[str] = []
    loads: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or bench_fmat.build_model(os.path.join(tmp, "bert-base-shaped"), 12, 768)
        for queries in args.queries:
            rounds, own = [], []
            for round_ in range(args.rounds):
                before, sample = os.getloadavg()[0], cpu_sample()
                rounds.append(spawn(queries, model, args.threads, False, os.path.join(tmp, f"c{queries}-{round_}")))
                if queries == 1:
                    own.append(spawn(queries, model, args.threads, True, os.path.join(tmp, f"o-{round_}")))
                loads.append(
                    {
                        "load_before": before,
                        "load_after": os.getloadavg()[0],
                        "other_cpu": other_cpu(sample, cpu_sample()),
                    }
                )
            lines += report(queries, rounds, own)
    import datetime

    result = {
        "machine": machine_info("cpu", args.threads),
        "rounds": loads,
        "rounds_note": f"{args.rounds} per study size, each a fresh process with an empty cache directory",
        "quick": False,
        "command": "python benchmarks/profile_fmat.py" + (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else ""),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "not_quiet": [i + 1 for i, r in enumerate(loads) if (r["other_cpu"] or 0.0) > QUIET_OTHER_CPU],
    }
    page = [
        header_block(result),
        "",
        'Where the time of one `assoc.score("fmat", ...)` call goes: each round a fresh process with an '
        "empty cache directory, exclusive time per phase (a phase nested in another is subtracted from it).",
        *lines,
    ]
    text = "\n".join(page) + "\n"
    print(text)
    if args.write:
        target = HERE.parent / "docs" / "benchmarks" / "fmat-profile.md"
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()

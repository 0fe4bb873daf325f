"""Benchmark: torch intra-op threads (``threads=`` / ``--threads``) on an idle and on a busy machine.

Two workloads, each run with every thread count of ``--threads`` while ``--busy`` other
processes burn CPU (``0``: an idle machine):

* ``minilm`` - all-MiniLM-L6-v2 (the ``sbert_topwords`` default model, installed offline) encodes the
  first ``--words`` words of the built-in vocabulary with sentence-transformers' ``encode``
  (batch 64, as ``sbert_topwords`` does), inside :func:`assoc.infra.threads.torch_threads`, the
  block every assoc run uses; model load is outside the clock.
* ``fmat``   - ``assoc.score("fmat", ..., threads=N, cache=False)``: ``--queries`` unique filled
  queries x 6 options on a bert-base-shaped masked LM with random weights (``bench_fmat.build_model``:
  speed does not depend on the weights), model load and the table included, torch and the BERT
  model code imported before the clock.

Every measurement runs in a fresh process of its own, and the thread counts alternate within a
round (1, 2 then 2, 1, ...), so neither a warm cache nor a drifting machine favours one count.
Each child reports wall time, CPU time (user + system of the whole process, all threads) and the
thread count torch actually used inside the block; the parent prints every round with the
1-minute load average, then the median and range per workload, busy level and thread count.

    python benchmarks/bench_threads.py                       # threads 1,2; busy 0,2; 5 rounds
    python benchmarks/bench_threads.py --busy 0,2,4 --rounds 7 --json threads.json
    python benchmarks/bench_threads.py --quick               # tiny sizes: checks that it runs

The busy processes are pure-Python loops (one core each), started before a busy level's first
round and stopped after its last. Offline; nothing is downloaded. Timings are meaningful only on
a machine nothing else uses: the script records the load average and the machine, read them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORKLOADS = ("minilm", "fmat")
BURN = "while True:\n    pass\n"


# -- children: one measurement each, in a fresh process ---------------------------------------------------


def child_minilm(threads: int, words: int) -> dict[str, Any]:
    """Encode ``words`` vocabulary words with MiniLM under ``threads`` torch threads."""
    import torch  # noqa: F401 - imported before the clock, as in a long-lived process
    from assoc_sbert_topwords.models import resolve_model
    from assoc_sbert_topwords.vocabulary import load_vocabulary
    from sentence_transformers import SentenceTransformer

    from assoc.infra.threads import torch_threads

    texts = list(load_vocabulary().words[:words])
    _, directory = resolve_model("all-MiniLM-L6-v2")
    model = SentenceTransformer(str(directory), device="cpu")
    with torch_threads(threads) as used:
        wall, cpu = time.perf_counter(), time.process_time()
        embeddings = model.encode(texts, batch_size=64, convert_to_numpy=True, show_progress_bar=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert embeddings.shape[0] == len(texts)
    return {"wall": wall, "cpu": cpu, "threads_used": used.value, "items": len(texts)}


def child_fmat(threads: int, model: str, queries: int) -> dict[str, Any]:
    """``assoc.score("fmat", ...)`` with ``threads=``: model load and the table included."""
    import warnings

    import torch  # noqa: F401 - imported before the clock, with the model code: threads change neither
    from transformers import BertForMaskedLM, BertTokenizerFast  # noqa: F401

    import assoc

    sys.path.insert(0, str(HERE))
    from bench_fmat import stimuli

    study = stimuli(queries)
    warnings.simplefilter("ignore")  # out-of-vocabulary options of the random-weight model's vocabulary
    wall, cpu = time.perf_counter(), time.process_time()
    table = assoc.score("fmat", study, models=[model], progress=False, cache=False, threads=threads)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    used = table.attrs["assoc"]["executor"]["threads"]["torch"]
    return {"wall": wall, "cpu": cpu, "threads_used": used, "items": len(table)}


# -- the parent: busy processes, alternating fresh children, summary ----------------------------------------


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    import torch

    model = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), model)
    except OSError:
        pass
    return {
        "cpu": model,
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_default_threads": torch.get_num_threads(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def start_busy(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` processes that each keep one core busy until stopped."""
    return [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(count)]


def stop_busy(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait(timeout=30)


def run_child(workload: str, threads: int, args: argparse.Namespace, model: str | None) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", workload, "--threads", str(threads)]
    command += ["--words", str(args.words), "--queries", str(args.queries)]
    if model is not None:
        command += ["--model", model]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("ASSOC_THREADS", None)  # the child's threads come from --threads only
    env.pop("OMP_NUM_THREADS", None)
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
    if done.returncode:
        raise SystemExit(f"{workload} child with {threads} thread(s) failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["load_average"] = os.getloadavg()[0]
    return result


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"


def parse_counts(text: str, what: str, minimum: int) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise SystemExit(f"{what}: expected comma-separated integers, got {text!r}") from None
    if not counts or any(count < minimum for count in counts):
        raise SystemExit(f"{what}: expected integers of at least {minimum}, got {text!r}")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", default="1,2", help="thread counts compared (default 1,2)")
    parser.add_argument("--busy", default="0,2", help="numbers of CPU-burning processes (default 0,2)")
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per setting (default 5)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="minilm, fmat or both")
    parser.add_argument("--words", type=int, default=5000, help="words MiniLM encodes (default 5000)")
    parser.add_argument("--queries", type=int, default=480, help="fmat queries, a multiple of 8 (default 480)")
    parser.add_argument("--layers", type=int, default=12, help="fmat model layers (default 12: bert-base)")
    parser.add_argument("--hidden", type=int, default=768, help="fmat model hidden size (default 768: bert-base)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 2 rounds, busy 0,2: checks that it runs")
    parser.add_argument("--json", type=Path, default=None, help="also write every measurement here")
    parser.add_argument(
        "--no-write", dest="write", action="store_false", help="do not write docs/benchmarks/threads.md"
    )
    parser.add_argument("--render", type=Path, default=None, help="write the page from a --json file of an earlier run")
    parser.add_argument("--child", choices=WORKLOADS, help=argparse.SUPPRESS)
    parser.add_argument("--model", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.render is not None:
        page = render(json.loads(args.render.read_text(encoding="utf-8")))
        PAGE.write_text(page, encoding="utf-8")
        print(page + f"wrote {PAGE.relative_to(HERE.parent)}")
        return
    if args.child:
        threads = int(args.threads)
        if args.child == "minilm":
            result = child_minilm(threads, args.words)
        else:
            result = child_fmat(threads, args.model, args.queries)
        print(json.dumps(result))
        return

    if args.quick:
        args.words, args.queries, args.layers, args.hidden, args.rounds = 128, 16, 2, 64, 2
    thread_counts = parse_counts(args.threads, "--threads", 1)
    busy_levels = parse_counts(args.busy, "--busy", 0)
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = set(workloads) - set(WORKLOADS)
    if unknown or not workloads:
        raise SystemExit(f"--workloads: choose from {', '.join(WORKLOADS)}, got {args.workloads!r}")
    if args.rounds < 1:
        raise SystemExit(f"--rounds must be at least 1, got {args.rounds}")

    about = machine()
    print(
        f"{about['date']}; {about['cpu']}, {about['usable_cpus']} usable CPUs; torch {about['torch']} "
        f"(default {about['torch_default_threads']} threads); minilm: {args.words} words; fmat: {args.queries} "
        f"queries x 6 options, {args.layers} layers x {args.hidden} hidden; load average before: "
        f"{os.getloadavg()[0]:.2f}",
        flush=True,
    )
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-threads-") as tmp:
        model = None
        if "fmat" in workloads:
            sys.path.insert(0, str(HERE))
            from bench_fmat import build_model

            model = build_model(os.path.join(tmp, "bert-shaped"), args.layers, args.hidden)
        for busy in busy_levels:
            burners = start_busy(busy)
            try:
                time.sleep(2.0 if busy else 0.0)  # let the burners reach their cores
                for round_ in range(1, args.rounds + 1):
                    order = thread_counts if round_ % 2 else thread_counts[::-1]
                    for workload in workloads:
                        parts = []
                        for threads in order:
                            result = run_child(workload, threads, args, model)
                            result.update(workload=workload, busy=busy, threads=threads, round=round_)
                            records.append(result)
                            parts.append(
                                f"{threads} thread(s): wall {result['wall']:.2f} s, cpu {result['cpu']:.2f} s "
                                f"(torch used {result['threads_used']}), load {result['load_average']:.2f}"
                            )
                        print(f"busy {busy}, round {round_}, {workload}: " + "; ".join(parts), flush=True)
            finally:
                stop_busy(burners)
    result = {"machine": about, "settings": {**vars(args), "json": None}, "records": records}
    page = render(result)
    print("\n" + page)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1, default=str))
        print(f"wrote {args.json}")
    if args.write and not args.quick:
        PAGE.write_text(page, encoding="utf-8")
        print(f"wrote {PAGE.relative_to(HERE.parent)}")


#: the generated page docs/scale.md includes
PAGE = HERE.parent / "docs" / "benchmarks" / "threads.md"
LABELS = {"minilm": "MiniLM encoding", "fmat": "FMAT study"}


def render(result: dict[str, Any]) -> str:
    """The Markdown page of one run (``result`` as written by ``--json``): header, then median (range) per setting."""
    about, settings, records = result["machine"], result["settings"], result["records"]
    command = "python benchmarks/bench_threads.py " + " ".join(
        f"--{name} {settings[name]}" for name in ("threads", "busy", "rounds", "words", "queries")
    )
    lines = [
        f"*Generated by `{command}` on {about['date']}.*",
        "",
        "|  |  |",
        "|---|---|",
        f"| machine | {about['cpu']}, {about['usable_cpus']} usable CPUs, {about['platform']} |",
        f"| software | Python {about['python']}, torch {about['torch']} "
        f"(default {about['torch_default_threads']} threads) |",
        f"| workloads | MiniLM encoding {settings['words']} words (model load outside the clock); "
        f'`assoc.score("fmat", ..., threads=N, cache=False)`, {settings["queries"]} queries x 6 options, '
        f"{settings['layers']} layers x {settings['hidden']} hidden (model load and table included) |",
        f"| rounds | {settings['rounds']}, each measurement in a fresh process, thread counts alternating |",
        "",
        "Median (min-max) over rounds; *busy processes*: other processes each burning one core; "
        "*load*: the 1-minute load average at the end of each measurement (the measurement's own threads count).",
        "",
        "| workload | busy processes | threads | wall | CPU (all threads) | load |",
        "|---|---|---|---|---|---|",
    ]
    seen = {(r["workload"], r["busy"], r["threads"]) for r in records}
    for workload in WORKLOADS:
        for busy in sorted({b for w, b, _ in seen if w == workload}):
            for threads in sorted({t for w, b, t in seen if (w, b) == (workload, busy)}):
                chosen = [r for r in records if (r["workload"], r["busy"], r["threads"]) == (workload, busy, threads)]
                loads = [r["load_average"] for r in chosen]
                lines.append(
                    f"| {LABELS[workload]} | {busy} | {threads} | {spread([r['wall'] for r in chosen])} | "
                    f"{spread([r['cpu'] for r in chosen])} | {min(loads):.1f}-{max(loads):.1f} |"
                )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

"""Benchmark: the Ray executor's overhead against the local executor, and time to first result.

The same FMAT study (``--sentences`` unique filled queries x 2 ``[MASK]`` candidates,
default 20,000 sentences) on a bert-base-shaped masked LM (12 layers, 768 hidden, the
real bert-base-uncased vocabulary, random weights: speed does not depend on them) runs:

* ``local``: ``assoc.score("fmat", ...)``, the default executor, torch on ``--cpus``
  threads, writing the result cache as users' runs do (an empty one per mode);
* ``ray``: the same with ``executor=RayExecutor(...)`` on a local Ray started with
  ``--cpus`` CPUs: ``--cpus`` actors of one CPU each (one torch thread each), each loading
  the model once; reported with and without Ray's start-up;
* ``ray-1x<cpus>``: one actor holding all CPUs (``resources={"CPU": cpus}``);
* ``overhead``: the local executor against the pre-executor code path (one ``score_model``
  call per model), alternated three times each in one process on one loaded model;
* ``driver``: the driver's own costs per sentence (planning, tokenisation, result size, cache write);
* ``before`` (with ``--before DIR``): the local run on the code before the executor existed
  (``DIR`` holds its ``src`` and ``plugins``, e.g. from
  ``git archive e0d3695 src plugins | tar -x -C DIR``), to show the local executor costs nothing.

Each mode runs in its own fresh process, one after another. Time to first result is the time
from the ``assoc.score`` call to the first finished unit reaching the driver (model loading
included). The machine may be shared: run it again and compare the spread.

    python benchmarks/bench_executor.py                      # 20,000 sentences, 2 CPUs (minutes)
    python benchmarks/bench_executor.py --sentences 2000 --modes local ray
    python benchmarks/bench_executor.py --before /tmp/assoc-before --modes before local ray ray-1x2

Offline; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TEMPLATES = [
    "The [MASK] works as a {TARGET}.",
    "[MASK] works as a {TARGET}.",
    "[MASK] is a {TARGET}.",
    "[MASK] wants to be a {TARGET}.",
    "Everyone knows that [MASK] is a very good {TARGET}.",
    "In the small town, the [MASK] worked as a {TARGET} for years.",
    "[MASK] became a {TARGET} after finishing school.",
    "My neighbour said that [MASK] was the best {TARGET} in the city.",
]
PREFIXES = ["", "Yesterday, ", "In my opinion, ", "Last year, ", "As expected, "]


def build_model(directory: str) -> str:
    """A bert-base-shaped BertForMaskedLM with the bert-base-uncased vocabulary and random weights."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    from assoc.testing.tiny_mlm import bert_uncased_vocab_file

    tokenizer = BertTokenizer(vocab=str(bert_uncased_vocab_file()), do_lower_case=True)
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig()).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def stimuli(n_sentences: int) -> dict:
    """``n_sentences`` distinct filled queries: 40 templates x enough vocabulary words as targets."""
    from assoc.testing.tiny_mlm import bert_uncased_vocab_file

    queries = [prefix + template for prefix in PREFIXES for template in TEMPLATES]
    words = [
        w
        for w in bert_uncased_vocab_file().read_text(encoding="utf-8").split()
        if w.isalpha() and w.isascii() and len(w) > 3
    ][: (n_sentences + len(queries) - 1) // len(queries)]
    designs, left = [], n_sentences
    for i, query in enumerate(queries):
        take = min(len(words), left)
        if take <= 0:
            break
        designs.append(
            {
                "name": f"q{i}",
                "queries": [query],
                "mask": {"male": ["he"], "female": ["she"]},
                "target": {"Word": words[:take]},
            }
        )
        left -= take
    return {"designs": designs}


def driver_costs(model: str, n_sentences: int) -> dict:
    """What the driver itself spends per sentence: planning, tokenisation (done by the workers), result size
    and the unit cache's write, measured on the fmat rows of the first unit."""
    import pickle

    import assoc
    from assoc.infra.cache import ResultCache
    from assoc.lm.masked import load_masked_lm
    from assoc.lm.masked.words import encode_many
    from assoc.plugins import manager as plugins
    from assoc.scoring.units import UnitOutcome

    scorer = plugins.get_scorer("fmat")(cache=False)
    study = assoc.Stimuli.load(stimuli(n_sentences))
    start = time.perf_counter()
    units = scorer.plan(study, [model])
    plan_s = time.perf_counter() - start
    lm = load_masked_lm(model)
    items = [item for unit in units for item in scorer_items(unit)]
    texts = [item.filling.text.replace("[MASK]", lm.mask_token) for item in items[::2]]
    start = time.perf_counter()
    encode_many(lm.tokenizer, texts)
    tokenise_s = time.perf_counter() - start
    rows = scorer.run_unit(type("State", (), {"lm": lm, "cache": None})(), units[0])
    blob = pickle.dumps(UnitOutcome(units[0].key, rows))
    with tempfile.TemporaryDirectory() as tmp:
        namespace = ResultCache(tmp).namespace(kind="bench")
        start = time.perf_counter()
        namespace.put_many({units[0].fingerprint(): rows})
        write_s = time.perf_counter() - start
    per_unit = units[0].size // 2
    return {
        "mode": "driver",
        "plan_per_sentence_us": 1e6 * plan_s / n_sentences,
        "tokenise_per_sentence_us": 1e6 * tokenise_s / len(texts),
        "result_bytes_per_sentence": len(blob) / per_unit,
        "cache_write_per_sentence_us": 1e6 * write_s / per_unit,
        "seconds": plan_s + tokenise_s,
        "rows": len(rows),
    }


def scorer_items(unit):  # type: ignore[no-untyped-def]
    from assoc.lm import decode_items

    return decode_items(unit.payload)


def local_overhead(model: str, n_sentences: int, cpus: int, repeats: int = 3) -> dict:
    """The local executor against the pre-executor code path, alternated in one process on one loaded model.

    "direct" is what ``FMATScorer.score`` did before work units: one ``score_model`` call over every
    item of the model, then ``from_records``. "executor" is ``run_study`` with the local executor
    (planning, unit payloads, one ``score_model`` call per unit, the driver's unit cache, ``merge``).
    Both write their caches (a fresh directory per run), as a default run does. Alternating the two
    on the same model exposes both to the same machine load; the minimum of each is compared.
    """
    import torch
    from assoc_fmat.log_probs import score_model
    from assoc_fmat.scorer import EXTRA_COLUMNS

    from assoc import Stimuli, plugins
    from assoc.executors.driver import run_study
    from assoc.executors.local import LocalExecutor
    from assoc.infra.cache import ResultCache
    from assoc.lm.masked import cached_masked_lm
    from assoc.table import from_records

    torch.set_num_threads(cpus)
    study = Stimuli.load(stimuli(n_sentences))
    items = study.mask_items()
    lm = cached_masked_lm(model)  # the executor's workers get this same loaded model
    times: dict[str, list[float]] = {"direct": [], "executor": []}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(repeats):
            start = time.perf_counter()
            rows = score_model(lm, items, cache=ResultCache(os.path.join(tmp, f"direct{rep}")))
            from_records(rows, scorer="fmat", measure="log_prob", extra_columns=list(EXTRA_COLUMNS))
            times["direct"].append(time.perf_counter() - start)
            scorer = plugins.get_scorer("fmat")(cache_dir=os.path.join(tmp, f"executor{rep}"))
            start = time.perf_counter()
            run_study(scorer, study, [model], executor=LocalExecutor())
            times["executor"].append(time.perf_counter() - start)
    best = {k: min(v) for k, v in times.items()}
    return {
        "mode": "overhead",
        "seconds": best["executor"],
        "direct": times["direct"],
        "executor": times["executor"],
        "rows": len(items),
        "overhead_pct": 100 * (best["executor"] / best["direct"] - 1),
    }


def run_mode(mode: str, model: str, n_sentences: int, cpus: int) -> dict:
    """One measurement in this (fresh) process."""
    import warnings

    import assoc

    warnings.simplefilter("ignore")
    if mode == "driver":
        return driver_costs(model, n_sentences)
    if mode == "overhead":
        return local_overhead(model, n_sentences, cpus)
    first: list[float] = []
    study = stimuli(n_sentences)
    if mode in ("local", "before"):
        import torch

        torch.set_num_threads(cpus)
        if mode == "before":  # the code before executors: no executor argument, no units
            start = time.perf_counter()
            table = assoc.score("fmat", study, [model])
            return {"mode": mode, "seconds": time.perf_counter() - start, "rows": len(table)}

        from assoc.executors.local import LocalExecutor

        class Timed(LocalExecutor):
            def run(self, scorer, units):  # type: ignore[no-untyped-def]
                for outcome in super().run(scorer, units):
                    first.append(time.perf_counter())
                    yield outcome

        start = time.perf_counter()
        table = assoc.score("fmat", study, [model], executor=Timed())
        end = time.perf_counter()
        return {
            "mode": mode,
            "seconds": end - start,
            "first_result": first[0] - start,
            "rows": len(table),
            "units": table.attrs["assoc"]["executor"]["units"],
        }

    import ray

    from assoc.executors.ray import RayExecutor

    class TimedRay(RayExecutor):
        def run(self, scorer, units):  # type: ignore[no-untyped-def]
            for outcome in super().run(scorer, units):
                first.append(time.perf_counter())
                yield outcome

    resources = {"CPU": float(cpus)} if mode.startswith("ray-1x") else None
    started = time.perf_counter()
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    ready = time.perf_counter()
    with TimedRay(resources=resources) as executor:
        start = time.perf_counter()
        table = assoc.score("fmat", study, [model], executor=executor)
        end = time.perf_counter()
    ray.shutdown()
    return {
        "mode": mode,
        "seconds": end - start,
        "ray_start": ready - started,
        "first_result": first[0] - start,
        "rows": len(table),
        "units": table.attrs["assoc"]["executor"]["units"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=20_000, help="unique filled queries (x 2 candidates)")
    parser.add_argument("--cpus", type=int, default=2, help="torch threads (local) = Ray CPUs")
    parser.add_argument(
        "--modes",
        nargs="+",
        default=["local", "ray"],
        help="any of: before, local, ray, ray-1x<cpus>, driver, overhead (run in this order)",
    )
    parser.add_argument("--before", default=None, help="directory with src/ and plugins/ of the pre-executor code")
    parser.add_argument("--one", nargs=3, metavar=("MODE", "MODEL", "SENTENCES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # a child process: one measurement, printed as JSON
        print(json.dumps(run_mode(args.one[0], args.one[1], int(args.one[2]), args.cpus)))
        return

    import torch

    with tempfile.TemporaryDirectory() as tmp:
        model = build_model(os.path.join(tmp, "bert-base-shaped"))
        print(
            f"bert-base-shaped masked LM (12 layers, 768 hidden, vocab 30522, random weights); "
            f"{args.sentences} filled queries x 2 candidates; {args.cpus} CPUs; torch {torch.__version__}; "
            f"{os.cpu_count()} cores visible (shared machine: timings are noisy)"
        )
        results = {}
        for mode in args.modes:
            # each mode starts from an empty result cache, and writes it as a user's run would (cache=True)
            env = dict(os.environ, ASSOC_CACHE_DIR=os.path.join(tmp, f"cache-{mode}"))
            if mode == "before":
                if not args.before:
                    parser.error("mode 'before' needs --before DIR")
                root = Path(args.before)
                paths = [root / "src", *sorted((root / "plugins").glob("*/src"))]
                env["PYTHONPATH"] = os.pathsep.join(map(str, paths))
            command = [sys.executable, __file__, "--cpus", str(args.cpus), "--one", mode, model, str(args.sentences)]
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(f"{mode}: failed\n{done.stderr[-3000:]}")
                continue
            result = json.loads(done.stdout.strip().splitlines()[-1])
            if mode == "overhead":
                print(
                    "  local executor vs the pre-executor path, alternated on one loaded model: direct "
                    + ", ".join(f"{t:.1f}" for t in result["direct"])
                    + " s; executor "
                    + ", ".join(f"{t:.1f}" for t in result["executor"])
                    + f" s; best-of-each difference {result['overhead_pct']:+.1f}%",
                    flush=True,
                )
                continue
            if mode == "driver":
                print(
                    "  driver: "
                    + ", ".join(
                        f"{k.replace('_', ' ')} {v:.1f}" for k, v in result.items() if k.endswith(("_us", "_sentence"))
                    ),
                    flush=True,
                )
                continue
            results[mode] = result
            extra = "".join(
                f", {k.replace('_', ' ')} {result[k]:.1f} s" for k in ("first_result", "ray_start") if k in result
            )
            print(
                f"{mode:>8}: {result['seconds']:8.1f} s = {args.sentences / result['seconds']:6.1f} sentences/s "
                f"({result['rows']} rows{', ' + str(result['units']) + ' units' if 'units' in result else ''}"
                f"{extra})",
                flush=True,
            )
        if "local" in results:
            base = results["local"]["seconds"]
            for mode, result in results.items():
                if mode != "local":
                    print(
                        f"{mode} vs local: {100 * (result['seconds'] / base - 1):+.1f}% wall time"
                        + (
                            f" ({100 * ((result['seconds'] + result['ray_start']) / base - 1):+.1f}% with Ray's "
                            "start-up)"
                            if "ray_start" in result
                            else ""
                        )
                    )


if __name__ == "__main__":
    main()

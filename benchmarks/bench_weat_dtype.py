"""The ``weat`` scorer's ``dtype`` option: float32 (the default) against float64, whole jobs in fresh processes.

    python benchmarks/bench_weat_dtype.py [--rounds 3] [--words 100000]

Two jobs, each run ``--rounds`` times per dtype, each time in a fresh Python process (so every
run pays the load, as a user's ``assoc score`` does), alternating the dtypes:

* ``glove-6b-50d``: the named embedding (a float32 ``.npy`` of 400,000 words), the ten WEAT
  tests of Caliskan et al. (bundled ``caliskan``), scored and analysed;
* ``text``: the first ``--words`` words of the same vectors written once as a GloVe text file
  (the format whose digits float64 keeps) and the same ten tests (words outside the first
  ``--words`` are out of vocabulary: ``max_missing=0.9``).

It prints a Markdown table: per job and dtype, the median seconds (inside the process, imports
excluded) of loading the vectors, of scoring the ten tests once they are loaded, and of the
``weat`` analysis (1,000 random partitions per test), the memory of the loaded vectors, and the
largest difference between the two dtypes' effect sizes (the float32 vectors of the named
embedding give the same numbers either way; GloVe's 5-6 significant digits fit float32's 7, so
a GloVe text file does too).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

JOB = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import assoc
from assoc_weat.embeddings import load_embeddings
model, dtype = sys.argv[1], sys.argv[2]
start = time.perf_counter()
vectors = load_embeddings(model, dtype=dtype).vectors
loaded = time.perf_counter()
table = assoc.score("weat", "caliskan", [model], dtype=dtype, max_missing=0.9, progress=False)
scored = time.perf_counter()
result = assoc.analyze("weat", table, exact_limit=0, n_resamples=1_000, seed=1)
done = time.perf_counter()
print(json.dumps({"load": loaded - start, "score": scored - loaded, "analyze": done - scored,
                  "nbytes": vectors.vectors.nbytes, "d": result["effect_size"].tolist()}))
"""


def run(model: str, dtype: str) -> dict:
    done = subprocess.run([sys.executable, "-c", JOB, model, dtype], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{model} {dtype}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--words", type=int, default=100_000)
    args = parser.parse_args()
    from assoc_weat.embeddings import load_embeddings

    with tempfile.TemporaryDirectory() as folder:
        text = Path(folder) / "glove.txt"
        vectors = load_embeddings("glove-6b-50d").vectors
        with open(text, "w", encoding="utf-8") as handle:
            for word, row in zip(vectors.index_to_key[: args.words], vectors.vectors[: args.words]):
                handle.write(word + " " + " ".join(f"{v:.6f}" for v in row) + "\n")
        print("| job | dtype | load s (median) | score s | analyze s | vectors MB | max abs(d32 - d64) |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for job, model in (("glove-6b-50d", "glove-6b-50d"), (f"GloVe text, {args.words:,} words", str(text))):
            runs: dict[str, list[dict]] = {"float32": [], "float64": []}
            for _ in range(args.rounds):
                for dtype in runs:
                    runs[dtype].append(run(model, dtype))
            gap = max(abs(a - b) for a, b in zip(runs["float32"][0]["d"], runs["float64"][0]["d"]))
            for dtype, results in runs.items():

                def median(part: str, results: list[dict] = results) -> float:
                    return statistics.median(r[part] for r in results)

                loads = ", ".join(f"{r['load']:.2f}" for r in results)
                print(
                    f"| {job} | {dtype} | {median('load'):.2f} ({loads}) | {median('score'):.2f} | "
                    f"{median('analyze'):.2f} | {results[0]['nbytes'] / 1e6:.0f} | {gap:.0e} |"
                )


if __name__ == "__main__":
    main()

"""Benchmark of PLL scoring (plugin assoc-pll) against two common ways of computing it.

Compares, in one run, on a bert-base-shaped masked LM (random weights, real uncased
WordPiece vocabulary) and sentences from the bundled Watson et al. (2023) stimuli:

* assoc   - ``assoc.lm.pseudo_log_likelihoods``: masked copies of all sentences batched
            under a token budget, sorted by length, LM head only at the masked position;
* naive   - one forward pass per masked token (as in the CrowS-Pairs code);
* minicons - ``minicons.scorer.MaskedLMScorer.sequence_score`` with sum reduction, run in
            its own virtual environment (created by this script: torch==2.13.0 first, then
            minicons), because minicons may pin a different transformers.

It prints seconds, throughput (scored tokens per second), the speed-up of assoc over each
and the largest absolute PLL difference. Targets (issue 5): differences <= 1e-4, at least
5x the naive throughput and 1.3x minicons' on 2 CPU cores at float32.

    python benchmarks/bench_pll.py                     # 2 threads, 48 sentences
    python benchmarks/bench_pll.py --long              # also a 512-token input under a small budget
    python benchmarks/bench_pll.py --skip-minicons     # no virtual environment needed

No network is needed except PyPI for the minicons environment (skipped with a message
when it cannot be installed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DEFAULT_VENV = Path.home() / ".cache" / "assoc-bench" / "minicons-venv"

MINICONS_RUNNER = r"""
import json, sys, time, torch
torch.set_num_threads(int(sys.argv[2]))
from minicons import scorer
sentences = json.load(open(sys.argv[3]))
batch_size = int(sys.argv[4])
lm = scorer.MaskedLMScorer(sys.argv[1], "cpu")
lm.sequence_score(sentences[:2], reduction=lambda x: x.sum(0).item())  # warm-up
times = []
for _ in range(int(sys.argv[5])):
    start = time.perf_counter()
    plls = []
    for i in range(0, len(sentences), batch_size):
        plls += lm.sequence_score(sentences[i:i + batch_size], reduction=lambda x: x.sum(0).item())
    times.append(time.perf_counter() - start)
l2r = []  # not timed: a cross-check of the word_l2r metric
for i in range(0, len(sentences), batch_size):
    l2r += lm.sequence_score(sentences[i:i + batch_size], reduction=lambda x: x.sum(0).item(),
                             PLL_metric="within_word_l2r")
print(json.dumps({"seconds": min(times), "plls": plls, "plls_word_l2r": l2r}))
"""


def build_model(directory: Path, seed: int = 0) -> Path:
    """A bert-base-uncased-shaped BertForMaskedLM (110M parameters) with random weights."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    from assoc.testing.tiny_mlm import bert_uncased_vocab_file

    tokenizer = BertTokenizer(vocab=str(bert_uncased_vocab_file()), do_lower_case=True, model_max_length=512)
    config = BertConfig(vocab_size=len(tokenizer))  # defaults are bert-base: 12 x 768, 12 heads, 3072
    torch.manual_seed(seed)
    model = BertForMaskedLM(config)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def watson_sentences(n: int, seed: int = 0) -> list[str]:
    """``n`` filled sentences drawn from the bundled watson2023 stimuli."""
    from assoc_pll.scorer import PLLScorer

    from assoc.stimuli import Stimuli

    items = PLLScorer().sentences(Stimuli.load("watson2023"))
    rng = random.Random(seed)
    return [item["row"]["sentence"] for item in rng.sample(items, n)]


def naive_plls(model_dir: Path, sentences: list[str], repeats: int = 1) -> tuple[list[float], float]:
    """One unbatched forward pass per masked token; float64 log-softmax of the full logits.

    Returns the PLLs and the fastest of ``repeats`` timed runs (the unbatched loop suffers
    most when other processes compete for the cores, so one run can be far too slow).
    """
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    best = float("inf")
    out: list[float] = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        out = []
        with torch.inference_mode():
            for sentence in sentences:
                ids = tokenizer(sentence)["input_ids"]
                total = 0.0
                for position in range(1, len(ids) - 1):
                    copy = list(ids)
                    copy[position] = tokenizer.mask_token_id
                    logits = model(input_ids=torch.tensor([copy])).logits[0, position]
                    total += float(torch.log_softmax(logits.double(), dim=-1)[ids[position]])
                out.append(total)
        best = min(best, time.perf_counter() - start)
    return out, best


def ensure_minicons(venv: Path) -> Path | None:
    """Python of a virtual environment with torch==2.13.0 and minicons, or None (with a message)."""
    python = venv / "bin" / "python"
    check = [
        str(python),
        "-c",
        "import minicons.scorer, transformers; assert int(transformers.__version__.split('.')[0]) < 5",
    ]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    print(f"creating the minicons environment in {venv} (torch==2.13.0 first, then minicons) ...", flush=True)
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(python), "-m", "pip", "install", "-q", "torch==2.13.0"],
        [str(python), "-m", "pip", "install", "-q", "minicons", "transformers<5"],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"minicons comparison skipped: {' '.join(step[-3:])} failed:\n{done.stderr.strip()[-800:]}")
            return None
    if subprocess.run(check, capture_output=True).returncode != 0:
        print("minicons comparison skipped: minicons does not import in its environment")
        return None
    return python


def minicons_plls(
    python: Path, model_dir: Path, sentences: list[str], threads: int, batch_size: int, repeats: int
) -> tuple[list[float], float, list[float]] | None:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(sentences, handle)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [str(python), "-c", MINICONS_RUNNER, str(model_dir), str(threads), handle.name, str(batch_size), str(repeats)],
        capture_output=True,
        text=True,
        env=env,
    )
    os.unlink(handle.name)
    if done.returncode != 0:
        print(f"minicons run failed:\n{done.stderr.strip()[-1500:]}")
        return None
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["plls"], result["seconds"], result["plls_word_l2r"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=48)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--batch-tokens",
        type=int,
        default=None,
        help="token budget of assoc's batches (default: the plugin's, 1024 on CPU)",
    )
    parser.add_argument("--minicons-batch", type=int, default=8, help="sentences per sequence_score call")
    parser.add_argument("--minicons-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="timed runs of assoc and minicons (the fastest counts: load from other processes "
        "only ever slows a run down)",
    )
    parser.add_argument(
        "--naive-sentences",
        type=int,
        default=16,
        help="the naive loop is slow: it runs on the first N sentences (throughput compared)",
    )
    parser.add_argument(
        "--naive-repeats", type=int, default=2, help="timed runs of the naive loop (the fastest counts)"
    )
    parser.add_argument("--skip-minicons", action="store_true")
    parser.add_argument("--long", action="store_true", help="also score one 512-token input (slow on a CPU)")
    args = parser.parse_args()

    import torch

    from assoc.lm import pseudo_log_likelihoods as score_sentences
    from assoc.lm.masked import load_masked_lm

    torch.set_num_threads(args.threads)
    sentences = watson_sentences(args.sentences)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_model(Path(tmp) / "bert-base-random")
        with load_masked_lm(str(model_dir)) as lm:
            n_tokens = sum(len(lm.tokenizer(s)["input_ids"]) - 2 for s in sentences)
            score_sentences(lm, sentences[:2], batch_tokens=args.batch_tokens)  # warm-up
            ours: list[float] = []
            ours_s = float("inf")

            def run_ours() -> None:
                nonlocal ours, ours_s
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    ours = [r.pll for r in score_sentences(lm, sentences, batch_tokens=args.batch_tokens)]
                    ours_s = min(ours_s, time.perf_counter() - start)

            run_ours()
            rows = []
            l2r_minicons = None
            subset = sentences[: args.naive_sentences]
            naive, naive_s = naive_plls(model_dir, subset, args.naive_repeats)
            rows.append(("naive (1 pass per token)", subset, naive, naive_s))
            if not args.skip_minicons:
                python = ensure_minicons(args.minicons_venv)
                found = python and minicons_plls(
                    python, model_dir, sentences, args.threads, args.minicons_batch, args.repeats
                )
                if found:
                    rows.append((f"minicons sequence_score (batch {args.minicons_batch})", sentences, *found[:2]))
                    l2r_minicons = found[2]
            run_ours()  # again after the others, so a busy spell hits every method alike
            rows.insert(0, ("assoc", sentences, ours, ours_s))

            def count(texts: list[str]) -> int:
                return sum(len(lm.tokenizer(s)["input_ids"]) - 2 for s in texts)

            ours_rate = n_tokens / ours_s
            print(
                f"\n{len(sentences)} sentences, {n_tokens} scored tokens, bert-base shape (random weights), "
                f"float32, {args.threads} CPU threads, torch {torch.__version__}; fastest of {args.repeats} runs "
                f"(naive: fastest of {args.naive_repeats} on {len(subset)} sentences, {count(subset)} tokens)\n"
            )
            print(f"{'method':<40} {'seconds':>8} {'tokens/s':>9} {'assoc speed-up':>15} {'max |dPLL|':>11}")
            verdicts = []
            for name, texts, plls, seconds in rows:
                rate = count(texts) / seconds
                diff = max(abs(a - b) for a, b in zip(ours, plls))
                print(f"{name:<40} {seconds:8.2f} {rate:9.1f} {ours_rate / rate:14.2f}x {diff:11.2e}")
                target = 5.0 if name.startswith("naive") else 1.3 if name.startswith("minicons") else None
                if target is not None:
                    verdicts.append(
                        f"{name.split()[0]}: {ours_rate / rate:.2f}x (target >= {target}x: "
                        f"{'met' if ours_rate / rate >= target else 'NOT met'}), max |dPLL| {diff:.1e} "
                        f"(target <= 1e-4: {'met' if diff <= 1e-4 else 'NOT met'})"
                    )
            print("\n" + "\n".join(verdicts))
            if l2r_minicons is not None:
                l2r = [r.pll for r in score_sentences(lm, sentences, metric="word_l2r", batch_tokens=args.batch_tokens)]
                diff = max(abs(a - b) for a, b in zip(l2r, l2r_minicons))
                print(f"\nword_l2r vs minicons within_word_l2r (not timed): max |dPLL| {diff:.2e}")

            if args.long:
                words = ("the firefighter from utah said that " * 200).split()
                text = " ".join(words)
                ids = lm.tokenizer(text)["input_ids"]
                text = lm.tokenizer.decode(ids[1:511])
                start = time.perf_counter()
                result = score_sentences(lm, [text], batch_tokens=args.batch_tokens)[0]
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                print(
                    f"\nlong input: {result.n_tokens + 2} tokens scored in {time.perf_counter() - start:.1f} s "
                    f"with batch_tokens={args.batch_tokens or 'default'} (PLL {result.pll:.2f}); peak resident memory "
                    f"of this process "
                    f"{peak:.0f} MiB"
                )


if __name__ == "__main__":
    main()

"""Benchmark: ONNX Runtime (fp32 and dynamic int8) against PyTorch where the model itself is the limit.

Two workloads, each with the model's forward passes as nearly all of the time:

* sbert - all-MiniLM-L6-v2 (the sbert_topwords default, installed offline) embeds the 27,075-word
  built-in vocabulary plus the 1,366 stand-in terms of ``bench_sbert.py`` through the plugin's own
  :class:`~assoc_sbert_topwords.encoding.SentenceEncoder` (chunks of 4,096 texts, batch size 64,
  sentence-transformers' length-sorted ``encode``) with its ``backend`` option ``torch``,
  ``onnx`` or ``onnx-int8`` (:mod:`assoc_sbert_topwords.onnx`: only the transformer runs on
  ONNX Runtime; tokenisation, batching, mean pooling and normalisation stay sentence-transformers').
* mlm - a bert-base-shaped masked LM (``bench_fmat.build_model``: 12 layers, 768 hidden, the
  bert-base-uncased vocabulary, random weights) scores the 480-query study of ``bench_fmat.py``
  (8 templates x 60 occupations x 6 options): the engine's ``MaskedLM.log_probs`` with its
  ``backend`` ``torch`` (packed encoder, last layer at the mask only, oneDNN linear layers),
  ``onnx`` or ``onnx-int8`` (:mod:`assoc.lm.masked.onnx`: the whole model on ONNX Runtime with the LM
  head applied at the mask positions only, fed the engine's own batches). Log-softmax in float64
  on every side.

Export (both in the library: :mod:`assoc.lm.masked.onnx`, :mod:`assoc_sbert_topwords.onnx`):
``torch.onnx.export`` (TorchScript exporter, opset 17, dynamic batch and sequence axes) from the
local weights, once, into the cache (``--phase prepare`` makes it and reports its time); nothing is downloaded.
(sentence-transformers' ``backend="onnx"`` needs ``optimum-onnx``, whose latest release, 0.1.0,
requires ``transformers<4.58`` and fails to import with the transformers 5 that
sentence-transformers 6 requires; see ``docs/onnx.md``.) int8:
``onnxruntime.quantization.quantize_dynamic`` (weights uint8, per tensor: the AVX2 setting;
activations quantised per batch at run time).

Accuracy (in one process): max |delta| of every cosine between the terms and the vocabulary
(sbert) and of every option's log probability (mlm) against PyTorch, and for int8 the mean and
minimum top-50 overlap (sbert: each term's 50 nearest vocabulary words under bench_sbert's 0.7
ceiling, the term itself left out; mlm: the 50 most probable vocabulary tokens at each mask).

Timing: every side in its own fresh process, sides alternating in rotated order over
``--rounds`` rounds; each process loads its model, runs one small warm-up call and then times
the whole workload; intra-op threads set to ``--threads`` on both runtimes (ONNX Runtime:
``intra_op_num_threads``, one inter-op thread, sequential execution). Prints median and range
per side, the ratio of medians, the load average and the CPU.

    python benchmarks/bench_onnx.py                    # both workloads, 3 rounds, 2 threads
    python benchmarks/bench_onnx.py --quick            # smaller workloads, 1 round (a smoke run)
    python benchmarks/bench_onnx.py --part mlm --rounds 5
    python benchmarks/bench_onnx.py --workdir DIR --phase prepare   # export + accuracy only
    python benchmarks/bench_onnx.py --workdir DIR --phase time      # timing only (reuses DIR)

Needs ``pip install onnxruntime onnx`` (the ``onnx`` extra of assoc). Offline.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_fmat / bench_sbert beside this file

SIDES = ("torch", "ort-fp32", "ort-int8")


# -- sbert ----------------------------------------------------------------------------------------------


def sbert_texts(quick: bool) -> tuple[list[str], list[str]]:
    from assoc_sbert_topwords.vocabulary import load_vocabulary
    from bench_sbert import stand_in_terms

    vocabulary = load_vocabulary()
    terms = stand_in_terms(vocabulary.words)
    words = list(vocabulary.words)
    if quick:
        words, terms = words[::10], terms[::10]
    return words, terms


def sbert_encoder(threads: int, backend: str, directory: Path) -> Any:
    """The plugin's encoder with its ``backend`` option (the ONNX files are exported into ``directory``)."""
    import torch
    from assoc_sbert_topwords.encoding import open_encoder

    from assoc.infra.cache import Cache

    torch.set_num_threads(threads)
    return open_encoder(
        "all-MiniLM-L6-v2",
        device="cpu",
        dtype="float32",
        revision=None,
        batch_size=64,
        normalize=True,
        memo=Cache(directory / "cache"),
        backend=backend,
    )


BACKEND = {"torch": "torch", "ort-fp32": "onnx", "ort-int8": "onnx-int8"}


def top_overlap(a: Any, b: Any, terms: list[str], words: list[str], k: int = 50, ceiling: float = 0.7) -> Any:
    """Per term: the share of its top-k words (ceiling, the term left out) that both cosine matrices give."""
    import numpy as np

    lowered = np.array([w.lower() for w in words])
    out = []
    for i, term in enumerate(terms):
        tops = []
        for sims in (a[i], b[i]):
            order = np.argsort(-sims, kind="stable")
            order = order[(sims[order] <= ceiling) & (lowered[order] != term.lower())]
            tops.append(set(order[:k].tolist()))
        out.append(len(tops[0] & tops[1]) / k)
    return np.array(out)


def sbert_prepare(directory: Path, threads: int, quick: bool) -> dict[str, Any]:
    import numpy as np

    words, terms = sbert_texts(quick)
    vectors = {}
    for side in SIDES:
        encoder = sbert_encoder(threads, BACKEND[side], directory)  # the ONNX sides export on first use
        vectors[side] = (encoder.encode(words), encoder.encode(terms))
    cosines = {side: t @ w.T for side, (w, t) in vectors.items()}  # unit rows: dot products are cosines
    out: dict[str, Any] = {"words": len(words), "terms": len(terms)}
    for side in SIDES[1:]:
        overlap = top_overlap(cosines["torch"], cosines[side], terms, words)
        out[side] = {
            "max_abs_cosine_delta": float(np.max(np.abs(cosines[side] - cosines["torch"]))),
            "max_abs_embedding_delta": float(
                max(np.max(np.abs(vectors[side][j] - vectors["torch"][j])) for j in (0, 1))
            ),
            "top50_overlap_mean": float(overlap.mean()),
            "top50_overlap_min": float(overlap.min()),
            "terms_with_identical_top50_set": int((overlap == 1).sum()),
        }
    return out


def sbert_time(side: str, directory: Path, threads: int, quick: bool) -> dict[str, float]:
    words, terms = sbert_texts(quick)
    start = time.perf_counter()
    encoder = sbert_encoder(threads, BACKEND[side], directory)  # exported by the prepare phase
    loaded = time.perf_counter() - start
    encoder.encode(words[:256])  # warm-up
    start, cpu = time.perf_counter(), time.process_time()
    encoder.encode(words)
    encoder.encode(terms)
    return {"load": loaded, "seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu}


# -- mlm ------------------------------------------------------------------------------------------------


def mlm_requests(lm: Any, quick: bool) -> list[Any]:
    """The engine requests of the 480-query study (fmat's score_model, recorded on their way to the engine)."""
    import warnings

    from assoc_fmat.log_probs import items_of, score_model
    from bench_fmat import stimuli

    recorded: list[Any] = []
    original = lm.log_probs

    def record(requests: Any, **kwargs: Any) -> Any:
        recorded.extend(requests)
        return [[0.0] * len(r.token_ids) for r in requests]

    lm.log_probs = record
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            score_model(lm, items_of(stimuli(96 if quick else 480)), cache=None)
    finally:
        lm.log_probs = original
    return recorded


def mlm_model(directory: Path) -> Path:
    from bench_fmat import build_model

    path = directory / "bert-base-shaped"
    if not (path / "config.json").is_file():
        build_model(str(path), 12, 768)
    return path


def mlm_lm(directory: Path, side: str) -> Any:
    """The engine on ``side``'s backend (``MaskedLM(backend=...)``), exports kept in ``directory/cache``."""
    from assoc.infra.cache import Cache
    from assoc.lm.masked import load_masked_lm

    model = str(directory / "bert-base-shaped")
    return load_masked_lm(model, device="cpu", backend=BACKEND[side], memo=Cache(directory / "cache"))


def mlm_prepare(directory: Path, threads: int, quick: bool) -> dict[str, Any]:
    """Equality of each backend with PyTorch on the whole workload; the exports are made (and timed) here."""
    import numpy as np
    import torch

    from assoc.lm.masked import MaskRequest

    torch.set_num_threads(threads)
    mlm_model(directory)
    lm = mlm_lm(directory, "torch")
    requests = mlm_requests(lm, quick)
    full = [MaskRequest(r.input_ids, r.position, None) for r in requests]
    reference = np.concatenate(lm.log_probs(requests))
    reference_full = lm.log_probs(full)
    lm.close()
    out: dict[str, Any] = {"requests": len(requests), "log_probs": int(reference.size)}
    for side in SIDES[1:]:
        other = mlm_lm(directory, side)
        start = time.perf_counter()
        other.log_probs(requests[:1])  # the first use: export (and quantise), check against PyTorch
        first_use = time.perf_counter() - start
        values = np.concatenate(other.log_probs(requests))
        values_full = other.log_probs(full)
        other.close()
        overlaps = [
            len(set(np.argsort(-a)[:50].tolist()) & set(np.argsort(-b)[:50].tolist())) / 50
            for a, b in zip(reference_full, values_full, strict=True)
        ]
        out[side] = {
            "max_abs_log_prob_delta": float(np.max(np.abs(values - reference))),
            "max_abs_log_prob_delta_whole_vocabulary": float(
                max(np.max(np.abs(a - b)) for a, b in zip(reference_full, values_full, strict=True))
            ),
            "top50_overlap_mean": float(np.mean(overlaps)),
            "top50_overlap_min": float(np.min(overlaps)),
            "first_use_seconds_export_and_check": round(first_use, 1),
        }
    return out


def mlm_time(side: str, directory: Path, threads: int, quick: bool) -> dict[str, float]:
    import torch

    torch.set_num_threads(threads)
    start = time.perf_counter()
    lm = mlm_lm(directory, side)
    loaded = time.perf_counter() - start
    requests = mlm_requests(lm, quick)
    # warm-up: the engine decides its fast paths; the ONNX backends open their session and check it
    # (the probe check is remembered across processes, as the engine's fast-path checks are)
    start = time.perf_counter()
    lm.log_probs(requests[:12])
    warm = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    lm.log_probs(requests)
    seconds = time.perf_counter() - start
    return {"load": loaded, "warmup": warm, "seconds": seconds, "cpu": time.process_time() - cpu}


# -- driver ---------------------------------------------------------------------------------------------


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                flags = Path("/proc/cpuinfo").read_text()
                wide = "AVX-512" if "avx512f" in flags else ("AVX2" if "avx2" in flags else "no AVX2")
                return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} cores, widest vectors {wide})"
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def versions() -> str:
    import onnxruntime
    import torch
    import transformers

    return f"torch {torch.__version__}, onnxruntime {onnxruntime.__version__}, transformers {transformers.__version__}"


@contextmanager
def locked(lock: Path | None, shared: bool = False) -> Iterator[None]:
    """Hold a ``flock`` on ``lock`` (when given): exclusive while one timed process runs, else shared."""
    if lock is None:
        yield
        return
    import fcntl

    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def timing(parts: list[str], directory: Path, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        runs: dict[str, list[dict[str, float]]] = {side: [] for side in SIDES}
        loads = []
        for round_ in range(args.rounds):
            order = SIDES[round_ % 3 :] + SIDES[: round_ % 3]
            for side in order:
                command = [sys.executable, __file__, "--child", part, side, "--workdir", str(directory)]
                command += ["--threads", str(args.threads)] + (["--quick"] if args.quick else [])
                with locked(args.lock):
                    load = os.getloadavg()[0]
                    done = subprocess.run(command, capture_output=True, text=True)
                loads.append(load)
                if done.returncode:
                    raise SystemExit(f"{part} {side} failed:\n{done.stderr}")
                runs[side].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(
                f"{part} round {round_ + 1} ({', '.join(order)}): "
                + ", ".join(f"{s} {runs[s][-1]['seconds']:.2f} s" for s in SIDES)
                + f"; load average before each {', '.join(f'{x:.2f}' for x in loads[-3:])}",
                flush=True,
            )
        summary: dict[str, Any] = {"load_average": [min(loads), max(loads)]}
        base = statistics.median(r["seconds"] for r in runs["torch"])
        for side in SIDES:
            seconds = [r["seconds"] for r in runs[side]]
            med = statistics.median(seconds)
            summary[side] = {
                "median_s": round(med, 3),
                "min_s": round(min(seconds), 3),
                "max_s": round(max(seconds), 3),
                "median_cpu_s": round(statistics.median(r["cpu"] for r in runs[side]), 3),
                "median_load_s": round(statistics.median(r["load"] for r in runs[side]), 3),
                "median_warmup_s": round(statistics.median(r.get("warmup", math.nan) for r in runs[side]), 3),
                "torch_over_this": round(base / med, 3),
            }
            print(
                f"{part} {side}: median {med:.2f} s (min {min(seconds):.2f}, max {max(seconds):.2f}), "
                f"torch/this {base / med:.2f}x",
                flush=True,
            )
        out[part] = summary
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("sbert", "mlm", "all"), default="all")
    parser.add_argument("--phase", choices=("prepare", "time", "all"), default="all")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="a tenth of the sbert texts, 96 queries, 1 round")
    parser.add_argument("--workdir", type=Path, default=None, help="keep the exported models here")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument(
        "--lock",
        type=Path,
        default=None,
        help="on a shared machine: a lock file that other heavy work takes shared (flock -s); each timed "
        "process runs holding it exclusively",
    )
    parser.add_argument(
        "--no-write", dest="write", action="store_false", help="do not write docs/benchmarks/onnx-<part>.md"
    )
    parser.add_argument("--render", type=Path, default=None, help="write the pages from a --json file of a full run")
    parser.add_argument("--child", nargs=2, metavar=("PART", "SIDE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.render is not None:  # the pages again from the --json file of a full run
        saved = json.loads(args.render.read_text(encoding="utf-8"))
        for part in saved.get("timing", {}):
            page = PAGES / f"onnx-{part}.md"
            page.write_text(render(saved, part), encoding="utf-8")
            print(f"wrote {page.relative_to(PAGES.parents[1])}")
        return
    if args.child:
        part, side = args.child
        timed = sbert_time if part == "sbert" else mlm_time
        print(json.dumps(timed(side, args.workdir, args.threads, args.quick)))
        return
    if args.quick:
        args.rounds = 1
    parts = ["sbert", "mlm"] if args.part == "all" else [args.part]
    with tempfile.TemporaryDirectory(prefix="bench-onnx-") as tmp:
        directory = args.workdir or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        result: dict[str, Any] = {
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "cpu": cpu_name(),
            "threads": args.threads,
            "versions": versions(),
        }
        print(f"{result['date']}; {result['cpu']}; {args.threads} threads; {result['versions']}", flush=True)
        if args.phase in ("prepare", "all"):
            for part in parts:
                prepare = sbert_prepare if part == "sbert" else mlm_prepare
                with locked(args.lock, shared=True):
                    result[f"{part}_accuracy"] = prepare(directory, args.threads, args.quick)
                print(f"{part} accuracy: {json.dumps(result[f'{part}_accuracy'])}", flush=True)
        if args.phase in ("time", "all"):
            result["timing"] = timing(parts, directory, args)
        result["command"] = "python benchmarks/bench_onnx.py" + (f" --part {args.part}" if args.part != "all" else "")
        print(json.dumps(result, indent=2))
        if args.json:
            args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
        if args.write and not args.quick and args.phase == "all":
            for part in parts:
                page = PAGES / f"onnx-{part}.md"
                page.write_text(render(result, part), encoding="utf-8")
                print(f"wrote {page.relative_to(PAGES.parents[1])}")


#: where the generated pages go (docs/onnx.md includes them)
PAGES = Path(__file__).resolve().parents[1] / "docs" / "benchmarks"
SIDE_LABELS = {"torch": "PyTorch", "ort-fp32": "ONNX Runtime float32", "ort-int8": "ONNX Runtime int8"}


def number(value: Any) -> str:
    """A value for the page: floats with 3 significant digits."""
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def render(result: dict[str, Any], part: str) -> str:
    """The Markdown page of one part: header, equality with PyTorch, and the timing (median, range, ratio)."""
    timing_ = result["timing"][part]
    parts = list(result["timing"])
    command = result.get("command") or "python benchmarks/bench_onnx.py" + (
        f" --part {parts[0]}" if len(parts) == 1 else ""
    )
    lines = [
        f"*Generated by `{command}` on {result['date']}.*",
        "",
        "|  |  |",
        "|---|---|",
        f"| machine | {result['cpu']} |",
        f"| threads | {result['threads']} intra-op threads on both runtimes |",
        f"| software | {result['versions']} |",
        f"| 1-minute load before each timed process | {timing_['load_average'][0]:.2f} to "
        f"{timing_['load_average'][1]:.2f} (the measured process's own threads count) |",
        "",
        "Equality with PyTorch (the whole workload):",
        "",
        "| measure | value |",
        "|---|---|",
    ]
    for key, value in result[f"{part}_accuracy"].items():
        if isinstance(value, dict):  # per side
            lines += [f"| {SIDE_LABELS.get(key, key)}: {name} | {number(v)} |" for name, v in value.items()]
        else:
            lines.append(f"| {key} | {number(value)} |")
    warmups = all(math.isfinite(timing_[side].get("median_warmup_s", math.nan)) for side in SIDES)
    lines += [
        "",
        "Seconds (each side in its own fresh process, sides alternating in rotated order; model load "
        "and one warm-up call before the clock):",
        "",
        "| side | median s | range s | PyTorch median / this median |"
        + (" warm-up call: median s (fixed cost per process) |" if warmups else ""),
        "|---|---|---|---|" + ("---|" if warmups else ""),
    ]
    for side in SIDES:
        row = timing_[side]
        lines.append(
            f"| {SIDE_LABELS.get(side, side)} | {row['median_s']:.2f} | {row['min_s']:.2f}–{row['max_s']:.2f} | "
            f"{row['torch_over_this']:.2f} |" + (f" {row['median_warmup_s']:.2f} |" if warmups else "")
        )
    if warmups:
        lines += [
            "",
            "The warm-up call scores 12 queries; for the PyTorch side it includes the engine's fast-path "
            "check, for the ONNX Runtime sides opening the session (reading and prepacking the exported "
            "file) and, for float32, the check of the first batch against PyTorch (the probe check of the "
            "export was made at its first use, above, and is remembered). A process scoring n queries "
            "takes about warm-up + n/480 x median.",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

"""``python -m benchmarks gpu``: assoc's scorers on a GPU, in float32 and bfloat16, against the CPU's float32.

One process, on the machine's own Python and torch: ``scripts/gpu-bench.sh`` runs it from a copy of the
repository without ``make setup`` (it puts ``src`` and ``plugins/*/src`` on ``PYTHONPATH``; plugins that are
not installed are registered in this process from their ``pyproject.toml``). Nothing is downloaded.

It builds two base-sized models with random weights (speed does not depend on them):

* a masked LM shaped like bert-base (12 layers x 768, 12 heads, 30,522 vocabulary rows, 512 positions)
  with a lower-cased WordPiece vocabulary trained here on the workloads' own texts, so that their words
  are whole tokens as in a real BERT (no vocabulary file is needed);
* a causal LM shaped like GPT-2 small (12 layers x 768, 12 heads, 50,257 vocabulary rows, 1,024
  positions) with the tiny byte-level BPE tokenizer of ``assoc.testing.tiny_clm.build_gpt2_small``
  (the model of ``python -m benchmarks clm``).

and runs each workload through ``assoc.score`` (no result cache) on the CPU in float32 (the reference),
then on the device in each ``--dtypes``:

* ``fmat``: log P of 6 options in 480 filled queries (``benchmarks.bench_fmat``'s study), the masked LM;
* ``pll``: pseudo-log-likelihoods of watson2023 sentences, the masked LM;
* ``clm``: log P of bao2024 sentences and options, the causal LM;
* ``crows``: CrowS-Pairs (the authors' metric) on pairs of sentences, the masked LM;
* ``bbq``: BBQ's options scored by log-likelihood (lm-evaluation-harness's prompt), the causal LM.

Each run is timed twice in the same process: the *first call* (the model load, and on a GPU CUDA's
start-up, included) and a *warm call* (the model already in memory). Every floating-point column of a run's
table (``value``; BBQ's per-option log-likelihoods) is compared row by row with the CPU's float32 one, and the
option chosen where the table has one: float32 on the GPU should agree to rounding (the check's tolerance is
1e-3 + 1e-4 x |value|, and the same choices); bfloat16 differs by its precision (docs/fmat.md gives the CPU's
figures). The page names the card (``torch.cuda.get_device_name``), its memory, torch and CUDA.

``--quick``: fewer sentences, pairs and BBQ examples, sized to finish well within 10 minutes on a GPU machine
with 16 cores, most of it the CPU reference (an estimate: not yet timed on one). ``--tiny`` builds the same
models with 2 layers x 32 (a dry run of every step, e.g. ``--device cpu --quick --tiny`` on a machine without a
GPU; its timings mean nothing).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import json
import math
import os
import platform
import re
import shlex
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ("fmat", "pll", "clm", "crows", "bbq")
#: float32 on the device against float32 on the CPU: |a - b| <= ABSOLUTE + RELATIVE * |b| for every row
ABSOLUTE, RELATIVE = 1e-3, 1e-4


@dataclass(frozen=True)
class Shape:
    """The models' size: layers, width, heads, and vocabulary rows (0: as many as the tokenizer has)."""

    layers: int
    hidden: int
    heads: int
    masked_rows: int
    causal_rows: int


#: bert-base and GPT-2 small
BASE = Shape(12, 768, 12, 30522, 50257)
#: a dry run of every step in seconds
TINY = Shape(2, 32, 2, 0, 0)
NOT_MEASURED = "**Not measured yet.**"


# --------------------------------------------------------------------------- running from a bare copy


def plugin_entry_points(root: Path = ROOT) -> list[tuple[str, str]]:
    """``(name, module)`` of every plugin in ``root/plugins/*/pyproject.toml`` (``[project.entry-points.assoc]``)."""
    found = []
    for pyproject in sorted((root / "plugins").glob("*/pyproject.toml")):
        section = False
        for line in pyproject.read_text(encoding="utf-8").splitlines():
            stripped = line.strip()
            if stripped.startswith("["):
                section = stripped == "[project.entry-points.assoc]"
            elif section and (match := re.fullmatch(r'([\w.-]+)\s*=\s*"([\w.:]+)"', stripped)):
                found.append((match.group(1), match.group(2)))
    return found


def ensure_plugins(root: Path = ROOT) -> list[str]:
    """Register in this process the repository's plugins that are not installed; return a note per failure.

    On a copy of the repository with ``plugins/*/src`` on ``PYTHONPATH`` but nothing installed, no entry
    point names the plugins: each is registered under ``<name>@source`` instead (as ``assoc.plugins.register``
    does for a plugin defined in a test). A plugin that cannot be imported here (a package the machine lacks)
    is noted and skipped: the workloads that need it are reported as skipped.
    """
    from assoc import plugins

    registry = plugins.registry()
    notes, registered = [], []
    for name, module in plugin_entry_points(root):
        info = registry.infos.get(name)
        if info is not None and info.status == "loaded":
            continue
        try:
            plugins.register(importlib.import_module(module), f"{name}@source")
            registered.append(name)
        except Exception as exc:  # a plugin this machine cannot import: its workloads say so
            notes.append(f"plugin {name} ({module}) not loaded: {type(exc).__name__}: {exc}")
    if registered:
        notes.insert(0, f"plugins registered from the repository's sources (not installed): {', '.join(registered)}")
    return notes


# --------------------------------------------------------------------------- the machine


def machine(device: str) -> dict[str, Any]:
    """The card (``torch.cuda.get_device_name``), its memory, the CPU, Python, torch, CUDA, transformers."""
    import torch
    import transformers

    from benchmarks.harness import cpu_model_and_flags

    info: dict[str, Any] = {
        "cpu": cpu_model_and_flags()[0],
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "torch_threads": torch.get_num_threads(),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "device": device,
        "gpu": None,
    }
    if device.startswith("cuda"):
        properties = torch.cuda.get_device_properties(device)
        info["gpu"] = torch.cuda.get_device_name(device)
        info["gpu_memory_gib"] = round(properties.total_memory / 2**30, 1)
        info["compute_capability"] = f"{properties.major}.{properties.minor}"
    return info


def resolve_device(requested: str) -> str:
    """``auto``: ``cuda`` when torch sees a GPU, else ``cpu``; ``cuda`` without a GPU stops with one line."""
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(
            f"--device {requested}: torch {torch.__version__} sees no CUDA device "
            "(a dry run without a GPU: --device cpu --quick --tiny)"
        )
    return requested


# --------------------------------------------------------------------------- the workloads and the models


@dataclass
class Workload:
    """One scorer's study, the same on every device and dtype (run by :func:`score`); ``skipped``: why not."""

    name: str
    model: str  # "masked" or "causal"
    describe: str
    scorer: str = ""
    stimuli: Any = None
    options: dict[str, Any] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)  # what the masked LM's vocabulary is trained on
    skipped: str = ""


def _declared(scorer: str) -> set[str]:
    import assoc

    return {option.name for option in assoc.get_scorer(scorer).options}


def _first_of_each_group(stimuli: Any, n: int) -> Any:
    """``n`` examples (or designs) of each group of a benchmark's stimuli, whichever way this assoc cuts them."""
    if hasattr(stimuli, "subset"):
        return stimuli.subset(limit=n)
    items = getattr(stimuli, "items", None)
    if items is not None and not callable(items):  # BBQ's stimuli of assoc-chat-listing
        by_group: dict[str, list[Any]] = {}
        for item in items:
            by_group.setdefault(getattr(item, "category", ""), []).append(item)
        return type(stimuli)([i for members in by_group.values() for i in members[:n]], name=stimuli.name)
    return stimuli.select([design.name for design in stimuli][:n])  # CrowS-Pairs: one design per pair


def _sentences(stimuli: Any) -> list[str]:
    """The texts of a study (its filled queries, or its items' strings): the masked LM's vocabulary learns them."""
    from assoc import fill_mask

    items = getattr(stimuli, "items", None)
    if items is not None and not callable(items):
        texts = []
        for item in items:
            record = getattr(item, "fields", None) or getattr(item, "record", None) or {}
            texts += [v for v in record.values() if isinstance(v, str)] + list(getattr(item, "options", ()))
        return texts
    return [fill_mask(item.filling.text, item.option)[0] for item in stimuli.mask_items()]


def _size(stimuli: Any) -> int:
    """How many items (or designs) a benchmark's stimuli hold."""
    items = getattr(stimuli, "items", None)
    return len(items) if items is not None and not callable(items) else len(list(stimuli))


def workloads(quick: bool) -> list[Workload]:
    """The five workloads (the same items on every device and dtype)."""
    import random

    import assoc
    from assoc import Stimuli
    from benchmarks.bench_fmat import OPTIONS
    from benchmarks.bench_fmat import stimuli as fmat_study

    out = []
    fmat = fmat_study(480)
    out.append(
        Workload(
            "fmat",
            "masked",
            f"480 filled queries x {sum(map(len, OPTIONS.values()))} options, log P of each option",
            "fmat",
            fmat,
            texts=_sentences(fmat),
        )
    )
    n = 96 if quick else 960
    try:
        watson = Stimuli.load("watson2023")
        sentences = sorted(set(_sentences(watson)))
        chosen = random.Random(0).sample(sentences, n)
        study = {"queries": ["[MASK]"], "mask": {"sentence": chosen}}
        out.append(Workload("pll", "masked", f"PLL of {n} watson2023 sentences", "pll", study, texts=chosen))
    except Exception as exc:
        out.append(Workload("pll", "masked", "PLL of watson2023 sentences", skipped=f"{type(exc).__name__}: {exc}"))
    try:
        bao = Stimuli.load("bao2024")
        designs = ["2A-Q1", "3A-Q1", "4A-Q1"] if quick else [d.name for d in bao]
        study = bao.select(designs)
        rows = len(study.mask_items())
        out.append(
            Workload(
                "clm",
                "causal",
                f"log P of {rows} bao2024 sentences ({'designs ' + ', '.join(designs) if quick else 'every design'})",
                "clm",
                study,
            )
        )
    except Exception as exc:
        out.append(Workload("clm", "causal", "bao2024 sentences", skipped=f"{type(exc).__name__}: {exc}"))
    pairs = 48 if quick else 1508
    try:
        crows = Stimuli.load("crows_pairs")
        if quick:  # about `pairs` pairs: spread over the bias types where the stimuli are cut by them
            groups = len(getattr(crows, "groups", ()) or ()) if hasattr(crows, "subset") else 1
            crows = _first_of_each_group(crows, max(1, pairs // max(1, groups)))
        out.append(
            Workload(
                "crows",
                "masked",
                f"CrowS-Pairs (the authors' metric), {_size(crows)} pairs",
                "crows_pairs",
                crows,
                texts=_sentences(crows),
            )
        )
    except Exception as exc:
        out.append(Workload("crows", "masked", "CrowS-Pairs", skipped=f"{type(exc).__name__}: {exc}"))
    examples = 2 if quick else 50
    registered = assoc.plugins.registry().scorers
    scorer = next((name for name in ("bbq", "clm_bbq") if name in registered), "")
    try:
        if not scorer:
            raise LookupError("no BBQ scorer for causal LMs is installed (bbq, clm_bbq)")
        bbq = Stimuli.load("bbq")
        options = {}
        if "limit" in _declared(scorer):
            options["limit"] = examples
        else:
            bbq = _first_of_each_group(bbq, examples)
        out.append(
            Workload(
                "bbq",
                "causal",
                f"BBQ, the first {examples} examples of each category, 3 options each scored after "
                f"lm-evaluation-harness's prompt (`{scorer}`)",
                scorer,
                bbq,
                options,
            )
        )
    except Exception as exc:
        out.append(Workload("bbq", "causal", "BBQ", skipped=f"{type(exc).__name__}: {exc}"))
    return out


def build_masked_lm(directory: Path, texts: Sequence[str], shape: Shape) -> Path:
    """A BERT-shaped masked LM with random weights and a WordPiece vocabulary trained on ``texts``."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    directory.mkdir(parents=True, exist_ok=True)
    trainer = BertWordPieceTokenizer(lowercase=True)
    trainer.train_from_iterator(
        sorted(set(texts)),
        vocab_size=BASE.masked_rows,
        min_frequency=1,
        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
        show_progress=False,
    )
    trainer.save_model(str(directory))
    tokenizer = BertTokenizer(vocab=str(directory / "vocab.txt"), do_lower_case=True, model_max_length=512)
    config = BertConfig(
        vocab_size=max(shape.masked_rows, len(tokenizer)),
        hidden_size=shape.hidden,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        intermediate_size=4 * shape.hidden,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    BertForMaskedLM(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_causal_lm(directory: Path, shape: Shape) -> Path:
    """A GPT-2-shaped causal LM with random weights (``build_gpt2_small``'s tokenizer, trained on the spot)."""
    from assoc.testing.tiny_clm import build_gpt2_bpe

    return build_gpt2_bpe(
        directory,
        hidden=shape.hidden,
        layers=shape.layers,
        heads=shape.heads,
        vocab_size=shape.causal_rows or 400,
        positions=1024,
        spread=1.0,
    )


# --------------------------------------------------------------------------- one run


def score(workload: Workload, model: str, device: str, dtype: str) -> Any:
    """``assoc.score`` of the workload on ``model`` with the options the scorer declares."""
    import assoc

    declared = _declared(workload.scorer)
    options = dict(workload.options)
    options.update({k: v for k, v in (("device", device), ("dtype", dtype), ("cache", False)) if k in declared})
    if dtype != "float32" and "dtype" not in declared:
        raise LookupError(f"scorer {workload.scorer!r} has no dtype option")
    return assoc.score(workload.scorer, workload.stimuli, models=[model], progress=False, **options)


def timed_calls(workload: Workload, model: str, device: str, dtype: str) -> dict[str, Any]:
    """The first call (model load included) and a warm call; the warm call's values; peak CUDA memory."""
    import torch

    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    times = []
    table = None
    for _ in range(2):
        if cuda:
            torch.cuda.synchronize(device)
        started = time.perf_counter()
        table = score(workload, model, device, dtype)
        if cuda:
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - started)
    assert table is not None
    out = {"first_s": times[0], "warm_s": times[1], "rows": len(table), **numbers(table)}
    if cuda:
        out["peak_cuda_mib"] = torch.cuda.max_memory_allocated(device) / 2**20
    return out


def numbers(table: Any) -> dict[str, Any]:
    """What a run is compared by: every floating-point column, row by row (``value`` and, e.g., BBQ's per-option
    log-likelihoods ``ll_ans0`` ...), in one list; and the ``chosen`` option where the table has one."""
    columns = sorted(c for c in table.columns if str(table[c].dtype).startswith("float"))
    values = [float(v) for c in columns for v in table[c]]
    out: dict[str, Any] = {"values": values, "columns": columns}
    if "chosen" in table.columns:
        out["chosen"] = [str(v) for v in table["chosen"]]
    return out


def compare(run: dict[str, Any], reference: dict[str, Any], dtype: str) -> dict[str, Any]:
    """Largest and mean |Δ| over the numbers finite in both, those finite in one only, choices kept, the verdict."""
    values, reference_values = run["values"], reference["values"]
    if run["columns"] != reference["columns"] or len(values) != len(reference_values):
        return {"check": f"FAILED: {run['columns']} x {run['rows']} rows, the CPU reference {reference['columns']}"}
    out = _differences(values, reference_values, dtype)
    if "chosen" in reference:
        same = sum(a == b for a, b in zip(run["chosen"], reference["chosen"], strict=True))
        out["same_choice"] = same / len(reference["chosen"]) if reference["chosen"] else 1.0
        if dtype == "float32" and same != len(reference["chosen"]) and out["check"] == "ok":
            out["check"] = "FAILED: another option chosen in float32"
    return out


def _differences(values: Sequence[float], reference: Sequence[float], dtype: str) -> dict[str, Any]:
    pairs = [(a, b) for a, b in zip(values, reference, strict=True) if math.isfinite(a) and math.isfinite(b)]
    mismatched = sum(math.isfinite(a) != math.isfinite(b) for a, b in zip(values, reference, strict=True))
    diffs = [abs(a - b) for a, b in pairs]
    worst = max(diffs, default=0.0)
    out: dict[str, Any] = {
        "max_abs_diff": worst,
        "mean_abs_diff": sum(diffs) / len(diffs) if diffs else 0.0,
        "finiteness_differs": mismatched,
    }
    if dtype == "float32":
        within = all(abs(a - b) <= ABSOLUTE + RELATIVE * abs(b) for a, b in pairs) and not mismatched
        out["check"] = "ok" if within else "FAILED: beyond float32 rounding"
    else:
        out["check"] = "reported" if not mismatched else f"{mismatched} rows finite on one side only"
    return out


# --------------------------------------------------------------------------- the page


def fmt_diff(value: float | None) -> str:
    """A difference to two significant digits (``0.031``, ``0.00069``, ``1.2e-07``); empty for none."""
    if value is None:
        return ""
    return "0" if value == 0 else f"{value:.2g}"


def render_markdown(result: dict[str, Any]) -> str:
    """``docs/benchmarks/gpu.md``: the card and software first, then one row per workload, device and dtype."""
    from benchmarks.harness import fmt_seconds, md_table

    m = result["machine"]
    card = (
        f"{m['gpu']}, {m['gpu_memory_gib']} GiB, compute capability {m['compute_capability']}"
        if m.get("gpu")
        else f"none: {m['device']} (a dry run of the steps; no GPU figure)"
    )
    lines = []
    if result["tiny"]:
        lines += [
            "**Dry run with tiny models (`--tiny`), not a measurement**: every step runs; the figures mean nothing.",
            "",
        ]
    elif result["quick"]:
        lines += [
            "Quick run (`--quick`): smaller workloads; a warm call of a few milliseconds is mostly fixed costs.",
            "",
        ]
    lines += [
        f"*Generated by `{result['command']}` on {result['date']}.*",
        "",
        md_table(
            ["", ""],
            [
                ["GPU", card],
                ["CPU (the reference)", f"{m['cpu']}, {m['cores']} cores, torch threads {m['torch_threads']}"],
                [
                    "software",
                    f"Python {m['python']}, torch {m['torch']} (CUDA {m['cuda'] or 'none'}), "
                    f"transformers {m['transformers']}",
                ],
                [
                    "float32 matrix products",
                    f"torch.get_float32_matmul_precision() = {m['float32_matmul_precision']!r}",
                ],
                ["models", result["models"]],
            ],
        ),
        "",
        "Seconds per `assoc.score` call: the first call loads the model (and on a GPU starts CUDA); the warm "
        "call runs with the model in memory. Δ: |value − the CPU's float32 value| over every number of the table "
        "(`value`, and BBQ's per-option log-likelihoods), row by row; float32 passes within "
        f"{ABSOLUTE:g} + {RELATIVE:g} × |value| and with the same options chosen.",
        "",
    ]
    rows = []
    for run in result["runs"]:
        if run.get("skipped") or run.get("error"):
            rows.append(
                [
                    run["workload"],
                    run.get("device", ""),
                    run.get("dtype", ""),
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    run.get("skipped") or run["error"],
                ]
            )
            continue
        speed = run["rows"] / run["warm_s"] if run["warm_s"] > 0 else float("nan")
        rows.append(
            [
                run["workload"],
                run["device"],
                run["dtype"],
                fmt_seconds(run["first_s"]),
                fmt_seconds(run["warm_s"]),
                f"{speed:,.0f}",
                fmt_diff(run.get("max_abs_diff")),
                fmt_diff(run.get("mean_abs_diff")),
                f"{run['peak_cuda_mib']:,.0f}" if "peak_cuda_mib" in run else "",
                run.get("check", "reference")
                + (f" (same choice {run['same_choice']:.0%})" if "same_choice" in run else ""),
            ]
        )
    header = [
        "workload",
        "device",
        "dtype",
        "first call s",
        "warm call s",
        "rows/s warm",
        "max Δ",
        "mean Δ",
        "peak CUDA MiB",
        "check",
    ]
    lines += [md_table(header, rows), ""]
    lines += [f"* `{w['name']}`: {w['describe']}" for w in result["workloads"]]
    lines += [f"* {note}" for note in result["notes"]]
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks gpu",
        description="assoc's scorers on a GPU in float32 and bfloat16 against the CPU's float32; writes "
        "docs/benchmarks/gpu.md and benchmarks/results/gpu.json",
    )
    parser.add_argument(
        "workloads", nargs="*", metavar="NAME", help=f"which workloads (default: {', '.join(WORKLOADS)})"
    )
    parser.add_argument(
        "--quick", action="store_true", help="smaller workloads (well within 10 minutes on a GPU machine)"
    )
    parser.add_argument("--tiny", action="store_true", help="2-layer x 32 models: a dry run of every step")
    parser.add_argument("--device", default="cuda", help="the device measured: cuda (default), cuda:N, auto or cpu")
    parser.add_argument("--dtypes", default="float32,bfloat16", help="comma-separated dtypes on the device")
    parser.add_argument("--docs-dir", type=Path, default=ROOT / "docs" / "benchmarks")
    parser.add_argument("--results-dir", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
    args.workloads = list(dict.fromkeys(args.workloads)) or list(WORKLOADS)
    args.dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    bad = [d for d in args.dtypes if d not in ("float32", "float16", "bfloat16")]
    if bad or not args.dtypes:
        parser.error(f"--dtypes: float32, float16 or bfloat16, got {args.dtypes or 'nothing'}")
    return args


def run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """Build the models, run every workload on the CPU (float32) and on the device in each dtype."""
    device = resolve_device(args.device)
    notes = ensure_plugins()
    shape = TINY if args.tiny else BASE
    chosen = [w for w in workloads(args.quick) if w.name in args.workloads]
    result: dict[str, Any] = {
        "command": command,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "quick": args.quick,
        "tiny": args.tiny,
        "machine": machine(device),
        "models": (
            f"masked: BERT-shaped, {shape.layers} layers x {shape.hidden}, {shape.heads} heads, "
            f"{shape.masked_rows or 'as many'} vocabulary rows{'' if shape.masked_rows else ' as tokens'}, "
            f"WordPiece trained on the workloads' texts; causal: GPT-2-shaped, {shape.layers} x {shape.hidden}, "
            f"{shape.heads} heads, {shape.causal_rows or 'as many'} rows{'' if shape.causal_rows else ' as tokens'}, "
            "the tiny trained byte-level BPE; random weights (seed 0)"
        ),
        "workloads": [{"name": w.name, "describe": w.describe} for w in chosen],
        "notes": notes,
        "runs": [],
    }
    with tempfile.TemporaryDirectory(prefix="assoc-gpu-bench-") as tmp:
        os.environ["ASSOC_CACHE_DIR"] = str(Path(tmp) / "cache")  # never the user's cache (no cache is written)
        models: dict[str, Callable[[], Path]] = {
            "masked": lambda: build_masked_lm(
                Path(tmp) / "masked", [t for w in chosen for t in w.texts] or ["a"], shape
            ),
            "causal": lambda: build_causal_lm(Path(tmp) / "causal", shape),
        }
        built: dict[str, str] = {}
        for workload in chosen:
            if workload.skipped:
                result["runs"].append({"workload": workload.name, "skipped": f"skipped: {workload.skipped}"})
                print(f"[gpu] {workload.name}: skipped ({workload.skipped})", flush=True)
                continue
            if workload.model not in built:
                print(f"[gpu] building the {workload.model} model ...", flush=True)
                built[workload.model] = str(models[workload.model]())
            model = built[workload.model]
            plan = [("cpu", "float32")] + [
                (device, dtype) for dtype in args.dtypes if (device, dtype) != ("cpu", "float32")
            ]
            reference: dict[str, Any] | None = None
            for where, dtype in plan:
                entry: dict[str, Any] = {"workload": workload.name, "device": where, "dtype": dtype}
                try:
                    measured = timed_calls(workload, model, where, dtype)
                except Exception as exc:
                    entry["error"] = f"FAILED: {type(exc).__name__}: {exc}"
                    print(f"[gpu] {workload.name} {where} {dtype}: {entry['error']}", file=sys.stderr, flush=True)
                    traceback.print_exc()
                    result["runs"].append(entry)
                    if reference is None:
                        break  # without the CPU reference nothing can be compared
                    continue
                numbers_of_run = {k: measured.pop(k) for k in ("values", "columns", "chosen") if k in measured}
                entry.update(measured)
                if reference is None:
                    reference = {**numbers_of_run, "rows": measured["rows"]}
                    entry["check"] = "reference"
                else:
                    entry.update(compare({**numbers_of_run, "rows": measured["rows"]}, reference, dtype))
                result["runs"].append(entry)
                print(
                    f"[gpu] {workload.name} {where} {dtype}: first {entry['first_s']:.2f} s, warm "
                    f"{entry['warm_s']:.2f} s, {entry['rows']} rows, {entry.get('check')}"
                    + (f" (max Δ {entry['max_abs_diff']:.2e})" if "max_abs_diff" in entry else ""),
                    flush=True,
                )
    if device == "cpu" and "float32" in args.dtypes:
        notes.append("on the CPU, float32 is the reference itself: it is not run twice")
    return result


def write_outputs(result: dict[str, Any], docs_dir: Path, results_dir: Path) -> tuple[Path, Path]:
    """``docs_dir/gpu.md`` and ``results_dir/gpu.json``."""
    docs_dir.mkdir(parents=True, exist_ok=True)
    results_dir.mkdir(parents=True, exist_ok=True)
    page, raw = docs_dir / "gpu.md", results_dir / "gpu.json"
    page.write_text(render_markdown(result), encoding="utf-8")
    raw.write_text(json.dumps(result, indent=1, default=str) + "\n", encoding="utf-8")
    return page, raw


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of ``python -m benchmarks gpu``; exits 1 when a run failed or float32 did not agree."""
    argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    args = parse_args(argv)
    command = "python -m benchmarks gpu " + shlex.join(argv) if argv else "python -m benchmarks gpu"
    started = time.perf_counter()
    result = run(args, command.strip())
    page, raw = write_outputs(result, args.docs_dir, args.results_dir)
    print(f"[gpu] done in {time.perf_counter() - started:.0f} s: {page} and {raw}", flush=True)
    print(render_markdown(result), flush=True)
    failed = [
        r
        for r in result["runs"]
        if str(r.get("error", "")).startswith("FAILED") or str(r.get("check", "")).startswith("FAILED")
    ]
    if failed:
        raise SystemExit(f"[gpu] {len(failed)} run(s) failed or disagreed with the CPU: see {page}")

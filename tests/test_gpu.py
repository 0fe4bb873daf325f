"""What a GPU user relies on, checked without a GPU: the CUDA set-up, the device in the cache key and provenance.

``scripts/setup.sh --print-torch`` prints the pip arguments that install torch and stops, so the choice
between the CPU build (the default, CI's) and a CUDA build from PyTorch's index is tested without a
download. The device tests make torch see a GPU (``torch.cuda.is_available`` patched) and check what an
LM scorer records and keys its result cache by, without loading anything on it.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

import assoc

ROOT = Path(__file__).resolve().parents[1]
SETUP = ROOT / "scripts" / "setup.sh"
#: the torch release `make setup` pins (scripts/setup.sh's TORCH_VERSION default)
DEFAULT_TORCH = re.findall(r"TORCH_VERSION=\$\{TORCH_VERSION:-([0-9.]+)\}", SETUP.read_text(encoding="utf-8"))[0]


def setup_script(*args: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_")}
    # a VENV of the test's own: a refusal must create nothing there
    clean.update(VENV=str(tmp_path / "venv"), **env)
    return subprocess.run(["bash", str(SETUP), *args], env=clean, capture_output=True, text=True, timeout=60)


def test_setup_installs_the_cpu_build_by_default(tmp_path):
    done = setup_script("--print-torch", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"torch=={DEFAULT_TORCH}"  # no index named: pip's own configuration (CI's)
    assert not (tmp_path / "venv").exists()


def test_setup_takes_a_cuda_build_from_pytorchs_index(tmp_path):
    done = setup_script("--print-torch", tmp_path=tmp_path, TORCH_CUDA="cu130")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "--index-url",
        "https://download.pytorch.org/whl/cu130",
        f"torch=={DEFAULT_TORCH}+cu130",  # the local label: no CPU wheel can match
    ]
    done = setup_script(
        "--print-torch",
        tmp_path=tmp_path,
        TORCH_CUDA="cu126",
        TORCH_VERSION="2.11.0",
        TORCH_INDEX="https://m.example/whl/",
    )
    assert done.stdout.split() == ["--index-url", "https://m.example/whl/cu126", "torch==2.11.0+cu126"]
    assert not (tmp_path / "venv").exists()


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ((), {"TORCH_CUDA": "12.8"}, "TORCH_CUDA='12.8' is not a CUDA tag of PyTorch's index (cu126, cu128, cu130"),
        ((), {"TORCH_CUDA": "cpu"}, "leave it unset for the CPU build"),
        (("--cuda",), {}, "unknown argument '--cuda' (the only one is --print-torch"),
    ],
)
def test_setup_refuses_a_bad_tag_or_argument_before_any_work(tmp_path, args, env, message):
    done = setup_script(*args, tmp_path=tmp_path, **env)
    assert done.returncode == 2 and message in done.stderr and not done.stdout
    assert not (tmp_path / "venv").exists()  # refused before the virtual environment is made


def test_readme_and_docs_give_the_cuda_setup():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make setup TORCH_CUDA=cu130" in readme and "docs/gpu.md" in readme
    gpu = (ROOT / "docs" / "gpu.md").read_text(encoding="utf-8")
    assert "make setup TORCH_CUDA=cu130" in gpu and "No figure on this page was measured on a GPU yet" in gpu


# -- the device in provenance and in the result cache's key ------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    from assoc.testing.tiny_clm import build_gpt2_bpe

    return str(build_gpt2_bpe(tmp_path_factory.mktemp("gpu") / "gpt2"))


@pytest.fixture
def cuda_seen(monkeypatch):
    """torch sees a GPU (nothing is run on it)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)


def _scorer(tmp_path, **options):
    return assoc.get_scorer("clm")(cache=True, cache_dir=str(tmp_path / "cache"), **options)


def test_device_auto_on_a_gpu_machine_is_cuda_in_provenance_and_in_the_cache_key(tiny_gpt2, tmp_path, cuda_seen):
    auto, cuda, cpu = _scorer(tmp_path), _scorer(tmp_path, device="cuda"), _scorer(tmp_path, device="cpu")
    assert auto.params["device"] == "auto"  # the default
    assert auto.describe_model(tiny_gpt2)["device"] == "cuda"  # what provenance records per model
    assert auto.unit_options(tiny_gpt2)["device"] == "cuda"
    assert auto.unit_resources(tiny_gpt2) == {"GPU": 1.0, "CPU": 1.0}  # a Ray worker asks for a GPU
    keys = {name: s.unit_namespace(tiny_gpt2).directory for name, s in (("auto", auto), ("cuda", cuda), ("cpu", cpu))}
    assert keys["auto"] == keys["cuda"] != keys["cpu"]  # a GPU run never reads the CPU's rows
    bf16 = _scorer(tmp_path, dtype="bfloat16").unit_namespace(tiny_gpt2).directory
    assert bf16 not in keys.values()  # nor another precision's


def test_device_auto_without_a_gpu_is_the_cpu_key(tiny_gpt2, tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    auto, cpu = _scorer(tmp_path), _scorer(tmp_path, device="cpu")
    assert auto.describe_model(tiny_gpt2)["device"] == "cpu"
    assert auto.unit_namespace(tiny_gpt2).directory == cpu.unit_namespace(tiny_gpt2).directory
    assert auto.unit_resources(tiny_gpt2) == {"CPU": 1.0}

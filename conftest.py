"""Suite-wide setup of every test directory (tests/, plugins/*/tests/, docs/examples/).

A hermetic environment, and torch's thread count put back after each test and each module.

A test run must not write into the developer's real caches (``~/.cache/assoc``, the Hugging Face
cache, matplotlib's font cache, ...) nor read what an earlier run left there: a value cached by
another run would make a test pass without computing anything. So, before any test module is
imported, every cache location a test or one of its subprocesses (the CLI, Ray workers) could use
points into one temporary directory of this session, removed when the session ends. Tests that
need a cache of their own still set ``ASSOC_CACHE_DIR`` to their ``tmp_path``;
``tests/test_hermetic.py`` checks that a run with an empty ``HOME`` leaves it empty.

Nothing is downloaded either: the Hugging Face hub is offline unless a test says otherwise.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

#: This session's stand-in for the user's cache and configuration directories.
SESSION_HOME = Path(tempfile.mkdtemp(prefix="assoc-tests-"))

#: Where each cache goes; every variable here wins over the developer's own setting.
HERMETIC_ENV = {
    "ASSOC_CACHE_DIR": SESSION_HOME / "assoc",  # assoc.infra.cache.default_root
    "XDG_CACHE_HOME": SESSION_HOME / "cache",  # platformdirs, torch hub, onnxruntime, ...
    "XDG_CONFIG_HOME": SESSION_HOME / "config",
    "HF_HOME": SESSION_HOME / "huggingface",  # the hub cache, tokens, datasets
    "MPLCONFIGDIR": SESSION_HOME / "matplotlib",  # matplotlib's font cache
    "TORCH_HOME": SESSION_HOME / "torch",
}
#: Variables that would send a cache elsewhere than ``HF_HOME`` says.
OVERRIDES = ("HF_HUB_CACHE", "HF_DATASETS_CACHE", "TRANSFORMERS_CACHE", "SENTENCE_TRANSFORMERS_HOME", "HF_TOKEN_PATH")

for _name, _path in HERMETIC_ENV.items():
    _path.mkdir(parents=True, exist_ok=True)
    os.environ[_name] = str(_path)
for _name in OVERRIDES:
    os.environ.pop(_name, None)
# A local Ray cluster keeps its authentication token in ~/.ray/auth_token, written by the first
# ray.init that finds none; a token in the environment is used instead (and reaches the workers
# and the drivers the tests start). A cluster named by RAY_ADDRESS is never joined by a test.
os.environ.pop("RAY_ADDRESS", None)
if not os.environ.get("RAY_AUTH_TOKEN_PATH"):
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def pytest_unconfigure() -> None:
    """Remove the session's cache directories."""
    shutil.rmtree(SESSION_HOME, ignore_errors=True)


def _restore_torch_threads() -> Iterator[None]:
    # torch is looked up, never imported: a test that does not use it must not pay for it. When
    # torch is imported during the test, its count before is unknown and is left as it is; in a
    # whole run the test modules import torch while they are collected, before any test runs.
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    yield
    torch = sys.modules.get("torch")
    if torch is not None and before is not None and torch.get_num_threads() != before:
        torch.set_num_threads(before)


@pytest.fixture(autouse=True, scope="module")
def torch_threads_per_module() -> Iterator[None]:
    """Put back torch's intra-op thread count as it was before the module (a module fixture may set one thread)."""
    yield from _restore_torch_threads()


@pytest.fixture(autouse=True)
def torch_threads_per_test() -> Iterator[None]:
    """Put back torch's intra-op thread count as it was before the test."""
    yield from _restore_torch_threads()

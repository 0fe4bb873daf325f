"""Suite-wide setup of every test directory (tests/, plugins/*/tests/, docs/examples/): a hermetic environment.

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
import shutil
import tempfile
from pathlib import Path

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
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def pytest_unconfigure() -> None:
    """Remove the session's cache directories."""
    shutil.rmtree(SESSION_HOME, ignore_errors=True)

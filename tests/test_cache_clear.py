"""What the result cache holds and clearing it (``assoc cache``, ``Cache.usage``/``Cache.clear``), and its integrity.

Issue 47 item 3 (``assoc cache`` shows and clears the cache through ``assoc.infra.cache.Cache``,
concurrent runs stay safe) and issue 46 item 3 (every cached artefact is checked against a content
fingerprint recorded when written, never trusted on its size and modification time).
"""

from __future__ import annotations

import json
import os
import time
import warnings

import numpy as np
import pytest
from click.testing import CliRunner

from assoc.cli import build_cli
from assoc.infra.cache import Cache, CacheWarning, exclusive_lock, file_sha256, intact, seal


def filled(root) -> Cache:
    """Units of two scorers and models, an engine's namespace of one model's weights, chat replies, an array, a memo."""
    cache = Cache(root)
    cache.namespace(kind="units", scorer="fmat", model="/m/tiny-a", fingerprint="sha256:aaa").put_many(
        {"u1": [1.0] * 40, "u2": [2.0] * 40}
    )
    cache.namespace(kind="units", scorer="pll", model="/m/tiny-b", fingerprint="sha256:bbb").put("u1", [3.0])
    cache.namespace(kind="fmat-log-prob", version=1, model="sha256:aaa", dtype="float32", device="cpu").put("q", 1.5)
    cache.namespace(scorer="chat", format=1, backend="openai", endpoint="http://h", model="gpt").put("r", {"a": 1})
    cache.arrays().save(np.arange(10.0), vocabulary="v1")
    cache.remember("local-fingerprint", ["/m/tiny-a"], "sha256:aaa")
    return cache


def sizes(cache: Cache) -> dict[tuple[str, str, str], int]:
    return {(a.kind, a.scorer, a.model): a.bytes for a in cache.usage()}


def on_disk(root) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and "owners" not in p.parts)


def test_usage_names_kind_scorer_and_model_and_adds_up_to_the_files(tmp_path):
    cache = filled(tmp_path)
    found = sizes(cache)
    assert set(found) == {
        ("units", "fmat", "/m/tiny-a"),
        ("units", "pll", "/m/tiny-b"),
        ("fmat-log-prob", "", "/m/tiny-a"),  # the engine's namespace names the weights: translated to the model
        ("responses", "chat", "gpt"),
        ("arrays", "", ""),
        ("memo", "", ""),
    }
    assert sum(found.values()) == on_disk(tmp_path)


def test_clear_by_scorer_by_model_and_everything(tmp_path):
    cache = filled(tmp_path)
    planned = cache.clear(scorer="fmat", dry_run=True)
    assert planned.files == 4 and set(sizes(cache)) == set(sizes(filled(tmp_path)))  # a dry run removes nothing
    cache.clear(scorer="fmat")  # the units of fmat and the fmat engine's log probabilities
    assert {k[:2] for k in sizes(cache)} == {("units", "pll"), ("responses", "chat"), ("arrays", ""), ("memo", "")}
    Cache(tmp_path).clear(model="gpt")
    assert ("responses", "chat", "gpt") not in sizes(Cache(tmp_path))
    cleared = Cache(tmp_path).clear()
    assert cleared.files > 0 and Cache(tmp_path).usage() == [] and on_disk(tmp_path) == 0
    # what is left is a cache like any other: stored again, read again
    again = Cache(tmp_path).namespace(kind="units", scorer="fmat", model="/m/tiny-a", fingerprint="sha256:aaa")
    again.put("u1", [9.0])
    assert Cache(tmp_path).namespace(kind="units", scorer="fmat", model="/m/tiny-a", fingerprint="sha256:aaa").get(
        "u1"
    ) == [9.0]


def test_clear_by_model_follows_its_weights_fingerprint(tmp_path):
    cache = filled(tmp_path)
    cache.clear(model="/m/tiny-a")
    assert {k[2] for k in sizes(cache)} == {"/m/tiny-b", "gpt", ""}


def test_clear_by_age_removes_old_packs_and_keeps_newer_ones(tmp_path):
    cache = Cache(tmp_path)
    namespace = cache.namespace(kind="units", scorer="fmat", model="m", fingerprint="f")
    namespace.put("old", 1)
    (pack,) = namespace.directory.glob("pack-*.json")
    stamp = int(pack.name[5:25])
    ten_days = 10 * 86400 * 10**9
    pack.rename(pack.with_name(f"pack-{stamp - ten_days:020d}" + pack.name[25:]))  # written ten days ago
    namespace.put("new", 2)
    removed = Cache(tmp_path).clear(older_than=5 * 86400)
    assert removed.files == 1
    fresh = Cache(tmp_path).namespace(kind="units", scorer="fmat", model="m", fingerprint="f")
    assert fresh.keys() == ["new"]


def test_a_live_runs_work_is_never_cleared(tmp_path):
    cache = filled(tmp_path)
    namespace = cache.namespace(kind="units", scorer="fmat", model="/m/tiny-a", fingerprint="sha256:aaa")
    claim = namespace.claim("u3")  # this process computes u3 there: a live run
    assert claim is not None
    journal = tmp_path / "chat-journal" / "live.jsonl"
    journal.parent.mkdir()
    journal.write_text('{"key": 1}\n')
    with exclusive_lock(journal) as locked:  # a live run's journal of answers
        assert locked
        result = Cache(tmp_path).clear()
        assert [area.scorer for area in result.busy] == ["fmat"]
        assert claim.path.exists() and namespace.keys() and journal.exists()
    claim.release()
    Cache(tmp_path).clear()
    assert Cache(tmp_path).usage() == []


def test_clear_from_the_command_line_asks_first(tmp_path):
    filled(tmp_path)
    runner = CliRunner()
    shown = runner.invoke(build_cli(), ["cache", "--cache-dir", str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    assert "units" in shown.output and "/m/tiny-a" in shown.output and "by scorer: " in shown.output
    before = on_disk(tmp_path)
    refused = runner.invoke(
        build_cli(), ["cache", "--cache-dir", str(tmp_path), "clear", "--scorer", "pll"], input="n\n"
    )
    assert refused.exit_code == 0 and "nothing removed" in refused.output and on_disk(tmp_path) == before
    dry = runner.invoke(build_cli(), ["cache", "--cache-dir", str(tmp_path), "clear", "--dry-run"])
    assert "would remove" in dry.output and on_disk(tmp_path) == before
    done = runner.invoke(build_cli(), ["cache", "--cache-dir", str(tmp_path), "clear", "--scorer", "pll", "--yes"])
    assert done.exit_code == 0 and "removed 2 files" in done.output
    assert ("units", "pll", "/m/tiny-b") not in sizes(Cache(tmp_path))
    bad = runner.invoke(build_cli(), ["cache", "--cache-dir", str(tmp_path), "clear", "--older-than", "soon"])
    assert bad.exit_code == 2 and "give an age such as 30d" in bad.output


# -- integrity: content fingerprints, checked once per process -------------------------------------------


def test_a_memo_edited_on_disk_is_not_trusted(tmp_path):
    cache = Cache(tmp_path)
    cache.remember("local-fingerprint", ["/m/x"], "sha256:right")
    (memo,) = (tmp_path / "memo").rglob("*.json")
    record = json.loads(memo.read_text())
    record["value"] = "sha256:wrong"  # the same length: a memo is never trusted on its size
    memo.write_text(json.dumps(record))
    with pytest.warns(CacheWarning, match="corrupt cache file"):
        assert cache.recall("local-fingerprint", ["/m/x"]) is None
    assert not memo.exists()


def test_an_array_rewritten_in_place_with_its_size_and_times_is_recomputed(tmp_path):
    store = Cache(tmp_path).arrays()
    data = store.save(np.arange(100.0), vocabulary="v")
    assert np.array_equal(store.load(vocabulary="v"), np.arange(100.0))
    status = data.stat()
    blob = bytearray(data.read_bytes())
    blob[-8:] = np.float64(-1.0).tobytes()  # the last value negated: same size
    data.write_bytes(bytes(blob))
    os.utime(data, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert data.stat().st_size == status.st_size and data.stat().st_mtime_ns == status.st_mtime_ns
    with pytest.warns(CacheWarning, match="corrupt cache entry"):
        assert store.load(vocabulary="v") is None


def test_a_sealed_artefact_is_checked_by_content_once_per_process(tmp_path, monkeypatch):
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"\x01" * 1000)
    (folder / "tokenizer.json").write_text("{}")
    seal(folder)
    single = tmp_path / "weights.bin"
    single.write_bytes(b"w" * 100)
    seal(single)
    assert intact(folder) and intact(single)
    # hashed once per process: a second check reads no file (only stat)
    import hashlib

    calls = []
    real = hashlib.file_digest
    monkeypatch.setattr(hashlib, "file_digest", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert intact(folder) and intact(single) and calls == []
    monkeypatch.undo()
    status = (folder / "model.onnx").stat()
    (folder / "model.onnx").write_bytes(b"\x02" * 1000)
    os.utime(folder / "model.onnx", ns=(status.st_atime_ns, status.st_mtime_ns))
    with pytest.warns(CacheWarning, match=r"no longer holds the content recorded .*model\.onnx"):
        assert not intact(folder)
    (folder / "extra.bin").write_bytes(b"")
    with pytest.warns(CacheWarning, match="extra.bin"):
        assert not intact(folder)
    unsealed = tmp_path / "old"
    unsealed.mkdir()
    (unsealed / "a").write_text("x")
    with pytest.warns(CacheWarning, match="has no record of its content"):
        assert not intact(unsealed)
    assert not intact(tmp_path / "missing")  # nothing there: nothing to say
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert intact(single)


def test_file_sha256_is_the_files_sha256(tmp_path):
    import hashlib

    path = tmp_path / "f"
    path.write_bytes(b"abc" * 1000)
    assert file_sha256(path) == hashlib.sha256(b"abc" * 1000).hexdigest()
    time.sleep(0.01)
    path.write_bytes(b"abd" * 1000)  # rewritten: hashed again
    assert file_sha256(path) == hashlib.sha256(b"abd" * 1000).hexdigest()

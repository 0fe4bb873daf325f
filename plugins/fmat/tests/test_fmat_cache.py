"""assoc.infra.cache: atomic, checksummed packs that resume work and never trust corrupt files."""

from __future__ import annotations

import math

import pytest

from assoc.infra.cache import CacheWarning, ResultCache, digest


def test_round_trip_with_nan_and_namespaces(tmp_path):
    cache = ResultCache(tmp_path)
    ns = cache.namespace(model="sha256:x", dtype="float32")
    ns.put_many({"a": [1.5, float("nan")], "b": [-0.1]})
    again = ResultCache(tmp_path).namespace(model="sha256:x", dtype="float32")
    got = again.get_many(["a", "b", "c"])
    assert got["b"] == [-0.1] and got["a"][0] == 1.5 and math.isnan(got["a"][1]) and "c" not in got
    other = cache.namespace(model="sha256:x", dtype="float16")
    assert len(other) == 0 and other.directory != ns.directory
    assert (ns.directory / "namespace.json").exists()


def test_float_values_are_exact(tmp_path):
    ns = ResultCache(tmp_path).namespace(k=1)
    values = [-13.706204123456789, 1e-300, -0.1 - 0.2]
    ns.put_many({"v": values})
    assert ResultCache(tmp_path).namespace(k=1).get("v") == values


@pytest.mark.parametrize("damage", ["truncate", "garbage", "checksum"])
def test_corrupt_packs_are_dropped(tmp_path, damage):
    import json

    ns = ResultCache(tmp_path).namespace(k=1)
    ns.put_many({"good": [1.0]})
    ns.put_many({"bad": [2.0]})
    packs = sorted(ns.directory.glob("pack-*.json"), key=lambda p: "bad" in p.read_text())
    target = packs[-1]
    text = target.read_text()
    if damage == "truncate":
        target.write_text(text[: len(text) // 2])
    elif damage == "garbage":
        target.write_bytes(b"\x00\xff not json")
    else:
        record = json.loads(text)
        record["entries"]["bad"] = [3.0]
        target.write_text(json.dumps(record))
    with pytest.warns(CacheWarning, match="corrupt"):
        fresh = ResultCache(tmp_path).namespace(k=1)
        assert fresh.get("good") == [1.0] and fresh.get("bad") is None
    assert not target.exists()


def test_digest_is_canonical():
    assert digest({"a": 1, "b": [1, 2]}) == digest({"b": [1, 2], "a": 1})
    assert digest([1, 2]) != digest([2, 1])


def test_many_packs_are_compacted(tmp_path, monkeypatch):
    import assoc.infra.cache as cache_module

    monkeypatch.setattr(cache_module, "COMPACT_AFTER", 3)
    ns = ResultCache(tmp_path).namespace(k=2)
    for i in range(5):
        ns.put_many({f"k{i}": [float(i)]})
    assert len(list(ns.directory.glob("pack-*.json"))) == 5
    fresh = ResultCache(tmp_path).namespace(k=2)
    assert fresh.get_many([f"k{i}" for i in range(5)]) == {f"k{i}": [float(i)] for i in range(5)}
    assert len(list(ns.directory.glob("pack-*.json"))) == 1
    assert ResultCache(tmp_path).namespace(k=2).get("k4") == [4.0]

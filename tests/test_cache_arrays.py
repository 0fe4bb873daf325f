"""assoc.infra.cache.ArrayStore: checksummed arrays, atomic commits, corrupt entries recomputed."""

import json

import numpy as np
import pytest

from assoc.infra.cache import ArrayStore, CacheWarning


def test_round_trip_and_keys(tmp_path):
    store = ArrayStore(tmp_path)
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert store.load(model="m", vocabulary="v") is None
    store.save(array, model="m", vocabulary="v")
    loaded = store.load(model="m", vocabulary="v")
    np.testing.assert_array_equal(loaded, array)
    assert loaded.dtype == np.float32
    assert store.load(model="m", vocabulary="other") is None
    # saving again replaces the entry and removes the old data file
    store.save(array * 2, model="m", vocabulary="v")
    np.testing.assert_array_equal(store.load(model="m", vocabulary="v"), array * 2)
    assert len(list((tmp_path / "arrays").glob("*.npy"))) == 1


@pytest.mark.parametrize("damage", ["flip_data", "truncate_data", "delete_data", "bad_json", "wrong_shape"])
def test_corrupt_entries_are_reported_deleted_and_missing(tmp_path, damage):
    store = ArrayStore(tmp_path)
    store.save(np.ones((5, 3)), key=1)
    (data,) = (tmp_path / "arrays").glob("*.npy")
    (meta,) = (tmp_path / "arrays").glob("*.json")
    if damage == "flip_data":
        blob = bytearray(data.read_bytes())
        blob[-1] ^= 0x01
        data.write_bytes(bytes(blob))
    elif damage == "truncate_data":
        data.write_bytes(data.read_bytes()[:-8])
    elif damage == "delete_data":
        data.unlink()
    elif damage == "bad_json":
        meta.write_text("{not json", encoding="utf-8")
    else:
        record = json.loads(meta.read_text())
        record["shape"] = [3, 5]
        meta.write_text(json.dumps(record))
    with pytest.warns(CacheWarning, match="corrupt cache entry"):
        assert store.load(key=1) is None
    assert not meta.exists()
    store.save(np.ones((5, 3)), key=1)
    np.testing.assert_array_equal(store.load(key=1), np.ones((5, 3)))

"""The one cache: its public interface, which value wins, numpy rows, leftovers of killed runs, concurrent runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import assoc
from assoc.infra.cache import LAYOUT, Cache, CacheWarning, digest

HERE = Path(__file__).parent
STIMULI = {
    "designs": [
        {"name": "d1", "target": {"X": ["aa", "bbbb", "c"]}, "attribute": {"A": ["dd", "eeeee"]}},
        {"name": "d2", "target": {"Y": ["ffffff"]}, "attribute": {"B": ["g", "hh", "iii"]}},
    ]
}
# target length - attribute length, by hand, in plan order (d1: 3 x 2 pairs, d2: 1 x 3 pairs)
BY_HAND = [0, -3, 2, -1, -1, -4, 5, 4, 3]


@pytest.fixture
def units_plugin(fake_distribution, monkeypatch, tmp_path):
    """tests/unit_scorers.py's scorer; returns a function listing the logged calls of one kind."""
    monkeypatch.syspath_prepend(str(HERE))
    # An installed distribution (not assoc.plugins.register): the tests also run assoc in other processes.
    fake_distribution("units", "from unit_scorers import register_scorers  # noqa: F401\n")
    log = tmp_path / "calls.log"
    monkeypatch.setenv("ASSOC_TEST_UNIT_LOG", str(log))
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))

    def calls(kind: str) -> list[str]:
        if not log.exists():
            return []
        return [line.split()[1] for line in log.read_text().splitlines() if line.startswith(kind + " ")]

    return calls


# -- the interface ------------------------------------------------------------------------------------


def test_namespaces_items_and_listing(tmp_path):
    cache = Cache(tmp_path)
    one = cache.namespace(scorer="chat_listing", model="a")
    one.put("k1", {"x": 1})
    one.put_many({"k2": [1.5, float("nan")]})
    cache.namespace(scorer="other", model="a").put("k", 1)
    found = Cache(tmp_path).namespaces(scorer="chat_listing")
    assert [ns.parts for ns in found] == [{"scorer": "chat_listing", "model": "a"}]
    items = dict(found[0].items())
    assert items["k1"] == {"x": 1} and items["k2"][0] == 1.5 and np.isnan(items["k2"][1])
    assert sorted(found[0].keys()) == ["k1", "k2"]
    assert len(Cache(tmp_path).namespaces()) == 2


def test_a_disabled_cache_stores_nothing(tmp_path):
    off = Cache(tmp_path / "off", enabled=False)
    off.remember("kind", ["k"], 1)
    assert off.recall("kind", ["k"]) is None and not (tmp_path / "off").exists()
    with pytest.raises(ValueError, match="disabled"):
        off.namespace(k=1)
    on = Cache(tmp_path / "on")
    on.remember("kind", ["k"], {"v": 2})
    assert on.recall("kind", ["k"]) == {"v": 2} and on.recall("kind", ["other"]) is None


def test_an_older_cache_layout_is_ignored_not_misread(tmp_path):
    """A namespace written by the previous layout (its directory, its pack format) is never read."""
    parts = {"kind": "units", "model": "m"}
    old = tmp_path / digest(parts)[:32]  # where layout 1 kept this namespace
    old.mkdir()
    body = {"key": [{"value": 999.0}]}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    import hashlib

    record = {"entries": body, "format": "assoc-cache-1", "sha256": hashlib.sha256(text.encode()).hexdigest()}
    (old / "pack-0123456789abcdef0123456789abcdef.json").write_text(json.dumps(record))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        namespace = Cache(tmp_path).namespace(**parts)
        assert namespace.get("key") is None and namespace.directory != old
    assert json.loads((namespace.directory / "namespace.json").read_text())["layout"] == LAYOUT
    assert (old / "pack-0123456789abcdef0123456789abcdef.json").exists()  # left alone, not deleted


# -- which value wins ---------------------------------------------------------------------------------


def test_the_value_stored_last_wins_whatever_the_pack_names(tmp_path):
    """The winner of a key stored twice must not depend on how pack files sort (they were named at random)."""
    for i in range(24):  # with random names, the first value would win in about half of these
        namespace = Cache(tmp_path).namespace(k=i)
        namespace.put("key", "first")
        namespace.put("key", "second")
        assert Cache(tmp_path).namespace(k=i).get("key") == "second"


def test_compaction_keeps_the_winner(tmp_path, monkeypatch):
    import assoc.infra.cache as cache_module

    monkeypatch.setattr(cache_module, "COMPACT_AFTER", 3)
    writer = Cache(tmp_path).namespace(k="c")
    for i in range(4):
        writer.put(f"k{i}", i)
    writer.put("key", "old")
    reader = Cache(tmp_path).namespace(k="c")
    assert reader.get("key") == "old"  # read five packs and merged them into one
    later = Cache(tmp_path).namespace(k="c")
    later.put("key", "new")  # written after the merge: it must win over the merged pack
    assert len(list(writer.directory.glob("pack-*.json"))) == 2
    assert Cache(tmp_path).namespace(k="c").get("key") == "new"
    assert Cache(tmp_path).namespace(k="c").get("k3") == 3


def test_refresh_reads_what_another_process_stored(tmp_path):
    mine = Cache(tmp_path).namespace(k=1)
    assert mine.get("x") is None
    Cache(tmp_path).namespace(k=1).put("x", 1.0)
    assert mine.get("x") is None  # read once, kept in memory
    mine.refresh()
    assert mine.get("x") == 1.0


# -- numpy scalars in unit rows (issue 21, item 4) ----------------------------------------------------


def test_unit_rows_with_numpy_scalars_are_cached(units_plugin):
    """np.float32 values worked with cache=False and raised TypeError with cache=True after the unit was computed."""
    plain = assoc.score("length_units", STIMULI, ["m1"], numpy_values=True, cache=False)
    first = assoc.score("length_units", STIMULI, ["m1"], numpy_values=True)
    again = assoc.score("length_units", STIMULI, ["m1"], numpy_values=True)
    assert again.attrs["assoc"]["executor"]["units_from_cache"] == 5
    assert list(first["value"]) == BY_HAND
    for table in (plain, again):
        assert table["value"].dtype == first["value"].dtype
        assert list(table["value"]) == list(first["value"])


# -- leftovers of killed runs (issue 23, item 6) ------------------------------------------------------


def _dead_owner(tmp_path: Path) -> str:
    """The owner id of a process that registered in ``tmp_path/cache`` and was killed."""
    script = textwrap.dedent(f"""
        import os, signal
        from assoc.infra.cache import Cache
        ns = Cache({str(tmp_path / "cache")!r}).namespace(k="left")
        ns.put("a", 1)
        from assoc.infra.cache import _OWNERS
        print(_OWNERS.id, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    return done.stdout.strip()


def test_temporary_files_and_claims_of_killed_runs_are_swept(units_plugin, tmp_path):
    owner = _dead_owner(tmp_path)
    root = tmp_path / "cache"
    assert (root / "owners" / f"{owner}.lock").exists()  # killed: it could not remove its owner file
    namespace = Cache(root).namespace(k="left")
    dead_tmp = namespace.directory / f".pack-{time.time_ns():020d}-{owner}-1-abcdef.json.0123456789ab.tmp"
    dead_tmp.write_text("half a pack")
    (namespace.directory / f"claim-{digest('u')[:40]}.lock").write_text(json.dumps({"owner": owner}))
    old_tmp = namespace.directory / ".namespace.json.0123456789ab.tmp"  # names no owner
    old_tmp.write_text("x")
    os.utime(old_tmp, (time.time() - 7200, time.time() - 7200))
    young_tmp = namespace.directory / ".namespace.json.ba9876543210.tmp"  # perhaps a live writer's
    young_tmp.write_text("x")
    live = Cache(root).namespace(k="live")
    live.put("b", 2)  # this process is a live owner now
    from assoc.infra.cache import _OWNERS

    live_tmp = live.directory / f".pack-{time.time_ns():020d}-{_OWNERS.id}-9-abcdef.json.0123456789ab.tmp"
    live_tmp.write_text("being written")

    assoc.score("length_units", STIMULI, ["m1"])  # the next run sweeps
    assert not dead_tmp.exists() and not old_tmp.exists()
    assert not list(namespace.directory.glob("claim-*.lock"))
    assert not (root / "owners" / f"{owner}.lock").exists()
    assert young_tmp.exists() and live_tmp.exists()  # never a live run's files
    assert Cache(root).namespace(k="left").get("a") == 1


def test_an_interrupted_pack_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    namespace = Cache(tmp_path).namespace(k=1)

    class Interrupt:
        def tolist(self):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        namespace.put_many({"a": [1.0], "b": Interrupt()})
    with pytest.raises(TypeError):
        namespace.put_many({"a": [1.0], "b": object()})
    assert not list(tmp_path.rglob("*.tmp")) and not list(tmp_path.rglob("pack-*.json"))


# -- claims and concurrent runs (issue 23, item 10) ---------------------------------------------------


def test_a_claim_is_exclusive_while_its_owner_lives(tmp_path):
    namespace = Cache(tmp_path).namespace(k=1)
    claim = namespace.claim("unit")
    assert claim is not None
    assert Cache(tmp_path).namespace(k=1).claim("unit") is None  # held by a live process (this one)
    claim.release()
    with Cache(tmp_path).namespace(k=1).claim("unit") as again:
        assert again is not None


def test_a_claim_of_a_killed_run_is_taken_over(tmp_path):
    script = textwrap.dedent(f"""
        import os, signal
        from assoc.infra.cache import Cache
        claim = Cache({str(tmp_path)!r}).namespace(k=1).claim("unit")
        assert claim is not None
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert list((Cache(tmp_path).namespace(k=1).directory).glob("claim-*.lock"))
    assert Cache(tmp_path).namespace(k=1).claim("unit") is not None


RUN = """
import json, sys
sys.path.insert(0, {here!r})
import assoc
table = assoc.score("length_units", {stimuli!r}, ["m1", "m2"], per_unit=1)
print(json.dumps([list(table["model"]), list(table["value"]), table.attrs["assoc"]["executor"]["units_from_cache"]]))
"""


@pytest.mark.slow
def test_concurrent_runs_split_the_work_and_agree(units_plugin, tmp_path):
    """Four runs of one study on one cache directory: every unit computed once, the same table everywhere."""
    script = RUN.format(here=str(HERE), stimuli=STIMULI)
    env = {**os.environ, "ASSOC_TEST_UNIT_SLEEP": "0.25"}
    processes = [
        subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    outputs = []
    try:
        for process in processes:
            out, err = process.communicate(timeout=240)
            assert process.returncode == 0, err.decode()
            outputs.append(json.loads(out.decode().strip().splitlines()[-1]))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    computed = units_plugin("unit")
    assert sorted(computed) == sorted(f"{m}#{i}" for m in ("m1", "m2") for i in range(9))  # each unit once
    models, values = outputs[0][0], outputs[0][1]
    assert values == BY_HAND * 2 and models == ["m1"] * 9 + ["m2"] * 9
    assert all(out[:2] == [models, values] for out in outputs)
    assert sum(18 - out[2] for out in outputs) == 18  # what each run computed itself adds up to the study
    assert not list((tmp_path / "cache").rglob("claim-*.lock"))


@pytest.mark.slow
def test_a_run_takes_over_the_units_of_a_killed_concurrent_run(units_plugin, tmp_path):
    """A run killed while it holds a claim does not block the others: its unit is computed again."""
    script = RUN.format(here=str(HERE), stimuli=STIMULI)
    env = {**os.environ, "ASSOC_TEST_UNIT_SLEEP": "30"}  # stays inside its first unit until killed
    process = subprocess.Popen([sys.executable, "-c", script], env=env)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and not units_plugin("unit") and process.poll() is None:
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert units_plugin("unit") == ["m1#0"]
    assert list((tmp_path / "cache").rglob("claim-*.lock"))  # the killed run's claim is still there
    started = time.monotonic()
    table = assoc.score("length_units", STIMULI, ["m1", "m2"], per_unit=1)
    assert time.monotonic() - started < 20  # not waiting for the dead run
    assert list(table["value"]) == BY_HAND * 2
    assert units_plugin("unit").count("m1#0") == 2
    assert not list((tmp_path / "cache").rglob("claim-*.lock"))


@pytest.mark.docs("docs/scale.md", "python", section="## Cache, resuming and concurrent runs")
def test_the_cache_example_of_scale_md_runs(tmp_path, monkeypatch):
    from assoc.testing.docs import code_blocks, run_blocks

    monkeypatch.chdir(tmp_path)
    blocks = code_blocks(HERE.parent / "docs" / "scale.md", section="## Cache, resuming and concurrent runs")
    assert len(blocks) == 1
    run_blocks(blocks, name="scale.md")
    assert not list(tmp_path.rglob("claim-*.lock"))


def _fill(namespace, n_packs: int) -> dict:
    values = {}
    for i in range(n_packs):
        namespace.put_many({f"k{i}": [float(i)]})
        values[f"k{i}"] = [float(i)]
    return values


def test_concurrent_compaction_is_not_reported_as_corruption(tmp_path, monkeypatch):
    from pathlib import Path

    from assoc.infra import cache as cache_module
    from assoc.infra.cache import CacheWarning, ResultCache

    monkeypatch.setattr(cache_module, "COMPACT_AFTER", 4)
    expected = _fill(ResultCache(tmp_path).namespace(kind="t"), 6)
    reader = ResultCache(tmp_path).namespace(kind="t")
    real_read = Path.read_text
    compacted = []

    def read_while_another_process_compacts(self, *args, **kwargs):
        if self.name.startswith("pack-") and not compacted:
            compacted.append(True)
            ResultCache(tmp_path).namespace(kind="t")._load()  # "another process" merges every pack now
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_while_another_process_compacts)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        assert reader.get_many(expected) == expected
    assert compacted
    monkeypatch.setattr(Path, "read_text", real_read)
    assert ResultCache(tmp_path).namespace(kind="t").get_many(expected) == expected
    assert len(list(reader.directory.glob("pack-*.json"))) == 1


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_compaction_is_locked(tmp_path, monkeypatch):
    import fcntl

    from assoc.infra import cache as cache_module
    from assoc.infra.cache import ResultCache

    monkeypatch.setattr(cache_module, "COMPACT_AFTER", 4)
    namespace = ResultCache(tmp_path).namespace(kind="t")
    expected = _fill(namespace, 6)
    with open(namespace.directory / ".compact.lock", "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # another process is compacting
        assert ResultCache(tmp_path).namespace(kind="t").get_many(expected) == expected
        assert len(list(namespace.directory.glob("pack-*.json"))) == 6  # left to the lock holder
    assert ResultCache(tmp_path).namespace(kind="t").get_many(expected) == expected
    assert len(list(namespace.directory.glob("pack-*.json"))) == 1


def test_cache_root_is_the_platforms_user_cache_directory(monkeypatch, tmp_path):
    import platformdirs

    from assoc.infra.cache import default_root

    monkeypatch.delenv("ASSOC_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_root() == __import__("pathlib").Path(platformdirs.user_cache_dir("assoc", appauthor=False))
    if platformdirs.__name__ and __import__("sys").platform.startswith("linux"):
        assert default_root() == tmp_path / "xdg" / "assoc"
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda *a, **k: "/Users/u/Library/Caches/assoc")
    assert str(default_root()) == "/Users/u/Library/Caches/assoc"  # what macOS users get
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "mine"))
    assert default_root() == tmp_path / "mine"

"""The chat scorers give the tables, run reports and warnings they gave before the chat engine moved
into the core (issue 41), and find a response cache that code wrote.

The references are frozen outputs of the code at commit 97e4179 (``frozen.py``,
``data/frozen/make_frozen.py``), never of the code under test.
"""

from __future__ import annotations

import json
import shutil

import pytest

from . import frozen


def _frozen(name: str) -> dict:
    return json.loads((frozen.FROZEN / f"{name}.json").read_text(encoding="utf-8"))


def _compare(got: dict, want: dict) -> None:
    assert got["columns"] == want["columns"]
    assert got["dtypes"] == want["dtypes"]
    for number, (row, expected) in enumerate(zip(got["data"], want["data"])):
        assert row == expected, (number, dict(zip(got["columns"], row)))
    assert len(got["data"]) == len(want["data"])
    assert got["report"] == want["report"]
    assert list(got["report"]) == list(want["report"])  # the same entries in the same order
    assert got["warnings"] == want["warnings"]


@pytest.mark.parametrize("name", sorted(frozen.SCENARIOS))
def test_tables_and_run_reports_are_those_frozen(name, tmp_path):
    scenario = frozen.SCENARIOS[name]
    with frozen.make_server(scenario["server"]) as server:
        table, report, said, keys = frozen.run(name, server.url, tmp_path / "cache", tmp_path)
    _compare(frozen.normalise(table, report, said, keys, server.url), _frozen(name))


@pytest.mark.parametrize("name", frozen.CACHED)
def test_a_cache_written_before_the_move_is_found(name, tmp_path):
    """Every request comes from the old cache (offline: nothing could be sent), with the frozen table and report."""
    cache = tmp_path / "cache"
    shutil.copytree(frozen.FROZEN / "cache", cache)
    table, report, said, keys = frozen.run(name, frozen.CACHE_URL, cache, tmp_path, offline=True)
    assert report["sent"] == 0 and report["from_cache"] == report["requests"] > 0
    _compare(frozen.normalise(table, report, said, keys, frozen.CACHE_URL), _frozen(f"cached_{name}"))

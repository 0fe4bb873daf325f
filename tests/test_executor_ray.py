"""The Ray executor gives the local executor's table; lost workers, failing units and killed drivers.

One local Ray (2 CPUs, the ``ray_session`` fixture of tests/conftest.py) serves every Ray test of
the session: starting Ray costs seconds. Its tests carry the ``ray`` and ``slow`` markers.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import assoc
from assoc.executors.ray import RayExecutor
from assoc.scoring.units import UnitError

HERE = Path(__file__).parent
STIMULI = {
    "designs": [
        {
            "name": "occ",
            "queries": ["The [MASK] works as a {TARGET}.", "[MASK] is a {TARGET}."],
            "mask": {"male": ["man", "he"], "female": ["woman", "she"]},
            "target": {"Occupation": ["nurse", "engineer", "teacher"]},
        },
        {
            "name": "plain",
            "queries": ["A [MASK] sat down.", "The [MASK] ran away."],
            "mask": {"x": ["cat"], "y": ["dog"]},
        },
    ]
}
PAIRS = {
    "designs": [
        {"name": "d1", "target": {"X": ["aa", "bbbb", "c"]}, "attribute": {"A": ["dd", "eeeee"]}},
        {"name": "d2", "target": {"Y": ["ffffff"]}, "attribute": {"B": ["g", "hh", "iii"]}},
    ]
}
N_PAIRS = 9


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from assoc.testing.tiny_mlm import build_bert_wordpiece, build_roberta_bpe

    root = tmp_path_factory.mktemp("tiny-ray")
    return [str(build_roberta_bpe(root / "roberta")), str(build_bert_wordpiece(root / "bert"))]


@pytest.fixture
def units_plugin(fake_distribution, monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(HERE))
    # An installed distribution (not assoc.plugins.register): the tests also run assoc in other processes.
    fake_distribution("units", "from unit_scorers import register_scorers  # noqa: F401\n")
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "calls.log"


def read_log(log: Path, kind: str) -> list[tuple[str, int]]:
    if not log.exists():
        return []
    return [
        (parts[1], int(parts[2]))
        for parts in (line.split() for line in log.read_text().splitlines())
        if parts[0] == kind
    ]


def assert_same_table(local, remote):
    """Same rows in the same order, values to 1e-6, provenance equal apart from the executor and time."""
    floats = [c for c in local.columns if local[c].dtype == float]
    assert list(remote.columns) == list(local.columns)
    assert remote.drop(columns=floats).equals(local.drop(columns=floats))
    for column in floats:
        np.testing.assert_allclose(remote[column], local[column], rtol=0, atol=1e-6)
    a, b = (dict(t.attrs["assoc"]) for t in (local, remote))
    assert a.pop("executor")["name"] == "local" and b.pop("executor")["name"] == "ray"
    a.pop("created"), b.pop("created")
    assert a == b


@pytest.mark.filterwarnings("ignore::assoc.lm.masked.words.OutOfVocabularyWarning")
@pytest.mark.parametrize(
    "scorer, options", [("fmat", {}), ("fmat", {"oov": "multi_token"}), ("pll", {"per_token": True})]
)
def test_masked_lm_studies_give_the_local_table(ray_session, tiny, scorer, options):
    options = {**options, "unit_size": 3}  # 3 units per model: both workers busy
    local = assoc.score(scorer, STIMULI, tiny, cache=False, **options)
    remote = assoc.score(scorer, STIMULI, tiny, cache=False, executor="ray", **options)
    assert remote.attrs["assoc"]["executor"]["units"] == 6
    if "token_log_probs" in local:
        import json

        values = [[[t[2] for t in json.loads(v)] for v in frame.pop("token_log_probs")] for frame in (local, remote)]
        np.testing.assert_allclose(np.concatenate(values[1]), np.concatenate(values[0]), rtol=0, atol=1e-6)
    assert_same_table(local, remote)


def test_each_worker_loads_a_model_once_and_results_reach_the_driver_cache(ray_session, units_plugin):
    log = str(units_plugin)
    table = assoc.score("length_units", PAIRS, ["m1", "m2"], per_unit=1, log=log, executor="ray")
    assert list(table["value"]) == [
        len(t) - len(a) for _ in (1, 2) for t, a in zip(table["target"][:9], table["attribute"][:9])
    ]
    units = read_log(units_plugin, "unit")
    assert sorted(key for key, _ in units) == sorted(f"{m}#{i}" for m in ("m1", "m2") for i in range(N_PAIRS))
    loads = read_log(units_plugin, "load")
    assert len(loads) == len(set(loads)) and len(loads) <= 4  # once per (worker, model), never per unit
    assert len({pid for _, pid in units}) == 2  # both workers worked
    again = assoc.score("length_units", PAIRS, ["m1", "m2"], per_unit=1, log=log, executor="ray")
    assert again.attrs["assoc"]["executor"]["units_from_cache"] == 2 * N_PAIRS
    assert len(read_log(units_plugin, "unit")) == 2 * N_PAIRS  # nothing recomputed


def test_unit_reports_reach_the_run_report_as_locally(ray_session, units_plugin):
    """Scorer.unit_report is called in the Ray worker and shipped back with the rows: the same run report."""
    local = assoc.score("length_units", PAIRS, ["m1", "m2"], per_unit=2, report=True, cache=False)
    remote = assoc.score("length_units", PAIRS, ["m1", "m2"], per_unit=2, report=True, cache=False, executor="ray")
    expected = {"units": 10, "pairs": 18, "by_model": {"m1": 9, "m2": 9}, "last": "m2#4"}
    assert local.attrs["assoc"]["run"] == remote.attrs["assoc"]["run"] == expected


def test_a_killed_worker_is_replaced_and_its_unit_retried(ray_session, units_plugin):
    log = str(units_plugin)
    local = assoc.score("length_units", PAIRS, ["m1"], per_unit=1, cache=False)
    remote = assoc.score(
        "length_units", PAIRS, ["m1"], per_unit=1, cache=False, log=log, die_at="m1#4", sleep=0.05, executor="ray"
    )
    assert Path(log + ".died").exists()  # the worker did die mid-study
    runs = [key for key, _ in read_log(units_plugin, "unit")]
    assert runs.count("m1#4") == 2  # started, lost with its worker, retried
    assert list(remote["value"]) == list(local["value"]) and len(remote) == N_PAIRS  # each unit's rows once
    assert remote.drop(columns=[]).equals(local.drop(columns=[]))
    assert len(read_log(units_plugin, "load")) >= 2  # the restarted worker loaded the model again


def test_a_failing_unit_is_one_error_naming_unit_and_model(ray_session, units_plugin):
    """A unit that raises (here: its model cannot load) stops the study with one error naming unit and model;
    the units that finished before it are kept, and a fixed run computes only the rest."""
    flag = units_plugin.parent / "broken"
    flag.touch()
    options = {"per_unit": 1, "fail_model": "m2", "fail_flag": str(flag), "sleep": 0.02, "log": str(units_plugin)}
    with pytest.raises(
        UnitError,
        match=r"work unit 'm2#0' \(model 'm2'\) failed: OSError: cannot open model m2; "
        r"\d+ finished unit\(s\) are kept in the cache",
    ) as caught:
        assoc.score("length_units", PAIRS, ["m1", "m2"], executor=RayExecutor(max_workers=1), **options)
    finished = int(re.search(r"(\d+) finished", str(caught.value)).group(1))
    assert finished == N_PAIRS  # one worker: all of m1 ran before m2's first unit
    flag.unlink()  # the model is fixed
    before = len(read_log(units_plugin, "unit"))
    table = assoc.score("length_units", PAIRS, ["m1", "m2"], executor="ray", **options)
    assert table.attrs["assoc"]["executor"]["units_from_cache"] == finished
    assert len(read_log(units_plugin, "unit")) - before == 2 * N_PAIRS - finished


def test_a_killed_ray_driver_resumes_from_the_cache(ray_session, units_plugin):
    """A driver (its own process, joined to the running cluster) killed mid-study; the next run resumes."""
    log = str(units_plugin)
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import assoc
        from assoc.executors.ray import RayExecutor
        env = {{"env_vars": {{"PYTHONPATH": {os.pathsep.join([str(HERE), *sys.path])!r}}}}}
        assoc.score("length_units", {PAIRS!r}, ["m1"], per_unit=1, log={log!r}, sleep=0.4,
                    executor=RayExecutor(address={ray_session!r}, init_options={{"runtime_env": env}}))
    """)
    process = subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ))
    deadline = time.monotonic() + 120
    cache_dirs = lambda: list(Path(os.environ["ASSOC_CACHE_DIR"]).glob("*/pack-*.json"))  # noqa: E731
    try:
        while time.monotonic() < deadline and len(cache_dirs()) < 3 and process.poll() is None:
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    stored = len(cache_dirs())
    assert 3 <= stored < N_PAIRS, "the driver finished or never stored a unit"
    time.sleep(1.0)  # the killed driver's actors are reaped by Ray
    before = len(read_log(units_plugin, "unit"))
    table = assoc.score("length_units", PAIRS, ["m1"], per_unit=1, log=log, sleep=0.4, executor="ray")
    cached = table.attrs["assoc"]["executor"]["units_from_cache"]
    assert cached >= stored and len(read_log(units_plugin, "unit")) - before == N_PAIRS - cached
    assert list(table["value"]) == list(assoc.score("length_units", PAIRS, ["m1"], cache=False)["value"])


def test_cli_score_with_the_ray_executor(ray_session, tiny, tmp_path):
    from click.testing import CliRunner

    from assoc.cli import cli

    runner = CliRunner()
    outputs = {}
    for executor in ("local", "ray"):
        out = tmp_path / f"{executor}.csv"
        result = runner.invoke(
            cli,
            [
                "score",
                "--scorer",
                "fmat",
                "--stimuli",
                "bao2024:2D-Q1,3A-Q1",
                "--model",
                tiny[1],
                "-o",
                "cache=false",
                "--executor",
                executor,
                "--out",
                str(out),
            ],
        )
        assert result.exit_code == 0, result.output
        outputs[executor] = assoc.read_table(out)
    assert_same_table(outputs["local"], outputs["ray"])


def test_every_ray_worker_computes_with_the_threads_asked_for(ray_session, fresh_plugins, monkeypatch, tmp_path):
    """threads= reaches each actor: the units' own torch.get_num_threads() is the count, and provenance says so."""
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.delenv("ASSOC_THREADS", raising=False)
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path))
    import unit_scorers

    assoc.plugins.register(unit_scorers.ThreadsPlugin(), name="threads-test")
    asked = 3  # neither Ray's default for a 1-CPU actor (OMP_NUM_THREADS=1) nor this machine's core count
    table = assoc.score("threads_units", PAIRS, ["m1", "m2"], threads=asked, cache=False, executor="ray")
    assert list(table["value"]) == [float(asked)] * 2 * N_PAIRS
    assert table.attrs["assoc"]["executor"]["threads"] == {"requested": asked, "source": "threads", "torch": asked}
    # without a setting, each worker keeps its own default, and provenance records what the units saw
    table = assoc.score("threads_units", PAIRS, ["m1", "m2"], cache=False, executor="ray")
    seen = table.attrs["assoc"]["executor"]["threads"]
    assert seen["requested"] is None and set(table["value"]) == {float(seen["torch"])} != {float(asked)}


def test_sbert_topwords_gives_the_local_table(ray_session, monkeypatch):
    """SBERT top words (all-MiniLM-L6-v2, offline) on Ray: one unit per term, the same table as local."""
    import assoc_sbert_topwords.scorer as sbert

    monkeypatch.setattr(sbert, "TERMS_PER_UNIT", 1)  # plan() runs in the driver: three units, both workers busy
    terms = {"target": {"jobs": ["nurse", "doctor"], "age": ["teenagers"]}}
    vocabulary = [
        "nurse",
        "nurses",
        "doctor",
        "physician",
        "hospital",
        "patient",
        "caring",
        "kind",
        "teenager",
        "young",
        "youth",
        "adult",
        "school",
        "engineer",
        "clinic",
        "student",
        "teacher",
        "child",
    ]
    options = {"vocabulary": vocabulary, "top_k": 5, "cache": False}
    local = assoc.score("sbert_topwords", terms, ["all-MiniLM-L6-v2"], **options)
    remote = assoc.score("sbert_topwords", terms, ["all-MiniLM-L6-v2"], executor="ray", **options)
    assert remote.attrs["assoc"]["executor"]["units"] == 3 and len(local) == 15
    assert_same_table(local, remote)


def test_chat_listing_gives_the_local_table_and_run_report(ray_session):
    """A chat scorer's units (blocks of requests) on Ray: the same table, warnings aside the same run report."""
    import warnings

    from assoc.testing.openai_server import EXAMPLE_STIMULI, FAST_RETRIES, ChatServer

    with ChatServer() as server, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        options = {"base_url": server.url, "task": "both", "n_items": 4, "unit_size": 3, "cache": False}
        local = assoc.score("chat_listing", EXAMPLE_STIMULI, ["m1", "m2"], **options, **FAST_RETRIES)
        remote = assoc.score("chat_listing", EXAMPLE_STIMULI, ["m1", "m2"], executor="ray", **options, **FAST_RETRIES)
    assert remote.attrs["assoc"]["executor"]["units"] == 8  # ten requests a model, in units of three
    volatile = ("seconds_sending", "seconds_waiting_to_retry")
    runs = [{k: v for k, v in t.attrs["assoc"].pop("run").items() if k not in volatile} for t in (local, remote)]
    assert runs[0] == runs[1] and runs[0]["sent"] == 20
    assert_same_table(local, remote)

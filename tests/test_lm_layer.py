"""The language-model layer (issue 41): the kinds, the one loader and its checks, LMScorer, ``[LABEL=]SPEC``.

The kinds' answers are checked against the models' own forward passes by hand (transformers alone);
each check of the one loader first sets up the input that used to pass silently (a BERT folder given
to ``clm`` wrote meaningless numbers with exit 0; a causal folder without its tokenizer scored every
sentence 0.0; ``fmat`` refused GPT-2 only after loading it) and shows it refused in one line before
any work. Labels: scorers never see them; the core runs the SPECs, writes the labels into the ``model``
column and keys every cache by the SPEC, so renaming a label recomputes nothing.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

import assoc
from assoc.errors import ModelError, OptionError
from assoc.lm import (
    ChoiceRequest,
    ContinuationRequest,
    GenerateRequest,
    RequestKindError,
    SentenceRequest,
    open_model,
)

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

STIMULI = {"queries": ["[MASK] is a nurse.", "The [MASK] works here."], "mask": {"F": ["she"], "M": ["he"]}}
JOBS = {
    "queries": ["[MASK] is a {TARGET}.", "The [MASK] works as a {TARGET}."],
    "mask": {"F": ["she"], "M": ["he"]},
    "target": {"Job": ["nurse", "engineer", "teacher"]},
}


@pytest.fixture(autouse=True)
def _offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """{"bert": dir, "gpt2": dir}: a tiny masked LM and a tiny causal LM (random weights, real tokenizers)."""
    from assoc.testing.tiny_clm import build_gpt2_bpe
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    root = tmp_path_factory.mktemp("tiny-layer")
    return {"bert": str(build_bert_wordpiece(root / "bert")), "gpt2": str(build_gpt2_bpe(root / "gpt2"))}


@pytest.fixture
def no_loading(monkeypatch):
    """Fail the test if any model's weights or tokenizer are loaded (the refusals come before any work)."""
    import assoc.lm.loading as loading

    monkeypatch.setattr(loading, "load_pretrained", lambda *a, **k: pytest.fail("a model was loaded"))


def _forward_log_probs(directory: str, auto_class: str, ids: list[int]) -> torch.Tensor:
    """log softmax of the model's logits for one sequence (float64), straight from transformers."""
    model = getattr(transformers, auto_class).from_pretrained(directory).eval()
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0]
    return torch.log_softmax(logits.double(), dim=-1)


# -- the causal kind -----------------------------------------------------------------------------------


def test_causal_sentence_and_continuation_equal_the_forward_pass_by_hand(tiny):
    """sentence (bos=auto): every token after the prepended BOS/EOS; continuation: lm-eval's split, no BOS
    for a non-empty context (bos=tokenizer on GPT-2) and the prefix token for an empty one."""
    path = tiny["gpt2"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    prefix = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    text = "the nurse said that she was tired"

    with open_model(path, {"device": "cpu", "bos": "auto"}) as model:
        (sentence,) = model.sentence([SentenceRequest(text)])
        (from_start,) = model.continuation([ContinuationRequest("", text)])
    ids = [prefix, *tokenizer(text, add_special_tokens=False)["input_ids"]]
    lp = _forward_log_probs(path, "AutoModelForCausalLM", ids)
    by_hand = [float(lp[j - 1, ids[j]]) for j in range(1, len(ids))]
    assert sentence.ok and sentence.n_tokens == len(ids) - 1
    assert sentence.value == pytest.approx(math.fsum(by_hand), abs=1e-4)
    assert list(sentence.token_values) == pytest.approx(by_hand, abs=1e-5)
    assert from_start.value == pytest.approx(sentence.value, abs=1e-6)  # lm-eval: an empty context is the BOS

    context, continuation = "the nurse said that  ", "she was tired"  # trailing spaces move to the continuation
    with open_model(path, {"device": "cpu", "bos": "tokenizer"}) as model:
        (answer,) = model.continuation([ContinuationRequest(context, continuation)])
    context_ids = tokenizer(context.rstrip(), add_special_tokens=False)["input_ids"]
    whole = tokenizer(context.rstrip() + "  " + continuation, add_special_tokens=False)["input_ids"]
    assert whole[: len(context_ids)] == context_ids
    lp = _forward_log_probs(path, "AutoModelForCausalLM", whole)
    by_hand = [float(lp[j - 1, whole[j]]) for j in range(len(context_ids), len(whole))]
    assert answer.n_tokens == len(by_hand)
    assert answer.value == pytest.approx(math.fsum(by_hand), abs=1e-4)


def test_choice_is_the_argmax_of_the_normalised_continuations(tiny):
    with open_model(tiny["gpt2"], {"device": "cpu", "bos": "tokenizer"}) as model:
        prompt = "Q: who is the nurse?\nA:"
        options = (("she",), ("he", "the man"), ("nobody knows",))
        for how in ("sum", "char", "byte", "token"):
            (choice,) = model.choose([ChoiceRequest(prompt, options, normalize=how)])
            scores = []
            for phrasings in options:
                answers = model.continuation([ContinuationRequest(prompt, " " + p) for p in phrasings])
                sizes = [
                    {"sum": 1, "char": len(p), "byte": len(p.encode()), "token": a.n_tokens}[how]
                    for p, a in zip(phrasings, answers, strict=True)
                ]
                scores.append(max(a.value / size for a, size in zip(answers, sizes, strict=True)))
            assert choice.ok and choice.index == max(range(3), key=lambda i: (scores[i], -i))
            assert list(choice.scores) == pytest.approx(scores, abs=1e-5)  # other batches: float32 noise only


def test_choose_on_bbq_items_gives_the_numbers_of_clm_bbq(tmp_path):
    """BBQ through the causal kind's ``choice`` (lm-eval's multiple-choice form) equals today's ``clm_bbq``
    table: each option's log-likelihood and token count, and the option chosen. A scorer ported onto the
    request kinds keeps its numbers."""
    import gzip

    pytest.importorskip("assoc_bias_benchmarks")
    from assoc_bias_benchmarks.bbq import items as bbq_items

    from assoc.testing.tiny_clm import build_gpt2_bpe

    gpt2 = str(build_gpt2_bpe(tmp_path / "gpt2", positions=256))  # BBQ's prompts need more than 64 positions
    folder = tmp_path / "bbq"
    folder.mkdir()
    with gzip.open(bbq_items.bundled_directory() / "Religion.jsonl.gz", "rt", encoding="utf-8") as handle:
        (folder / "Religion.jsonl").write_text("".join(next(handle) for _ in range(6)), encoding="utf-8")
    stimuli = bbq_items.load_directory(folder)
    table = assoc.score("clm_bbq", stimuli, gpt2, bos="tokenizer", progress=False)
    requests = [
        ChoiceRequest(f"{i.fields['context']}\n\nQ: {i.fields['question']}\nA:", tuple((o,) for o in i.options))
        for i in stimuli.items
    ]
    with open_model(gpt2, {"device": "cpu", "bos": "tokenizer"}) as model:
        choices = model.choose(requests)
    for row, choice in zip(table.itertuples(), choices, strict=True):
        assert choice.ok and choice.index == row.chosen
        for i, answer in enumerate(choice.log_probs):
            assert answer.value == pytest.approx(getattr(row, f"ll_ans{i}"), abs=1e-5)  # batches differ: float32
            assert answer.n_tokens == getattr(row, f"n_tokens_ans{i}")


def test_a_text_too_long_for_the_model_gets_no_value_and_says_why(tiny):
    with open_model(tiny["gpt2"], {"device": "cpu"}) as model:
        long_text = " ".join(["nurse"] * 200)  # the tiny GPT-2 takes 64 positions
        short, long = model.sentence([SentenceRequest("a nurse"), SentenceRequest(long_text)])
        (choice,) = model.choose([ChoiceRequest(long_text, ("a", "b"))])
        (named,) = model.choose([ChoiceRequest(long_text, ("a", "b"), key="ex-7")])
    assert short.ok and not long.ok and long.status == "too_long" and math.isnan(long.value)
    assert "tokens, more than model" in long.reason
    assert choice.index is None and choice.status == "too_long"
    # what a benchmark needs to name its item: the key it sent (its example id), the text, its length in tokens
    import re

    found = re.search(
        r"^item 'ex-7': 'nurse nurse .+ has (\d+) tokens, more than model .+ accepts \(64, ", named.reason
    )
    assert found and int(found.group(1)) > 200


# -- the masked kind -----------------------------------------------------------------------------------


def test_masked_sentence_is_the_pll_and_continuation_masks_only_its_own_tokens(tiny):
    """sentence: every non-special token masked in turn (Salazar et al.); continuation: the tokens that
    spell the continuation, each masked in turn with the context visible; both by hand on the forward pass."""
    path = tiny["bert"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    context, continuation = "the nurse said that", " she was tired"
    whole = context + continuation
    encoding = tokenizer(whole, return_offsets_mapping=True)
    ids = encoding["input_ids"]
    spans = encoding["offset_mapping"]

    def pll(positions: list[int]) -> float:
        values = []
        for position in positions:
            masked = list(ids)
            masked[position] = tokenizer.mask_token_id
            lp = _forward_log_probs(path, "AutoModelForMaskedLM", masked)
            values.append(float(lp[position, ids[position]]))
        return math.fsum(values)

    content = [i for i in range(len(ids)) if i not in (0, len(ids) - 1)]
    own = [i for i in content if spans[i][1] > len(context)]
    with open_model(path, {"device": "cpu"}) as model:
        assert model.kind == "masked"
        (sentence,) = model.sentence([SentenceRequest(whole)])
        (answer,) = model.continuation([ContinuationRequest(context, continuation)])
    assert sentence.n_tokens == len(content) and sentence.value == pytest.approx(pll(content), abs=1e-4)
    assert answer.n_tokens == len(own) == 3 and answer.value == pytest.approx(pll(own), abs=1e-4)


def test_a_kind_refuses_a_request_kind_it_does_not_serve_in_one_line(tiny):
    with open_model(tiny["bert"], {"device": "cpu"}) as model:
        with pytest.raises(RequestKindError) as caught:
            model.generate([GenerateRequest(({"role": "user", "content": "hi"},))])
    message = str(caught.value)
    assert "\n" not in message and "masked model, which cannot serve generate" in message


# -- the one loader: refusals before any work -----------------------------------------------------------


@pytest.mark.parametrize(
    ("scorer", "family", "is_kind", "takes"),
    [
        ("clm", "bert", "masked", "causal or server"),
        ("fmat", "gpt2", "causal", "masked"),
        ("pll", "gpt2", "causal", "masked"),
    ],
)
def test_a_model_of_the_wrong_kind_is_refused_before_any_work(tiny, no_loading, scorer, family, is_kind, takes):
    stimuli = "crows_pairs" if scorer == "crows_pairs" else STIMULI
    with pytest.raises(ModelError) as caught:
        assoc.score(scorer, stimuli, [tiny[family]], cache=False, progress=False)
    message = str(caught.value)
    assert "\n" not in message
    assert f"is a {is_kind} model (config.json: " in message and f"scorer {scorer!r} takes {takes} models" in message


def test_a_scorer_of_several_kinds_refuses_a_kind_that_serves_none_of_its_requests(no_loading):
    """crows_pairs takes every kind that serves sentence (masked, causal, server): a chat model is refused."""
    with pytest.raises(ModelError) as caught:
        assoc.score("crows_pairs", "crows_pairs", ["chat:some-model"], cache=False, progress=False)
    message = str(caught.value)
    assert "\n" not in message
    assert "is a chat model" in message and "scorer 'crows_pairs' takes causal or masked or server models" in message


def test_a_wrong_kind_on_the_command_line_is_one_line_before_the_job_size(tiny, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from assoc.cli import build_cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.json").write_text(json.dumps(STIMULI))
    result = CliRunner().invoke(
        build_cli(), ["score", "-s", "clm", "-i", "s.json", "-m", tiny["bert"], "--out", "t.csv"]
    )
    assert result.exit_code == 2, result.output
    assert "is a masked model" in result.output and "work unit" not in result.output
    assert not (tmp_path / "t.csv").exists()


def _copy(source: str, target: Path, *, without: tuple[str, ...] = ()) -> str:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(*without))
    return str(target)


def test_a_folder_without_its_tokenizer_is_refused_before_any_work(tiny, tmp_path, no_loading):
    """Before: transformers loaded an empty GPT-2 tokenizer from such a folder, and clm scored every sentence 0.0."""
    folder = _copy(tiny["gpt2"], tmp_path / "no-tokenizer", without=("tokenizer.json",))
    with pytest.raises(ModelError, match=r"has no tokenizer vocabulary .*\(tokenizer.save_pretrained\)"):
        assoc.score("clm", STIMULI, [folder], cache=False, progress=False)


def test_a_tokenizer_that_gives_no_tokens_is_refused_when_loaded(tiny, tmp_path):
    """The same folder loaded directly (no folder check): the loaded tokenizer itself is checked."""
    from assoc.lm import load_causal_lm

    folder = _copy(tiny["gpt2"], tmp_path / "no-tokenizer", without=("tokenizer.json",))
    with pytest.raises(ModelError, match="turns text into no tokens"):
        load_causal_lm(folder)


def test_a_tokenizer_larger_than_the_embeddings_is_refused(tiny, tmp_path, no_loading, monkeypatch):
    """A GPT-2 folder (400 embedding rows) holding BERT's tokenizer (30,522 tokens): ids past the embeddings."""
    folder = Path(_copy(tiny["gpt2"], tmp_path / "mixed", without=("tokenizer.json", "tokenizer_config.json")))
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        if (Path(tiny["bert"]) / name).exists():
            shutil.copy(Path(tiny["bert"]) / name, folder / name)
    with pytest.raises(ModelError, match=r"tokenizer has 30522 tokens but the model's embedding matrix has 400 rows"):
        assoc.score("clm", STIMULI, [str(folder)], cache=False, progress=False)
    monkeypatch.undo()  # loading allowed again: the loaded pair is checked too
    from assoc.lm import load_causal_lm

    with pytest.raises(ModelError, match="30522 tokens but the model's embedding matrix has 400 rows"):
        load_causal_lm(str(folder))


def test_a_missing_folder_is_refused_with_a_did_you_mean(tiny, tmp_path, monkeypatch, no_loading):
    monkeypatch.chdir(tmp_path)
    _copy(tiny["bert"], tmp_path / "tiny-bert")
    with pytest.raises(ModelError, match=r"model folder './tiny-bret' does not exist \(did you mean 'tiny-bert'\?\)"):
        assoc.score("fmat", STIMULI, ["./tiny-bret"], cache=False, progress=False)
    # without ./ it could be a Hub id; not cached, and a folder of a near name exists: a mistyped folder
    with pytest.raises(ModelError, match=r"neither a folder here nor a Hugging Face model .*did you mean 'tiny-bert'"):
        assoc.score("fmat", STIMULI, ["tiny-bret"], cache=False, progress=False)


def test_an_unknown_prefix_names_the_known_ones():
    with pytest.raises(ModelError, match=r"'nosuch:' names no model kind"):
        assoc.score("pll", STIMULI, ["nosuch:model"], cache=False, progress=False)


def test_causal_lms_refuse_an_onnx_backend_before_any_work(tiny, no_loading):
    with pytest.raises(OptionError, match="runs on PyTorch only"):
        assoc.score("clm", STIMULI, [tiny["gpt2"]], cache=False, progress=False, backend="onnx")


# -- LMScorer: options, devices, the unit cache ------------------------------------------------------------


def test_every_lm_scorer_takes_the_model_options_and_device_auto():
    from assoc.lm import MODEL_OPTIONS

    for name in ("fmat", "pll", "clm", "crows_pairs"):
        scorer = assoc.get_scorer(name)
        options = {option.name: option for option in scorer.options}
        assert {option.name for option in MODEL_OPTIONS} <= set(options), name
        assert options["device"].default == "auto" and options["batch_tokens"].renamed_from == ("max_tokens",)


def test_device_auto_is_keyed_by_the_device_it_picks(tiny, monkeypatch):
    """device='auto' on a machine without CUDA is the CPU: a run with device='cpu' reads its units from the cache."""
    if torch.cuda.is_available():
        pytest.skip("the machine has CUDA: auto is not the CPU here")
    auto = assoc.score("clm", STIMULI, [tiny["gpt2"]], progress=False)
    assert auto.assoc.provenance["model_names"][0]["device"] == "cpu"
    assert auto.assoc.provenance["options"]["device"] == "auto"
    cpu = assoc.score("clm", STIMULI, [tiny["gpt2"]], progress=False, device="cpu")
    assert cpu.assoc.provenance["executor"]["units_from_cache"] == 1
    assert cpu["value"].equals(auto["value"])


def test_options_for_lists_each_kinds_options_once():
    from assoc.lm import MODEL_OPTIONS, options_for

    names = [option.name for option in options_for(["causal", "masked", "causal"])]
    assert names == [option.name for option in MODEL_OPTIONS] + ["bos", "pll_metric"]
    with pytest.raises(ModelError, match="not one of the core's model kinds"):
        options_for(["chatty"])


def test_removed_names_say_what_replaced_them():
    import assoc.lm

    for name, replacement in (("MaskedLMScorer", "LMScorer"), ("MAX_TOKENS_OPTION", "batch_tokens")):
        with pytest.raises(AttributeError, match=replacement):
            getattr(assoc.lm, name)


# -- model kinds registered by plugins ----------------------------------------------------------------------


@pytest.mark.docs("docs/requests.md", "python")
def test_the_requests_page_registers_a_kind_that_a_scorer_of_sentences_runs(tiny, tmp_path, monkeypatch, fresh_plugins):
    """docs/requests.md's example, as written: a kind registered in-line (register_model_kinds), a spec with
    its prefix, a label; its numbers by hand; the same scorer also takes a masked and a causal LM."""
    from click.testing import CliRunner

    from assoc.cli import build_cli
    from assoc.testing.docs import code_blocks, run_blocks

    monkeypatch.chdir(tmp_path)
    page = Path(__file__).resolve().parents[1] / "docs" / "requests.md"
    namespace = run_blocks(code_blocks(page, "python"), name="requests.md")
    table = namespace["table"]
    words = "she is a nurse . he is an engineer . she is a doctor .".split()
    counts, vocabulary = {w: words.count(w) for w in words}, len(set(words)) + 1

    def by_hand(sentence: str) -> float:
        return math.fsum(math.log((counts.get(w, 0) + 1) / (len(words) + vocabulary)) for w in sentence.split())

    assert list(table["value"]) == pytest.approx([by_hand("she is a nurse"), by_hand("he is a nurse")], abs=1e-12)
    assert table.assoc.provenance["model_names"][0]["kind"] == "unigram"
    assert "device" not in table.assoc.provenance["model_names"][0]  # not a local kind
    listed = CliRunner().invoke(build_cli(), ["plugins"]).output
    assert "unigram-example" in listed and "model kinds: unigram" in listed
    assert "model kinds: masked, causal, chat" in listed  # the core's own, registered the same way
    # the scorer takes every registered kind that serves sentence requests: masked and causal LMs too
    both = assoc.score("sentence_log_prob", namespace["stimuli"], [tiny["bert"], tiny["gpt2"]], progress=False)
    kinds = [record["kind"] for record in both.assoc.provenance["model_names"]]
    assert kinds == ["masked", "causal"] and both["value"].notna().all()
    # a missing corpus is refused by the kind's check, before any work
    with pytest.raises(ModelError, match="no corpus file 'missing.txt'"):
        assoc.score("sentence_log_prob", namespace["stimuli"], ["unigram:missing.txt"], progress=False)


def test_a_bad_model_kind_fails_its_plugin_with_the_reason(fresh_plugins):
    from assoc.lm import LanguageModel

    class NotAKind:
        kind = "nothing"

    class SamePrefix(LanguageModel):
        kind, prefix = "other", "unigram"

        @classmethod
        def open(cls, spec, options, cache):
            raise NotImplementedError

    class First(SamePrefix):
        kind = "first"

    def plugin(*kinds):
        class Plugin:
            @assoc.hookimpl
            def register_model_kinds(self, register):
                for kind in kinds:
                    register(kind)

        return Plugin()

    installed = set(assoc.plugins.model_kinds())  # the core's, and any an installed plugin registers (sentence)
    info = assoc.plugins.register(plugin(NotAKind), name="bad-kind")
    assert info.status == "failed" and "is not a subclass of assoc.lm.LanguageModel" in info.error
    assert assoc.plugins.register(plugin(First), name="first").status == "loaded"
    clash = assoc.plugins.register(plugin(SamePrefix), name="clash")
    assert clash.status == "failed" and "its prefix 'unigram:' is the prefix of kind 'first'" in clash.error
    assert {"causal", "chat", "masked", "server"} <= installed
    assert set(assoc.plugins.model_kinds()) == installed | {"first"}


# -- model names: [LABEL=]SPEC --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def berts(tmp_path_factory) -> list[str]:
    """Two tiny masked LMs (seeds 0 and 1): two raters."""
    pytest.importorskip("transformers")
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    root = tmp_path_factory.mktemp("labelled")
    return [str(build_bert_wordpiece(root / f"bert-{seed}", seed=seed)) for seed in (0, 1)]


def test_labels_name_models_in_the_table_and_provenance_keeps_the_spec(berts):
    table = assoc.score("fmat", JOBS, [f"small={berts[0]}", f"other={berts[1]}"], progress=False)
    assert list(dict.fromkeys(table["model"])) == ["small", "other"]
    provenance = table.assoc.provenance
    assert provenance["models"] == ["small", "other"]
    assert set(provenance["model_fingerprints"]) == {"small", "other"}
    first = provenance["model_names"][0]
    resolved = str(Path(berts[0]).resolve())
    assert first["label"] == "small" and first["spec"] == resolved and first["path"] == resolved
    assert first["kind"] == "masked" and first["fingerprint"].startswith("sha256:") and first["device"]
    assert provenance["model_fingerprints"]["small"] == first["fingerprint"]
    # without a label a model is shown as before: its resolved path
    plain = assoc.score("fmat", JOBS, [berts[0]], progress=False)
    assert list(plain["model"].unique()) == [resolved]
    assert plain.assoc.provenance["model_names"][0]["label"] is None
    assert plain["value"].equals(table[table["model"] == "small"]["value"].reset_index(drop=True))


def test_renaming_a_label_recomputes_nothing(berts):
    assoc.score("fmat", JOBS, [f"a={berts[0]}"], progress=False)
    renamed = assoc.score("fmat", JOBS, [f"b={berts[0]}"], progress=False)
    assert renamed.assoc.provenance["executor"]["units_from_cache"] == 1
    assert list(renamed["model"].unique()) == ["b"]


def test_raters_in_icc_and_plots_are_the_labels(berts):
    pytest.importorskip("matplotlib")
    from assoc.plotting import model_agreement, plot_model_agreement

    table = assoc.score("fmat", JOBS, [f"small={berts[0]}", f"other={berts[1]}"], progress=False)
    result = assoc.analyze("icc", table)
    assert result.assoc.provenance["input"]["models"] == ["small", "other"]
    assert "small, other" in " ".join(str(result.assoc.summary()).split())
    assert sorted(model_agreement(table).columns) == ["other", "small"]
    figure = plot_model_agreement(table)
    shown = {label.get_text() for axis in figure.axes for label in axis.get_xticklabels() + axis.get_yticklabels()}
    assert {"small", "other"} <= shown


def test_labels_work_for_a_scorer_outside_the_language_model_layer():
    table = assoc.score("weat", "caliskan:weat1", ["glove=glove-6b-50d"], progress=False)
    assert list(table["model"].unique()) == ["glove"]
    record = table.assoc.provenance["model_names"][0]
    assert record["label"] == "glove" and record["spec"] == "glove-6b-50d" and record["path"] is None


def test_one_label_for_two_models_or_two_labels_for_one_are_refused(berts):
    with pytest.raises(OptionError, match="label 'x' names two models"):
        assoc.score("fmat", JOBS, [f"x={berts[0]}", f"x={berts[1]}"], progress=False)
    with pytest.raises(OptionError, match="is listed twice"):
        assoc.score("fmat", JOBS, [f"x={berts[0]}", f"y={berts[0]}"], progress=False)


def test_compare_on_the_command_line_takes_scorer_label_spec(berts, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from assoc.cli import build_cli
    from assoc.table.files import read_table

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.json").write_text(json.dumps(JOBS))
    command = ["compare", "-s", "fmat", "-s", "pll", "-i", "s.json", "--no-progress", "--out", "t.csv"]
    command += ["-m", f"fmat=tiny={berts[0]}", "-m", f"pll=tiny={berts[0]}"]
    result = CliRunner().invoke(build_cli(), command, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    table = read_table(tmp_path / "t.csv")
    assert set(table["model"]) == {"tiny"} and set(table["scorer"]) == {"fmat", "pll"}
    runs = table.assoc.provenance["runs"]
    assert [run["model_names"][0]["label"] for run in runs] == ["tiny", "tiny"]


def test_a_model_whose_kind_does_not_serve_the_scorers_requests_is_refused_before_any_work(tiny, inline_plugin):
    from assoc.lm import MODEL_OPTIONS, LMScorer

    class Replies(LMScorer):
        """Sends generate requests, and says it takes masked LMs: which serve no generate request."""

        name = "replies"
        description = "test scorer"
        citation = "none"
        measure = "m"
        needs_queries = True
        requests = frozenset({"generate"})
        model_kinds = ("masked",)
        options = MODEL_OPTIONS

    inline_plugin("replies", Replies)
    with pytest.raises(RequestKindError, match=r"is a masked model, which cannot serve generate"):
        assoc.score("replies", STIMULI, [tiny["bert"]], cache=False, progress=False)
    Replies.model_kinds = None  # every registered kind that serves generate: the chat kind
    with pytest.raises(
        ModelError, match=r"is a masked model \(config.json: BertForMaskedLM\); scorer 'replies' takes chat"
    ):
        assoc.score("replies", STIMULI, [tiny["bert"]], cache=False, progress=False)


def test_a_choice_request_carries_its_sample_and_how_a_reply_is_read():
    """``sample``, ``matching`` and ``fallback_texts`` survive a payload; the chat kind reads a reply in that mode."""
    from assoc.lm import Reply, read_choice
    from assoc.lm.requests import as_record, from_record

    options = (("The grandfather",), ("The grandson",), ("Unknown", "not known"))
    asked = ChoiceRequest("p", options, labels=("A", "B", "C"), sample=2, matching="authors",
                          fallback_texts=("grandfather", "grandson", "Unknown"))  # fmt: skip
    assert from_record(ChoiceRequest, json.loads(json.dumps(as_record(asked)))) == asked
    for bad, message in (({"matching": "mine"}, "matching"), ({"fallback_texts": ("a",)}, "fallback texts"),
                         ({"sample": -1}, "sample")):  # fmt: skip
        with pytest.raises(ValueError, match=message):
            ChoiceRequest("p", options, **bad)
    # "the grandson is" matches no option exactly: the authors' two-word fallback finds "grandson" (one word: none),
    # so no option; assoc's reading finds the option's text in it
    reply = Reply("It was the grandson, I think.", raw={"choices": []})
    assert read_choice(asked, reply).index is None
    assert read_choice(ChoiceRequest("p", options, labels=("A", "B", "C")), reply).index == 1
    exact = Reply("the grandson.", raw={"choices": []})
    assert read_choice(asked, exact).index == 1 and read_choice(asked, exact).reason == "exact"

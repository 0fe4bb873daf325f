"""PLL scoring against a by-hand loop: one forward pass per masked copy, masks placed
from the tokens' own word-start markers (##, Ġ, ▁), not from the code under test."""

from __future__ import annotations

import math
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from assoc_pll.scorer import PLLScorer, filled_sentence  # noqa: E402

from assoc.errors import ModelError, StimuliError  # noqa: E402
from assoc.executors.driver import run_scorer  # noqa: E402
from assoc.lm import pseudo_log_likelihoods as score_sentences  # noqa: E402
from assoc.stimuli import Design, Stimuli  # noqa: E402
from assoc.testing import tiny_mlm  # noqa: E402

FAMILIES = ("bert", "roberta", "albert")
BUILDERS = {
    "bert": tiny_mlm.build_bert_wordpiece,
    "roberta": tiny_mlm.build_roberta_bpe,
    "albert": tiny_mlm.build_albert_sentencepiece,
}
TOL = 1e-5


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    torch.set_num_threads(1)  # tiny models: threads only add overhead (and spin under load)
    root = tmp_path_factory.mktemp("pll_models")
    return {family: str(BUILDERS[family](root / family)) for family in FAMILIES}


@pytest.fixture(scope="module")
def lms(model_dirs):
    from assoc.lm.masked import load_masked_lm

    loaded = {family: load_masked_lm(path) for family, path in model_dirs.items()}
    yield loaded
    for lm in loaded.values():
        lm.close()


# -- the independent reference ------------------------------------------------------------------


def starts_word(family: str, token: str, index_in_content: int) -> bool:
    """Word starts as each tokenizer family marks them (valid for sentences without punctuation)."""
    if family == "bert":
        return not token.startswith("##")
    if family == "roberta":
        return index_in_content == 0 or token.startswith("Ġ")
    return token.startswith("▁")


def hand_masks(family: str, tokens: list[str], metric: str, scored: list[int]) -> list[tuple[int, list[int]]]:
    """(scored position, positions to mask) for each scored token."""
    content = list(range(1, len(tokens) - 1))  # all three families: one special token at each end
    out = []
    for position in scored:
        masked = [position]
        if metric == "word_l2r":
            later = position + 1
            while later in content and not starts_word(family, tokens[later], content.index(later)):
                masked.append(later)
                later += 1
        out.append((position, masked))
    return out


def hand_log_probs(lm, ids: list[int], plan: list[tuple[int, list[int]]]) -> list[float]:
    """One unbatched forward pass per masked copy; float64 log-softmax over the full vocabulary."""
    values = []
    with torch.no_grad():
        for position, masked in plan:
            copy = list(ids)
            for m in masked:
                copy[m] = lm.tokenizer.mask_token_id
            logits = lm.model(input_ids=torch.tensor([copy])).logits[0, position]
            values.append(float(torch.log_softmax(logits.double(), dim=-1)[ids[position]]))
    return values


def variant_token_positions(lm, tokens: list[str], variant: str) -> list[int]:
    """Where the variant's own tokenisation (after a preceding word) occurs in ``tokens``."""
    prefix = lm.tokenizer.tokenize("a")
    pieces = lm.tokenizer.tokenize("a " + variant)[len(prefix) :]
    for start in range(len(tokens) - len(pieces) + 1):
        if tokens[start : start + len(pieces)] == pieces:
            return list(range(start, start + len(pieces)))
    raise AssertionError(f"{pieces} not found in {tokens}")


SENTENCES = ["the crewmember is a firewoman from utah", "she works as a nurse", "most people like music"]


# -- tests ----------------------------------------------------------------------------------------


def test_bert_vocabulary_splits_words_into_pieces(lms):
    # Guards the tests below: the masking cases need real multi-piece words.
    tokens = lms["bert"].tokenizer.tokenize("crewmember")
    assert tokens == ["crew", "##me", "##mber"]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("metric", ["original", "word_l2r"])
def test_pll_matches_one_forward_pass_per_masked_copy(lms, family, metric):
    lm = lms[family]
    # a small token budget forces several batches with padding
    results = score_sentences(lm, SENTENCES, metric=metric, batch_tokens=40)
    for sentence, result in zip(SENTENCES, results):
        ids = lm.tokenizer(sentence)["input_ids"]
        tokens = lm.tokenizer.convert_ids_to_tokens(ids)
        scored = list(range(1, len(ids) - 1))
        expected = hand_log_probs(lm, ids, hand_masks(family, tokens, metric, scored))
        assert result.n_scored == result.n_tokens == len(scored)
        assert [t.position for t in result.token_log_probs] == scored
        for got, want in zip(result.token_log_probs, expected):
            assert got.log_prob == pytest.approx(want, abs=TOL)
        assert result.pll == pytest.approx(math.fsum(expected), abs=TOL * len(scored))
        assert result.mean == pytest.approx(math.fsum(expected) / len(scored), abs=TOL)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.slow
def test_pll_on_onnx_runtime_matches_one_forward_pass_per_masked_copy(model_dirs, family, tmp_path):
    # backend="onnx" (assoc.lm.masked.onnx): the same engine batches on ONNX Runtime, against the same by-hand loop
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from assoc.infra.cache import Cache
    from assoc.lm.masked import load_masked_lm

    lm = load_masked_lm(model_dirs[family], backend="onnx", memo=Cache(tmp_path / "cache"))
    try:
        results = score_sentences(lm, SENTENCES, metric="word_l2r", batch_tokens=40)
        for sentence, result in zip(SENTENCES, results):
            ids = lm.tokenizer(sentence)["input_ids"]
            tokens = lm.tokenizer.convert_ids_to_tokens(ids)
            scored = list(range(1, len(ids) - 1))
            expected = hand_log_probs(lm, ids, hand_masks(family, tokens, "word_l2r", scored))
            for got, want in zip(result.token_log_probs, expected):
                assert got.log_prob == pytest.approx(want, abs=TOL)
    finally:
        lm.close()


def test_pll_scorer_records_the_backend_and_caches_it_apart(model_dirs, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    import assoc
    from assoc.lm.masked import onnx

    design = Design("d", queries=("{TARGET} is a [MASK].",), mask={"job": ("nurse", "doctor")}, target={"t": ("she",)})
    stimuli = Stimuli([design])
    cache_dir = str(tmp_path / "results")
    torch_table = assoc.score("pll", stimuli, [model_dirs["bert"]], cache_dir=cache_dir, progress=False)
    runs = []
    original = onnx.OnnxForward.log_softmax
    monkeypatch.setattr(onnx.OnnxForward, "log_softmax", lambda self, *a: runs.append(1) or original(self, *a))
    onnx_table = assoc.score("pll", stimuli, [model_dirs["bert"]], backend="onnx", cache_dir=cache_dir, progress=False)
    assert runs  # computed on ONNX Runtime, not read back from the PyTorch results in the same cache
    assert onnx_table.assoc.provenance["options"]["backend"] == "onnx"
    assert torch_table.assoc.provenance["options"]["backend"] == "torch"
    assert len(onnx_table) == len(torch_table) == 2


def test_word_l2r_masks_later_pieces_of_a_three_piece_word(lms):
    lm = lms["bert"]
    sentence = "the crewmember is here"
    ids = lm.tokenizer(sentence)["input_ids"]
    tokens = lm.tokenizer.convert_ids_to_tokens(ids)
    crew = tokens.index("crew")
    assert tokens[crew : crew + 3] == ["crew", "##me", "##mber"]
    plan = [(crew, [crew, crew + 1, crew + 2]), (crew + 1, [crew + 1, crew + 2]), (crew + 2, [crew + 2])]
    expected = hand_log_probs(lm, ids, plan)
    l2r = {t.position: t.log_prob for t in score_sentences(lm, [sentence], metric="word_l2r")[0].token_log_probs}
    original = {t.position: t.log_prob for t in score_sentences(lm, [sentence])[0].token_log_probs}
    for (position, _), want in zip(plan, expected):
        assert l2r[position] == pytest.approx(want, abs=TOL)
    # the first two pieces differ from the one-token-at-a-time metric; the last piece cannot
    assert abs(l2r[crew] - original[crew]) > 1e-4
    assert l2r[crew + 2] == pytest.approx(original[crew + 2], abs=TOL)


@pytest.mark.parametrize("family", FAMILIES)
def test_word_l2r_with_the_variant_excluded(lms, family):
    # word_l2r and tokens_scored=context/variant together: the context holds a multi-piece word
    # (crew ##me ##mber in BERT) and the variant is multi-piece too; the variant's tokens stay
    # visible while context tokens are scored, and are scored word_l2r with tokens_scored=variant.
    lm = lms[family]
    sentence, span = filled_sentence("the crewmember is a [MASK] from utah", "firewoman")
    ids = lm.tokenizer(sentence)["input_ids"]
    tokens = lm.tokenizer.convert_ids_to_tokens(ids)
    own = variant_token_positions(lm, tokens, "firewoman")
    context = [p for p in range(1, len(ids) - 1) if p not in own]
    for which, positions in (("context", context), ("variant", own)):
        plan = hand_masks(family, tokens, "word_l2r", positions)
        if which == "context":  # the reference never masks a variant token
            assert all(not set(masked) & set(own) for _, masked in plan)
        expected = hand_log_probs(lm, ids, plan)
        result = score_sentences(lm, [sentence], [span], metric="word_l2r", tokens_scored=which, batch_tokens=64)[0]
        assert [t.position for t in result.token_log_probs] == positions
        assert [t.log_prob for t in result.token_log_probs] == pytest.approx(expected, abs=TOL)
        assert result.pll == pytest.approx(math.fsum(expected), abs=TOL * len(positions))
    if family == "bert":  # the masks really span three pieces, in the context and in the variant
        crew = tokens.index("crew")
        assert tokens[crew : crew + 3] == ["crew", "##me", "##mber"]
        assert dict(hand_masks(family, tokens, "word_l2r", context))[crew] == [crew, crew + 1, crew + 2]
        assert len(own) >= 2


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("variant", ["firewoman", "crew member"])
def test_context_tokens_exclude_the_variant(lms, family, variant):
    lm = lms[family]
    sentence, span = filled_sentence("emily is a [MASK] from utah", variant)
    ids = lm.tokenizer(sentence)["input_ids"]
    tokens = lm.tokenizer.convert_ids_to_tokens(ids)
    own = variant_token_positions(lm, tokens, variant)
    context = [p for p in range(1, len(ids) - 1) if p not in own]
    for which, positions in (("context", context), ("variant", own)):
        result = score_sentences(lm, [sentence], [span], tokens_scored=which)[0]
        expected = hand_log_probs(lm, ids, [(p, [p]) for p in positions])
        assert [t.position for t in result.token_log_probs] == positions
        assert result.pll == pytest.approx(math.fsum(expected), abs=TOL * len(positions))
        assert result.n_tokens == len(ids) - 2
    # context and variant partition the full sentence
    full = score_sentences(lm, [sentence], [span], tokens_scored="all")[0].pll
    parts = sum(score_sentences(lm, [sentence], [span], tokens_scored=w)[0].pll for w in ("context", "variant"))
    assert full == pytest.approx(parts, abs=1e-6)


def test_scorer_rows_trace_variant_fillers_and_sentence(lms, model_dirs):
    lm = lms["bert"]
    design = Design(
        name="fire",
        queries=("{TARGET} is a [MASK] from {ATTRIB}.",),
        mask={"FEM": ("firewoman",), "NEUT": ("crew member",)},
        target={"female": ("Emily",), "male": ("John",)},
        attribute={"state": ("Utah", "New York")},
    )
    scorer = PLLScorer(tokens_scored="context", metric="word_l2r", per_token=True)
    table = run_scorer(scorer, Stimuli([design]), [model_dirs["bert"]])[0]
    assert len(table) == 2 * 2 * 2
    assert set(table["measure"]) == {"pll"} and set(table["tokens_scored"]) == {"context"}
    row = table[(table["target"] == "John") & (table["attribute"] == "New York") & (table["mask"] == "crew member")]
    assert len(row) == 1
    row = row.iloc[0]
    assert row["sentence"] == "John is a crew member from New York."
    assert (row["context"], row["design"], row["target_group"], row["attribute_group"], row["mask_group"]) == (
        "{TARGET} is a [MASK] from {ATTRIB}.",
        "fire",
        "male",
        "state",
        "NEUT",
    )
    ids = lm.tokenizer(row["sentence"])["input_ids"]
    tokens = lm.tokenizer.convert_ids_to_tokens(ids)
    own = variant_token_positions(lm, tokens, "crew member")
    context = [p for p in range(1, len(ids) - 1) if p not in own]
    # word_l2r on context tokens of this sentence: every context word here is a single piece
    assert all(not tokens[p + 1].startswith("##") for p in context)
    expected = math.fsum(hand_log_probs(lm, ids, [(p, [p]) for p in context]))
    assert row["value"] == pytest.approx(expected, abs=1e-4)
    assert row["pll_sum"] == row["value"] and row["n_scored"] == len(context)
    assert row["pll_mean"] == pytest.approx(expected / len(context), abs=1e-5)
    import json

    assert [p for p, _, _ in json.loads(row["token_log_probs"])] == context


def test_mean_reduction_is_sum_over_scored_tokens(model_dirs):
    design = Design(name="d", queries=("she works as a [MASK]",), mask={"job": ("nurse", "pilot")})
    summed = run_scorer(PLLScorer(), Stimuli([design]), [model_dirs["roberta"]])[0]
    mean = run_scorer(PLLScorer(reduction="mean"), Stimuli([design]), [model_dirs["roberta"]])[0]
    assert list(mean["value"]) == pytest.approx(list(summed["value"] / summed["n_scored"]))


def test_empty_and_too_long_sentences_are_clear_errors(lms):
    lm = lms["bert"]
    with pytest.raises(StimuliError, match="empty sentence"):
        score_sentences(lm, ["  "])
    long_sentence = " ".join(["music"] * (lm.max_length + 5))
    # the sentence named (shortened), its length with special tokens, the model and its limit
    with pytest.raises(StimuliError, match=rf"^'music music .+ has {lm.max_length + 7} tokens, more than model .+ "):
        score_sentences(lm, ["she works as a nurse", long_sentence])


def test_context_needs_a_variant_span_and_other_tokens(lms):
    lm = lms["bert"]
    with pytest.raises(StimuliError, match="variant"):
        score_sentences(lm, ["she works as a nurse"], tokens_scored="context")
    with pytest.raises(StimuliError, match="no context tokens"):
        score_sentences(lm, ["nurse"], [(0, 5)], tokens_scored="context")


def test_slow_tokenizer_is_rejected(lms):
    from assoc.lm.masked.pll import encode_sentence

    class PythonTokenizer:  # stands in for a slow (pure-Python) tokenizer: no offsets, no word ids
        is_fast = False

        def __call__(self, *args, **kwargs):
            raise AssertionError("a slow tokenizer must be refused before it is used")

    with pytest.raises(ModelError, match="fast"):
        encode_sentence(PythonTokenizer(), "she works as a nurse")
    assert encode_sentence(lms["albert"].tokenizer, "she works as a nurse").n_tokens > 0


def test_cache_resumes_an_interrupted_run(lms, tmp_path, monkeypatch):
    import assoc.lm.masked.pll as pll_module
    from assoc.infra.cache import ResultCache

    lm = lms["roberta"]
    expected = [r.pll for r in score_sentences(lm, SENTENCES)]
    cache = ResultCache(tmp_path / "resume")
    real = lm.log_probs
    calls = []

    def interrupted(requests, **kwargs):
        calls.append(len(requests))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(requests, **kwargs)

    monkeypatch.setattr(pll_module, "CHUNK", 5)
    monkeypatch.setattr(lm, "log_probs", interrupted)
    with pytest.raises(KeyboardInterrupt):
        score_sentences(lm, SENTENCES, cache=cache)
    n_copies = sum(len(lm.tokenizer(s)["input_ids"]) - 2 for s in SENTENCES)
    calls.clear()
    monkeypatch.setattr(lm, "log_probs", lambda requests, **kw: (calls.append(len(requests)), real(requests, **kw))[1])
    resumed = [r.pll for r in score_sentences(lm, SENTENCES, cache=cache)]
    assert sum(calls) == n_copies - 5  # the first chunk came from the cache
    assert resumed == pytest.approx(expected, abs=1e-5)  # batches differ: float32 noise only
    calls.clear()
    again = [r.pll for r in score_sentences(lm, SENTENCES, cache=cache)]
    assert calls == [] and again == resumed


def score_recording_batches(lm, sentence, budget, monkeypatch):
    """Score ``sentence``; return its result and the (rows, length) shape of every forward batch."""
    shapes = []
    forward = lm.model.forward

    def recording(*args, **kwargs):
        shapes.append(tuple(kwargs["input_ids"].shape))
        return forward(*args, **kwargs)

    monkeypatch.setattr(lm.model, "forward", recording)
    try:
        return score_sentences(lm, [sentence], batch_tokens=budget)[0], shapes
    finally:
        monkeypatch.undo()


def test_long_input_runs_in_batches_under_the_token_budget(lms, monkeypatch):
    lm = lms["bert"]
    sentence = " ".join(["she works as a nurse"] * 24)  # 120 tokens + 2 special
    ids = lm.tokenizer(sentence)["input_ids"]
    assert len(ids) > 100
    result, shapes = score_recording_batches(lm, sentence, 256, monkeypatch)
    assert shapes and all(rows * length <= 256 for rows, length in shapes)
    assert sum(rows for rows, _ in shapes) == len(ids) - 2
    probe = [1, len(ids) // 2, len(ids) - 2]
    expected = hand_log_probs(lm, ids, [(p, [p]) for p in probe])
    got = {t.position: t.log_prob for t in result.token_log_probs}
    assert [got[p] for p in probe] == pytest.approx(expected, abs=TOL)


@pytest.mark.slow
def test_input_of_512_tokens_runs_under_a_small_budget(tmp_path, monkeypatch):
    # The memory requirement: a 512-token input (BERT's maximum) runs in bounded
    # batches. A one-layer BERT with 512 positions keeps it fast; the mechanics are the same.
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    from assoc.lm.masked import load_masked_lm

    tokenizer = BertTokenizer(vocab=str(tiny_mlm.bert_uncased_vocab_file()), do_lower_case=True, model_max_length=512)
    torch.manual_seed(0)
    model = BertForMaskedLM(
        BertConfig(
            vocab_size=len(tokenizer),
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=512,
        )
    )
    model.save_pretrained(tmp_path / "bert512")
    tokenizer.save_pretrained(tmp_path / "bert512")
    sentence = " ".join(["she works as a nurse"] * 102)  # 510 tokens + [CLS] + [SEP]
    with load_masked_lm(str(tmp_path / "bert512")) as lm:
        assert lm.max_length == 512
        ids = lm.tokenizer(sentence)["input_ids"]
        assert len(ids) == 512
        result, shapes = score_recording_batches(lm, sentence, 2048, monkeypatch)
        assert result.n_scored == 510
        assert shapes and all(rows * length <= 2048 for rows, length in shapes)
        assert sum(rows for rows, _ in shapes) >= 510  # every masked copy ran (the engine may probe extra rows)
        probe = [1, 255, 510]
        expected = hand_log_probs(lm, ids, [(p, [p]) for p in probe])
        got = {t.position: t.log_prob for t in result.token_log_probs}
        assert [got[p] for p in probe] == pytest.approx(expected, abs=TOL)
        with pytest.raises(StimuliError, match="513 tokens") as caught:
            score_sentences(lm, [sentence + " now"])
        # the message stays short: the start of the sentence and its length, not 2,500 characters
        assert len(str(caught.value)) < 250 and "(2145 characters)" in str(caught.value)

"""The masked-LM engine's ONNX Runtime backends (assoc.lm.masked.onnx) against the model's own forward pass by hand.

The reference in every test is computed here with transformers directly: one unpadded forward
pass per sentence, the float64 log-softmax of the logits at the position. The ONNX backends must
give the same numbers within 1e-5 (float32), or visibly different ones (int8), and refuse what
they cannot run with one line before any work starts.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

import assoc  # noqa: E402
from assoc.errors import ModelError, OptionError  # noqa: E402
from assoc.infra.cache import CacheWarning  # noqa: E402
from assoc.lm.masked import MaskRequest, load_masked_lm, release_masked_lms  # noqa: E402
from assoc.stimuli import Design, Stimuli  # noqa: E402

FAMILIES = ["bert", "roberta", "albert"]
SENTENCES = [
    "The [MASK] works as a nurse.",
    "[MASK] is a doctor.",
    "Most people [MASK] music and poetry a lot, and they say so at every opportunity they get.",
    "I [MASK] it.",
]


def by_hand(model, tokenizer, text: str) -> tuple[tuple[int, ...], int, np.ndarray]:
    """(input ids, mask position, float64 log-softmax at the mask) by one unpadded forward pass."""
    import torch

    enc = tokenizer(text.replace("[MASK]", tokenizer.mask_token), return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits[0].double().numpy()
    position = int((enc["input_ids"][0] == tokenizer.mask_token_id).nonzero()[0, 0])
    row = logits[position]
    top = row.max()
    return tuple(enc["input_ids"][0].tolist()), position, row - (top + np.log(np.exp(row - top).sum()))


@pytest.fixture
def cache_root(tmp_path):
    from assoc.infra.cache import Cache

    return Cache(tmp_path / "cache")


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.slow
def test_float32_backend_equals_the_models_own_forward_pass(tiny_models, family, cache_root):
    lm = load_masked_lm(tiny_models[family], backend="onnx", memo=cache_root)
    expected, requests = [], []
    for text in SENTENCES:
        ids, position, row = by_hand(lm.model, lm.tokenizer, text)
        requests.append(MaskRequest(ids, position, None))  # the whole vocabulary
        expected.append(row)
    # a small budget: several batches, and rows of different lengths padded together
    got = lm.log_probs(requests, batch_tokens=48)
    worst = max(float(np.max(np.abs(g - e))) for g, e in zip(got, expected, strict=True))
    assert worst < 1e-5
    assert lm.backend == "onnx" and lm.info()["backend"] == "onnx"
    # the export is where docs/onnx.md says, keyed by the weights' fingerprint
    files = list((cache_root.root / "models" / "onnx").glob("*/model.onnx"))
    assert len(files) == 1
    key = json.loads((files[0].parent / "key.json").read_text())
    assert key["fingerprint"] == lm.fingerprint and key["int8"] is False
    lm.close()


@pytest.mark.slow
def test_the_forward_passes_run_on_onnx_runtime(tiny_models, cache_root, monkeypatch):
    # The numbers above could also come from PyTorch: count the session's runs and PyTorch's batches.
    from assoc.lm.masked import engine, onnx

    runs, torch_batches = [], []
    original_run, original_forward = onnx.OnnxForward.log_softmax, engine.MaskedLM._forward

    def counted_run(self, *args, **kwargs):
        runs.append(1)
        return original_run(self, *args, **kwargs)

    def counted_forward(self, *args, **kwargs):
        torch_batches.append(kwargs.get("shortcut"))
        return original_forward(self, *args, **kwargs)

    monkeypatch.setattr(onnx.OnnxForward, "log_softmax", counted_run)
    monkeypatch.setattr(engine.MaskedLM, "_forward", counted_forward)
    lm = load_masked_lm(tiny_models["bert"], backend="onnx", memo=cache_root)
    requests = [MaskRequest(*by_hand(lm.model, lm.tokenizer, text)[:2], (1000, 2000)) for text in SENTENCES * 5]
    lm.log_probs(requests, batch_tokens=32)
    lm.log_probs(requests, batch_tokens=32)
    assert len(runs) >= 4  # every batch of both calls, plus the probe check
    # PyTorch ran only the references of the two checks (probe texts, first batch), never a batch's fast path
    assert torch_batches and all(shortcut is False for shortcut in torch_batches)
    lm.close()


@pytest.mark.slow
def test_export_is_reused_across_loads_and_its_check_remembered(tiny_models, cache_root, monkeypatch):
    from assoc.lm.masked import onnx

    exports, checks = [], []
    original_export, original_check = onnx.export_model, onnx.check_export
    monkeypatch.setattr(onnx, "export_model", lambda *a: exports.append(1) or original_export(*a))
    monkeypatch.setattr(onnx, "check_export", lambda *a: checks.append(1) or original_check(*a))
    for _ in range(2):
        lm = load_masked_lm(tiny_models["bert"], backend="onnx", memo=cache_root)  # a new weights object each time
        lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5, 6))])
        lm.close()
    assert exports == [1]  # exported once, read from the cache the second time
    assert checks == [1]  # the passed probe check is remembered for this file's content
    # the content decides, never the time: a new modification time alone changes nothing ...
    (path,) = (cache_root.root / "models" / "onnx").glob("*/model.onnx")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000_000))
    lm = load_masked_lm(tiny_models["bert"], backend="onnx", memo=cache_root)
    lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5, 6))])
    lm.close()
    assert exports == [1] and checks == [1]
    # ... and a file whose content changed (here its last bytes, same size and time) is made again
    stat, data = path.stat(), bytearray(path.read_bytes())
    data[-64:] = bytes(64)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    lm = load_masked_lm(tiny_models["bert"], backend="onnx", memo=cache_root)
    with pytest.warns(CacheWarning, match="no longer holds the content recorded"):
        lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5, 6))])
    lm.close()
    # exported again; the new file holds the very bytes that passed the check, which is remembered by content
    assert exports == [1, 1] and checks == [1]


@pytest.mark.slow
def test_an_export_that_computes_something_else_is_refused(tiny_models, cache_root, monkeypatch):
    import copy

    import torch

    from assoc.lm.masked import onnx

    original = onnx.export_model

    def perturbed(lm, model, path):
        twin = copy.deepcopy(model)
        with torch.no_grad():
            twin.get_output_embeddings().weight.mul_(1.001)  # a small change: far above 1e-5 in log P
        original(lm, twin, path)

    monkeypatch.setattr(onnx, "export_model", perturbed)
    for backend in ("onnx", "onnx-int8"):  # int8 is quantised from the checked float32 export only
        lm = load_masked_lm(tiny_models["bert"], backend=backend, memo=cache_root)
        refused = r"does not reproduce its PyTorch forward pass on probe texts.*backend='torch'"
        with pytest.raises(ModelError, match=refused):
            lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5, 6))])
        lm.close()
        # nothing that failed its check is left for a later run to find
        assert not list((cache_root.root / "models" / "onnx").glob("*/model.onnx"))


@pytest.mark.slow
def test_a_cached_export_that_fails_its_check_is_made_again(tiny_models, cache_root, monkeypatch):
    import copy

    import torch

    from assoc.lm.masked import onnx

    lm = load_masked_lm(tiny_models["bert"], backend="onnx", memo=cache_root)
    lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5, 6))])
    (path,) = (cache_root.root / "models" / "onnx").glob("*/model.onnx")
    # the cached file now holds other weights: what a damaged or stale file would compute
    twin = copy.deepcopy(lm.model)
    with torch.no_grad():
        twin.get_output_embeddings().weight.mul_(1.001)
    onnx.export_model(lm, twin, path)
    lm.close()
    exports = []
    original = onnx.export_model
    monkeypatch.setattr(onnx, "export_model", lambda *a: exports.append(1) or original(*a))
    lm = load_masked_lm(tiny_models["bert"], backend="onnx", memo=cache_root)  # new weights object: new session
    ids, position, expected = by_hand(lm.model, lm.tokenizer, SENTENCES[0])
    [got] = lm.log_probs([MaskRequest(ids, position, None)])
    assert exports == [1]  # the failing file was replaced by a new export
    assert float(np.max(np.abs(got - expected))) < 1e-5
    lm.close()


@pytest.mark.slow
def test_a_first_batch_unlike_pytorch_stops_the_run_and_removes_the_export(tiny_models, cache_root, monkeypatch):
    from assoc.lm.masked import onnx

    lm = load_masked_lm(tiny_models["bert"], backend="onnx", memo=cache_root)
    original = onnx.OnnxForward.log_softmax
    calls = []

    def off_after_the_probe(self, *args):
        calls.append(1)
        values = original(self, *args)
        return values if len(calls) == 1 else values + 1e-3  # the probe check passes, real queries do not

    monkeypatch.setattr(onnx.OnnxForward, "log_softmax", off_after_the_probe)
    with pytest.raises(ModelError, match=r"does not reproduce its PyTorch forward pass on the first batch of queries"):
        lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5, 6))])
    assert not list((cache_root.root / "models" / "onnx").glob("*/model.onnx"))
    assert not onnx._SESSIONS.get(lm.model)
    lm.close()


@pytest.mark.slow
def test_int8_backend_is_close_and_not_equal(tiny_models, cache_root):
    lm = load_masked_lm(tiny_models["bert"], backend="onnx-int8", memo=cache_root)
    cases = [by_hand(lm.model, lm.tokenizer, text) for text in SENTENCES]
    got = lm.log_probs([MaskRequest(ids, position, None) for ids, position, _ in cases])
    deltas = [float(np.max(np.abs(g - row))) for g, (_, _, row) in zip(got, cases, strict=True)]
    assert max(deltas) > 1e-5  # quantisation moves log probabilities: it is not the float32 model
    assert max(deltas) < 1.0
    for g in got:
        assert np.isclose(np.exp(g).sum(), 1.0)  # still a distribution over the vocabulary
    keys = [json.loads(p.read_text()) for p in (cache_root.root / "models" / "onnx").glob("*/key.json")]
    assert sorted(k["int8"] for k in keys) == [False, True]  # the checked float32 export and its int8 copy
    lm.close()


def test_session_threads_follow_torch(tiny_models, cache_root):
    import torch

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        lm = load_masked_lm(tiny_models["bert"], backend="onnx", memo=cache_root)
        lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5, 6))])
        from assoc.lm.masked.onnx import _SESSIONS

        (runner,) = _SESSIONS[lm.model].values()
        assert runner.threads == 1
        assert runner.session.get_session_options().intra_op_num_threads == 1
        # another count: a new session replaces the old one (each holds a copy of the weights)
        torch.set_num_threads(2)
        lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5, 6))])
        (runner,) = _SESSIONS[lm.model].values()
        assert runner.threads == 2 and runner.session.get_session_options().intra_op_num_threads == 2
        lm.close()
    finally:
        torch.set_num_threads(before)


def test_weights_without_a_content_fingerprint_leave_no_export_behind(tiny_models, cache_root, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    lm = load_masked_lm(tiny_models["bert"], backend="onnx", memo=cache_root)
    lm.fingerprint = "hf:someone/some-model"  # a Hub id without a commit: does not identify the weights
    lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5, 6))])
    assert not (cache_root.root / "models" / "onnx").exists()
    assert list((tmp_path / "tmp").iterdir()) == []
    lm.close()


@pytest.mark.slow
def test_disabled_cache_writes_no_export(tiny_models, tmp_path):
    from assoc.infra.cache import Cache

    off = Cache(tmp_path / "off", enabled=False)
    lm = load_masked_lm(tiny_models["bert"], backend="onnx", memo=off)
    lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5, 6))])
    assert not (tmp_path / "off").exists()
    lm.close()


# -- refusals, before any work ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"device": "cuda"}, r"backend 'onnx' runs on the CPU: set device='cpu'"),
        ({"dtype": "float16"}, r"backend 'onnx' runs float32 weights"),
    ],
)
def test_settings_the_backend_cannot_run_are_refused_before_loading(settings, message, monkeypatch):
    from assoc.lm.masked import loading

    monkeypatch.setattr(loading, "load_parts", lambda *a, **k: pytest.fail("loaded a model"))
    with pytest.raises(OptionError, match=message):
        load_masked_lm("no/such-model", backend="onnx", **settings)


def test_auto_is_the_cpu_for_the_onnx_backends():
    """device='auto' (the default) means the CPU for ONNX Runtime, decided without importing torch."""
    from assoc.lm.options import backend_device, check_backend_settings

    check_backend_settings("onnx", device="auto", dtype="float32")  # accepted
    assert backend_device("auto", "onnx") == backend_device("auto", "onnx-int8") == "cpu"
    assert backend_device("auto", "torch") == "auto"  # PyTorch resolves it when the model loads


def test_unknown_backend_and_missing_packages(monkeypatch):
    import importlib.util

    with pytest.raises(OptionError, match=r"must be one of torch, onnx, onnx-int8, got 'tensorrt'"):
        load_masked_lm("no/such-model", backend="tensorrt")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    with pytest.raises(OptionError, match=r"needs onnxruntime: pip install 'assoc\[onnx\]'"):
        load_masked_lm("no/such-model", backend="onnx")


def test_temporary_tokens_are_refused_by_the_engine(tiny_models, cache_root):
    lm = load_masked_lm(tiny_models["bert"], backend="onnx", memo=cache_root)
    word = "crewmember"
    lm.add_temporary_tokens([(word, tuple(lm.tokenizer(word, add_special_tokens=False)["input_ids"]))])
    with pytest.raises(OptionError, match=r"without temporary tokens \(oov='add_tokens'\): use backend='torch'"):
        lm.log_probs([MaskRequest(lm.encode(f"a {lm.mask_token} b"), 2, (5,))])
    lm.close()


def _stimuli() -> Stimuli:
    return Stimuli(
        [
            Design(
                "jobs",
                queries=["The {TARGET} said [MASK] works hard.", "[MASK] is a {TARGET}."],
                target={"job": ["nurse", "doctor", "engineer"]},
                mask={"male": ["he", "man"], "female": ["she", "woman"]},
            )
        ]
    )


def test_fmat_refuses_onnx_with_temporary_tokens_and_in_memory_models(tiny_models, monkeypatch):
    from assoc.lm.masked import loading

    monkeypatch.setattr(loading, "load_parts", lambda *a, **k: pytest.fail("loaded a model"))
    with pytest.raises(OptionError, match=r"oov='add_tokens' needs backend='torch'"):
        assoc.score("fmat", _stimuli(), [tiny_models["bert"]], backend="onnx", oov="add_tokens", progress=False)
    with pytest.raises(OptionError, match=r"backend 'onnx' runs on the CPU"):
        assoc.score("fmat", _stimuli(), [tiny_models["bert"]], backend="onnx", device="cuda", progress=False)
    unknown = r"option 'backend' of scorer 'fmat': must be one of torch, onnx, onnx-int8, got 'onnx16'"
    with pytest.raises(OptionError, match=unknown):
        assoc.score("fmat", _stimuli(), [tiny_models["bert"]], backend="onnx16", progress=False)


def test_fmat_refuses_onnx_for_a_model_in_memory(tiny_models):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    path = tiny_models["bert"]
    pair = (AutoModelForMaskedLM.from_pretrained(path), AutoTokenizer.from_pretrained(path))
    with pytest.raises(OptionError, match=r"applies to models loaded by name or directory.*is in memory"):
        assoc.score("fmat", _stimuli(), [pair], backend="onnx", progress=False)


@pytest.mark.slow
def test_fmat_scores_with_onnx_equal_the_model_by_hand_and_are_cached_apart(tiny_models, tmp_path, monkeypatch):
    from assoc.lm.masked import onnx

    path = tiny_models["bert"]  # the real bert-base-uncased vocabulary: every option is one token
    cache_dir = tmp_path / "results"
    torch_table = assoc.score("fmat", _stimuli(), [path], cache_dir=str(cache_dir), progress=False)
    runs = []
    original = onnx.OnnxForward.log_softmax
    monkeypatch.setattr(onnx.OnnxForward, "log_softmax", lambda self, *a: runs.append(1) or original(self, *a))
    table = assoc.score("fmat", _stimuli(), [path], backend="onnx", cache_dir=str(cache_dir), progress=False)
    assert runs  # not answered from the PyTorch results in the same cache
    assert table.assoc.provenance["options"]["backend"] == "onnx"
    assert torch_table.assoc.provenance["options"]["backend"] == "torch"
    release_masked_lms()
    # by hand: log P(option at the mask) of each row, one unpadded forward pass per sentence
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model, tokenizer = AutoModelForMaskedLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
    worst = 0.0
    for row in table.itertuples():
        ids, _, log_sm = by_hand(model, tokenizer, row.sentence)
        token = tokenizer.convert_tokens_to_ids(row.token)
        worst = max(worst, abs(row.value - log_sm[token]))
    assert len(table) == 2 * 3 * 4 and worst < 1e-5


@pytest.mark.slow
@pytest.mark.docs("docs/onnx.md", "python", section="## Using it with `fmat` and `pll`")
def test_docs_onnx_fmat_example_runs(tmp_path, monkeypatch):
    from pathlib import Path

    from assoc.testing.docs import code_blocks, run_blocks

    monkeypatch.chdir(tmp_path)  # the example builds its tiny model in the working directory
    page = Path(__file__).resolve().parents[3] / "docs" / "onnx.md"
    blocks = code_blocks(page, section="## Using it with `fmat` and `pll`")
    namespace = run_blocks(blocks, name="docs/onnx.md")
    table = namespace["table"]
    assert set(table["target"]) == {"nurse", "engineer"} and len(table) == 4

"""oneDNN linear layers on the CPU (assoc.lm.masked.kernels) and the engine's check of its fast paths."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from assoc.errors import OptionError
from assoc.lm.masked import MaskRequest, engine, kernels, load_masked_lm

torch = pytest.importorskip("torch")
needs_onednn = pytest.mark.skipif(
    not kernels.onednn_wanted("cpu", "float32"), reason="this PyTorch build has no oneDNN linear operator"
)


def _float64_linear(x, weight, bias):
    out = x.double() @ weight.double().T
    return out if bias is None else out + bias.double()


@needs_onednn
@pytest.mark.parametrize("shape", [(7, 48), (3, 5, 48), (48,)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_onednn_linear_equals_a_float64_product(shape, with_bias):
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(*shape, generator=generator)
    weight = torch.randn(80, 48, generator=generator) / 48**0.5
    bias = torch.randn(80, generator=generator) if with_bias else None
    with kernels.onednn_linear():
        got = torch.nn.functional.linear(x, weight, bias)
    assert got.shape == (*shape[:-1], 80) and got.dtype == torch.float32
    assert torch.max(torch.abs(got.double() - _float64_linear(x, weight, bias))).item() < 1e-5


@needs_onednn
def test_onednn_linear_takes_strided_inputs_and_leaves_other_dtypes_to_torch():
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(48, 9, generator=generator).T  # not contiguous
    weight = torch.randn(16, 48, generator=generator)
    torch.manual_seed(1)  # the nn.Linear below draws its weights from the global generator
    with kernels.onednn_linear():
        strided = torch.nn.functional.linear(x, weight)
        as_double = torch.nn.functional.linear(x.double(), weight.double())
        module = torch.nn.Linear(48, 16)
        through_module = module(x)
    assert torch.max(torch.abs(strided.double() - _float64_linear(x, weight, None))).item() < 1e-5
    assert torch.equal(as_double, torch.nn.functional.linear(x.double(), weight.double()))  # float64: torch's own
    expected = _float64_linear(x, module.weight.detach(), module.bias.detach())
    assert torch.max(torch.abs(through_module.detach().double() - expected)).item() < 1e-5


@needs_onednn
def test_the_context_is_per_thread(monkeypatch):
    """Another thread using the same weights meanwhile gets PyTorch's kernels, untouched."""
    calls = []
    real = kernels._mode_class()

    class Counting(real):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is torch.nn.functional.linear:
                calls.append(threading.current_thread().name)
            return super().__torch_function__(func, types, args, kwargs)

    monkeypatch.setattr(kernels, "_MODE_CLASS", Counting)
    generator = torch.Generator().manual_seed(2)
    x, weight = torch.randn(4, 8, generator=generator), torch.randn(3, 8, generator=generator)
    outside = []
    with kernels.onednn_linear():
        worker = threading.Thread(target=lambda: outside.append(torch.nn.functional.linear(x, weight)), name="other")
        worker.start()
        worker.join()
        torch.nn.functional.linear(x, weight)
    assert calls == [threading.current_thread().name]
    assert torch.equal(outside[0], torch.nn.functional.linear(x, weight))


def test_the_setting_is_read_from_the_environment(monkeypatch):
    monkeypatch.delenv("ASSOC_CPU_MATMUL", raising=False)
    assert kernels.cpu_matmul_setting() == "onednn"
    monkeypatch.setenv("ASSOC_CPU_MATMUL", " Torch ")
    assert kernels.cpu_matmul_setting() == "torch"
    assert not kernels.onednn_wanted("cpu", "float32")
    monkeypatch.setenv("ASSOC_CPU_MATMUL", "mkl")
    with pytest.raises(OptionError, match=r"ASSOC_CPU_MATMUL='mkl' is not one of onednn, torch"):
        kernels.cpu_matmul_setting()
    monkeypatch.setenv("ASSOC_CPU_MATMUL", "onednn")
    assert not kernels.onednn_wanted("cuda:0", "float32") and not kernels.onednn_wanted("cpu", "bfloat16")


def _requests_and_expected(lm):
    """Requests of sequences of different lengths and each one's log-softmax from the model alone, in float64."""
    m = lm.mask_token
    texts = [f"{m} is a doctor.", f"The {m} works as a nurse and likes it a lot.", f"{m}.", f"I {m} music."]
    requests, expected = [], []
    for text in texts:
        ids = lm.encode(text)
        pos = ids.index(lm.mask_token_id)
        with torch.no_grad():
            logits = lm.model(input_ids=torch.tensor([ids])).logits[0, pos].double()
        requests.append(MaskRequest(ids, pos, None))
        expected.append(torch.log_softmax(logits, -1).numpy())
    return requests, expected


@pytest.mark.parametrize("family", ["bert", "roberta", "albert"])
@pytest.mark.parametrize("setting", ["onednn", "torch"])
@pytest.mark.slow
def test_engine_values_equal_the_model_run_alone_with_either_kernels(tiny_models, family, setting, monkeypatch):
    monkeypatch.setenv("ASSOC_CPU_MATMUL", setting)
    with load_masked_lm(tiny_models[family]) as lm:
        requests, expected = _requests_and_expected(lm)
        got = lm.log_probs(requests)
        assert lm._onednn is (setting == "onednn" and kernels.onednn_wanted("cpu", "float32"))
        assert lm._shortcut is (family != "albert")  # oneDNN is decided apart from the packed encoder
        assert max(np.max(np.abs(g - e)) for g, e in zip(got, expected, strict=True)) < 1e-5


def _broken_mode(kind):
    real = kernels._mode_class()

    class Broken(real):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = super().__torch_function__(func, types, args, kwargs)
            if func is torch.nn.functional.linear:
                if kind == "raises":
                    raise RuntimeError("no primitive for this shape")
                return out + 1e-3
            return out

    return Broken


@needs_onednn
@pytest.mark.parametrize("kind", ["wrong", "raises"])
@pytest.mark.parametrize("family", ["bert", "albert"])
@pytest.mark.slow
def test_kernels_that_do_not_reproduce_the_model_are_not_used(tiny_models, family, kind, monkeypatch):
    monkeypatch.setattr(kernels, "_MODE_CLASS", _broken_mode(kind))
    with load_masked_lm(tiny_models[family]) as lm:
        requests, expected = _requests_and_expected(lm)
        got = lm.log_probs(requests)
        assert lm._onednn is False
        assert lm._shortcut is (family != "albert")  # the packed encoder alone still passes
        assert max(np.max(np.abs(g - e)) for g, e in zip(got, expected, strict=True)) < 1e-5
        assert engine._FAST_PATHS_VERIFIED[lm.model] == (family != "albert", False)


@needs_onednn
def test_the_decision_is_remembered_and_revisited_when_the_setting_changes(tiny_models, monkeypatch):
    monkeypatch.setenv("ASSOC_CPU_MATMUL", "torch")
    with load_masked_lm(tiny_models["bert"]) as lm:
        requests, _ = _requests_and_expected(lm)
        lm.log_probs(requests)
        assert (lm._shortcut, lm._onednn) == (True, False)
        assert engine._FAST_PATHS_VERIFIED[lm.model] == (True, None)  # oneDNN was not tried
        monkeypatch.setenv("ASSOC_CPU_MATMUL", "onednn")
        forwards = []
        real = engine.MaskedLM._forward

        def spy(self, model, seqs, picks, torch, shortcut=None, onednn=None):
            forwards.append((shortcut, onednn))
            return real(self, model, seqs, picks, torch, shortcut, onednn)

        monkeypatch.setattr(engine.MaskedLM, "_forward", spy)
        lm.log_probs(requests)
        assert (False, False) in forwards  # checked now, against the model's own forward
        assert (lm._shortcut, lm._onednn) == (True, True)
    forwards.clear()
    with load_masked_lm(tiny_models["bert"]) as again:  # new weights: the on-disk memo answers
        again.log_probs(requests)
        assert (again._shortcut, again._onednn) == (True, True)
        assert [f for f in forwards if f != (None, None)] == []

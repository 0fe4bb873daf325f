"""Faults of the model files and settings the masked and causal engines read: one line each, never a traceback.

A sweep of faults (issue 46 item 4) run from the command line found these classes; each test
plants one fault in a copy of a tiny model and checks the one line that names the file and the
problem (before any work where the files alone tell), or that the numbers stay those of the model
the run started with:

* a JSON file of the model or its tokenizer damaged (transformers named no file:
  "Expecting property name enclosed in double quotes: line 1 column 2"), a config.json without a
  model type, a folder without its weights or with a shard missing (said after the job's size line);
* a config.json that lies about the architecture: more layers than the weights hold (loaded
  silently, the missing layer random) or other sizes (a traceback);
* device settings that cannot run: a CUDA device index the machine lacks, a device without the memory;
* a model folder replaced while a run goes on (rows of one model recorded under another's identity).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import assoc
from assoc.errors import ModelError, OptionError

STIMULI = {
    "designs": [
        {
            "name": "jobs",
            "queries": ["[MASK] works as a {TARGET}.", "The [MASK] is a {TARGET}."],
            "mask": {"male": ["he"], "female": ["she"]},
            "target": {"job": ["nurse", "doctor"]},
        }
    ]
}


@pytest.fixture(autouse=True)
def _offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """{"bert": dir, "gpt2": dir, "bert-other": dir}: tiny random models (the last: other seed, same shape)."""
    from assoc.testing.tiny_clm import build_gpt2_bpe
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    root = tmp_path_factory.mktemp("tiny-faults")
    return {
        "bert": str(build_bert_wordpiece(root / "bert")),
        "gpt2": str(build_gpt2_bpe(root / "gpt2")),
        "bert-other": str(build_bert_wordpiece(root / "bert-other", seed=1)),
    }


@pytest.fixture
def no_loading(monkeypatch):
    """Fail the test if any model's weights or tokenizer are loaded (the refusals come before any work)."""
    import assoc.lm.loading as loading

    monkeypatch.setattr(loading, "load_pretrained", lambda *a, **k: pytest.fail("a model was loaded"))


def _copy(source: str, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def _scorer_of(family: str) -> str:
    return "clm" if family == "gpt2" else "fmat"


def _refused(family: str, folder: Path) -> str:
    with pytest.raises(ModelError) as caught:
        assoc.score(_scorer_of(family), STIMULI, [str(folder)], cache=False, progress=False)
    assert "\n" not in str(caught.value)
    return str(caught.value)


@pytest.mark.parametrize("family", ["bert", "gpt2"])
@pytest.mark.parametrize("name", ["tokenizer.json", "tokenizer_config.json", "config.json"])
def test_a_damaged_json_file_is_named_before_any_work(tiny, tmp_path, no_loading, family, name):
    folder = _copy(tiny[family], tmp_path / "m")
    text = (folder / name).read_text(encoding="utf-8")
    (folder / name).write_text(text[: len(text) // 2], encoding="utf-8")  # truncated
    message = _refused(family, folder)
    assert f"model folder {str(folder)!r}: {name} is not valid JSON (" in message and "damaged" in message


@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_a_config_without_a_model_type_and_a_folder_without_weights_are_refused_before_any_work(
    tiny, tmp_path, no_loading, family
):
    folder = _copy(tiny[family], tmp_path / "empty-config")
    (folder / "config.json").write_text("{}", encoding="utf-8")
    assert "its config.json names no model_type or architectures" in _refused(family, folder)
    folder = _copy(tiny[family], tmp_path / "no-weights")
    (folder / "model.safetensors").unlink()
    assert "has no weights file (none of *.safetensors, pytorch_model*.bin)" in _refused(family, folder)
    folder = _copy(tiny[family], tmp_path / "shards")
    (folder / "model.safetensors").rename(folder / "model-00001-of-00002.safetensors")
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    message = _refused(family, folder)
    assert "names 1 shard(s) that are not there (first: model-00002-of-00002.safetensors)" in message


def test_a_config_that_describes_more_layers_than_the_weights_hold_is_refused(tiny, tmp_path):
    """Before: the third layer was filled with random numbers, and transformers only logged a report."""
    folder = _copy(tiny["gpt2"], tmp_path / "three-layers")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["n_layer"] = 3
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    message = _refused("gpt2", folder)
    assert "its config.json describes 12 tensor(s) that model.safetensors does not hold (first: transformer.h.2." in (
        message
    )


@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_a_config_with_other_sizes_than_the_weights_is_one_line(tiny, tmp_path, family):
    """Before: a RuntimeError traceback ("You set `ignore_mismatched_sizes` to `False`")."""
    folder = _copy(tiny[family], tmp_path / "wider")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config.update({"hidden_size": 64, "intermediate_size": 128} if family == "bert" else {"n_embd": 64})
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    message = _refused(family, folder)
    assert "the tensors in model.safetensors have other shapes than its config.json describes" in message


def test_a_cuda_device_the_machine_lacks_is_refused(monkeypatch):
    import torch

    from assoc.lm.identity import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("cuda:0") == "cuda:0" and resolve_device("cuda") == "cuda"
    with pytest.raises(OptionError, match=r"device 'cuda:3' does not exist here: this machine has 1 CUDA device\(s\)"):
        resolve_device("cuda:3")


def test_weights_that_do_not_fit_the_device_are_one_line(tiny, monkeypatch):
    import torch

    from assoc.lm.causal import load_causal_lm

    moved = []

    def no_room(self, *args, **kwargs):
        if args and str(args[0]).startswith("cpu") and moved:
            return self
        moved.append(args)
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(torch.nn.Module, "to", no_room)
    with pytest.raises(ModelError, match=r"in float32 does not fit in the free memory of cpu: use a smaller dtype"):
        load_causal_lm(tiny["gpt2"])


def _values(table) -> list[float]:
    return [float(v) for v in table.sort_values(["context", "target", "mask"])["value"]]


def test_a_folder_replaced_during_a_run_keeps_the_rows_and_provenance_of_the_weights_that_ran(
    tiny, tmp_path, monkeypatch
):
    """Before: the rows came from the weights loaded at the start and provenance named the folder's new weights."""
    from assoc.lm.identity import local_fingerprint
    from assoc.lm.scorer import LMScorer

    folder = _copy(tiny["bert"], tmp_path / "model")
    started = local_fingerprint(folder)
    expected = _values(assoc.score("fmat", STIMULI, [tiny["bert"]], cache=False, progress=False))
    original = LMScorer.run_unit
    done = []

    def replace_after_the_first_unit(self, state, unit):
        rows = original(self, state, unit)
        if not done:
            shutil.rmtree(folder)
            shutil.copytree(tiny["bert-other"], folder)
        done.append(unit.key)
        return rows

    monkeypatch.setattr(LMScorer, "run_unit", replace_after_the_first_unit)
    table = assoc.score("fmat", STIMULI, [str(folder)], unit_size=1, progress=False)
    assert len(done) == 4 and local_fingerprint(folder) != started
    assert _values(table) == pytest.approx(expected, abs=1e-6)
    (record,) = table.assoc.provenance["model_names"]
    assert record["fingerprint"] == started  # the weights that computed the rows, not the folder's new ones


def test_a_folder_replaced_before_its_weights_load_is_refused(tiny, tmp_path, monkeypatch):
    from assoc.lm.scorer import LMScorer

    folder = _copy(tiny["bert"], tmp_path / "model")
    original = LMScorer.plan

    def replace_after_planning(self, stimuli, models):
        units = original(self, stimuli, models)
        self.identify_model(str(folder))  # the identity the run records (the driver asks for it at once)
        shutil.rmtree(folder)
        shutil.copytree(tiny["bert-other"], folder)
        return units

    monkeypatch.setattr(LMScorer, "plan", replace_after_planning)
    with pytest.raises(ModelError, match=r"changed while the run was going: the weights loaded now .* are not those"):
        assoc.score("fmat", STIMULI, [str(folder)], progress=False)


def test_the_faults_on_the_command_line_are_one_error_line(tiny, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from assoc.cli import build_cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.json").write_text(json.dumps(STIMULI), encoding="utf-8")
    folder = _copy(tiny["gpt2"], tmp_path / "garbled")
    (folder / "tokenizer.json").write_text("{not json", encoding="utf-8")
    result = CliRunner().invoke(
        build_cli(), ["score", "-s", "clm", "-i", "s.json", "-m", str(folder), "--out", "t.csv"]
    )
    assert result.exit_code == 2, result.output
    assert "tokenizer.json is not valid JSON" in result.output and "Traceback" not in result.output
    assert "items to do" not in result.output  # before the job's size line


def test_a_too_long_error_keeps_what_names_the_item_through_pickle():
    """A Ray worker's error reaches the driver pickled: the text, its length, the limit and the model survive."""
    import pickle

    from assoc.errors import StimuliError, TooLongError

    error = TooLongError(
        "'a b' has 9 tokens, more than model 'm' accepts (8)", text="a b", n_tokens=9, max_length=8, model="m"
    )
    back = pickle.loads(pickle.dumps(error))
    assert isinstance(back, TooLongError) and isinstance(back, StimuliError) and isinstance(back, ModelError)
    assert (str(back), back.text, back.n_tokens, back.max_length, back.model) == (str(error), "a b", 9, 8, "m")

"""The transformers backend with a tiny chat model built here: a word-level tokenizer with a chat
template and a 2-layer Llama trained for a few seconds to answer listing prompts with
"kind, smart, brave" and rating prompts with "4"."""

from __future__ import annotations

import warnings

import pytest
from assoc_chat_listing.prompts import PAPER_LISTING, PAPER_RATING, PAPER_SYSTEM, fill

import assoc

TERMS = ["nurses", "engineers", "farmers"]
LIST_REPLY = "kind, smart, brave"
RATING_REPLY = "4"
TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def conversations() -> list[str]:
    out = []
    for term in TERMS + ["pilots", "teachers"]:
        for prompt, reply in ((PAPER_LISTING, LIST_REPLY), (PAPER_RATING, RATING_REPLY)):
            out.append(f"<|system|> {PAPER_SYSTEM} <|user|> {fill(prompt, term, 50)} <|assistant|> {reply} <eos>")
    return out


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """A tiny model: more torch threads only contend with each other on a shared machine."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tiny_chat_model(tmp_path_factory):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<unk>", "<eos>", "<|system|>", "<|user|>", "<|assistant|>"]
    raw = Tokenizer(models.WordLevel(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    raw.train_from_iterator(conversations(), trainers.WordLevelTrainer(special_tokens=specials))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        pad_token="<pad>",
        unk_token="<unk>",
        eos_token="<eos>",
        additional_special_tokens=specials[3:],
    )
    tokenizer.chat_template = TEMPLATE
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=256,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
    model = LlamaForCausalLM(config)
    batch = tokenizer(conversations(), return_tensors="pt", padding=True, add_special_tokens=False)
    # learn the replies only: everything up to and including <|assistant|> is context
    labels = batch["input_ids"].clone()
    assistant = tokenizer.convert_tokens_to_ids("<|assistant|>")
    for row in range(labels.shape[0]):
        start = int((batch["input_ids"][row] == assistant).nonzero()[0]) + 1
        labels[row, :start] = -100
    labels = labels.masked_fill(batch["attention_mask"] == 0, -100)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(200):
        loss = model(**batch, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if loss.item() < 0.01:
            break
    model.eval()
    directory = tmp_path_factory.mktemp("tiny-chat")
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def run(model_dir, **options):
    study = {"designs": [{"name": "d", "target": {"jobs": TERMS}}]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return assoc.score(
            "chat_listing",
            study,
            model_dir,
            **{"backend": "transformers", "task": "both", "device": "cpu", "max_tokens": 12, **options},
        )


def test_local_chat_model_lists_and_rates(tiny_chat_model):
    table = run(tiny_chat_model, batch_size=2)  # 3 terms: a full batch and a padded one
    for term in TERMS:
        listed = table[(table["target"] == term) & (table["measure"] == "listed")]
        assert listed["attribute"].tolist() == ["kind", "smart", "brave"]
        rating = table[(table["target"] == term) & (table["measure"] == "rating")]
        assert rating["value"].tolist() == [4.0]
    run_report = table.attrs["assoc"]["run"]
    assert run_report["backend"] == "transformers" and run_report["from_cache"] == 0
    usage = run_report["usage"][tiny_chat_model]
    assert usage["requests"] == 6 and usage["completion_tokens"] >= 6 * 1


def test_batching_does_not_change_greedy_replies(tiny_chat_model, tmp_path):
    one = run(tiny_chat_model, batch_size=1, cache=False)
    four = run(tiny_chat_model, batch_size=4, cache=False)
    cols = ["target", "measure", "attribute", "value"]
    assert one[cols].equals(four[cols])


def test_local_replies_are_cached(tiny_chat_model):
    first = run(tiny_chat_model)
    again = run(tiny_chat_model)
    assert again.attrs["assoc"]["run"]["from_cache"] == 6
    assert first["response_id"].tolist() == again["response_id"].tolist()


def test_missing_local_model_is_a_clear_error(tmp_path):
    from assoc.errors import ModelError

    with pytest.raises(ModelError, match="does not exist"):
        run(str(tmp_path / "nope" / "model"))


def test_threads_reach_the_local_model_and_change_no_reply(tiny_chat_model, monkeypatch):
    """threads= (docs/scale.md) applies to the transformers backend: provenance shows the count, replies stay."""
    import torch

    monkeypatch.delenv("ASSOC_THREADS", raising=False)
    one = run(tiny_chat_model, cache=False, threads=1)
    two = run(tiny_chat_model, cache=False, threads=2)
    assert torch.get_num_threads() == 1  # this module's own setting, restored after the run
    assert [t.attrs["assoc"]["executor"]["threads"]["torch"] for t in (one, two)] == [1, 2]
    cols = ["target", "measure", "attribute", "value"]
    assert one[cols].equals(two[cols])


def _directory_sha256(directory) -> str:
    """The documented fingerprint of a model folder, computed here: sha256 over each file's relative name and bytes."""
    import hashlib
    from pathlib import Path

    digest = hashlib.sha256()
    files = sorted(p for p in Path(directory).rglob("*") if p.is_file())
    for path in files:
        digest.update(str(path.relative_to(directory)).encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


def test_local_replies_keep_their_cache_keys_and_load_through_the_model_cache(tiny_chat_model):
    """The key of a local reply is what it always was (so stored replies are found), and the model comes from the
    process's model cache of causal LMs (the one loader), not a loader of its own."""
    import hashlib
    import json

    from assoc.lm.causal.loading import loaded_causal_lms, release_causal_lms

    release_causal_lms()
    table = run(tiny_chat_model, cache=False)
    assert [key.model for key in loaded_causal_lms()] == [tiny_chat_model]
    row = table[table["measure"] == "rating"].iloc[0]
    parts = {
        "backend": "transformers",
        "endpoint": "transformers:" + _directory_sha256(tiny_chat_model),
        "model": tiny_chat_model,
        "messages": [
            {"role": "system", "content": PAPER_SYSTEM},
            {"role": "user", "content": fill(PAPER_RATING, row["target"], 50)},
        ],
        "params": {"temperature": 0.0, "max_tokens": 12},
        "sample": 0,
    }
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert row["response_id"] == hashlib.sha256(blob.encode()).hexdigest()


def test_the_chat_kind_generates_locally_what_the_scorer_reads(tiny_chat_model):
    from assoc.lm import ChatModel
    from assoc.lm.requests import GenerateRequest

    model = ChatModel.open(tiny_chat_model, {"provider": "transformers", "device": "cpu", "cache": False}, None)
    messages = (
        {"role": "system", "content": PAPER_SYSTEM},
        {"role": "user", "content": fill(PAPER_RATING, "nurses", 50)},
    )
    (reply,) = model.generate([GenerateRequest(messages, {"temperature": 0.0, "max_tokens": 12})])
    assert reply.text == RATING_REPLY and reply.status == "ok"
    assert model.describe()["provider"] == "transformers" and model.describe()["endpoint"] == "local"
    assert model.fingerprint == f"transformers:{_directory_sha256(tiny_chat_model)}"


def test_the_old_spelling_backend_still_chooses_the_provider():
    with pytest.warns(
        DeprecationWarning, match="'backend' of scorer 'chat_listing' is deprecated: it is now called 'provider'"
    ):
        scorer = assoc.get_scorer("chat_listing")(backend="transformers")
    assert scorer.params["provider"] == "transformers"


def test_the_local_model_opens_through_the_one_loader_and_its_device_keys_units_and_provenance(tiny_chat_model):
    """device=auto is resolved once (the CPU here, CUDA on a GPU machine) into provenance and the unit cache's key:
    a run with device=auto and one with the device it resolved to share their units."""
    import torch

    expected = "cuda" if torch.cuda.is_available() else "cpu"
    auto = run(tiny_chat_model, device="auto")
    (record,) = auto.attrs["assoc"]["model_names"]
    assert (record["kind"], record["provider"], record["device"]) == ("chat", "transformers", expected)
    assert record["fingerprint"].startswith("transformers:" + _directory_sha256(tiny_chat_model))
    named = run(tiny_chat_model, device=expected)
    assert named.attrs["assoc"]["executor"]["units_from_cache"] == named.attrs["assoc"]["executor"]["units"] == 1
    assert named.drop(columns=[]).equals(auto)


def test_a_reply_of_another_device_or_dtype_has_another_key(tiny_chat_model):
    """The CPU's float32 replies keep their keys; a GPU's (other kernels, other random numbers) and another dtype's
    are other replies."""
    from assoc.lm.chat.local import model_endpoint

    base = "transformers:" + _directory_sha256(tiny_chat_model)
    assert model_endpoint(tiny_chat_model, device="cpu") == base
    assert model_endpoint(tiny_chat_model, device="cuda:1") == f"{base}:cuda"
    assert model_endpoint(tiny_chat_model, dtype="bfloat16", device="cuda") == f"{base}:bfloat16:cuda"
    assert model_endpoint(tiny_chat_model, dtype="float16", device="cpu") == f"{base}:float16"


def test_the_loaders_checks_refuse_a_local_model_before_any_work(tiny_chat_model, tmp_path):
    """A folder without its tokenizer, or a masked LM, is refused in one line before anything loads."""
    import shutil

    from assoc.errors import ModelError
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    bare = tmp_path / "no-tokenizer"
    shutil.copytree(tiny_chat_model, bare)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (bare / name).unlink(missing_ok=True)
    with pytest.raises(ModelError, match=r"provider=transformers.*no tokenizer vocabulary"):
        run(str(bare))
    bert = build_bert_wordpiece(tmp_path / "bert")
    with pytest.raises(ModelError, match=r"provider=transformers.*is a masked model"):
        run(str(bert))
    with pytest.raises(assoc.errors.OptionError, match="one of 'torch'"):
        run(tiny_chat_model, provider="transformers", backend="onnx")

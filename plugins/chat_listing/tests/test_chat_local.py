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
            backend="transformers",
            task="both",
            device="cpu",
            max_tokens=12,
            **options,
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

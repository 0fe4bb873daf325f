"""Run the Matched Guise Probing authors' ``probing/mgp.py`` (unchanged, from a checkout) on the tests' tiny models.

The authors' code (Hofmann, Kalluri, Jurafsky & King, Nature 2024; MIT) stays in its repository,
github.com/valentinhofmann/dialect-prejudice: it is never part of this one, nor of ``../shared``.
``test_matched_guise.py`` compares assoc with what ``mgp.py`` computed, frozen in
``data/mgp_tiny_roberta.json`` and ``data/mgp_tiny_gpt2.json``; this script made them::

    git clone https://github.com/valentinhofmann/dialect-prejudice
    git -C dialect-prejudice checkout 61e6421c7892bd229f88658b9d1f3f700df75e5e
    python plugins/bias_benchmarks/tests/mgp_oracle.py dialect-prejudice \\
        plugins/bias_benchmarks/tests/data/matched_guise

It builds the two tiny seeded models the tests build (:func:`build_tiny_roberta`,
:func:`build_tiny_gpt2`: every Princeton Trilogy adjective is one token, as the authors'
``helpers.load_attributes`` asserts) and runs ``mgp.py --model roberta-base|gpt2 --variable tiny
--attribute katz --device 0`` on the first :data:`N_PAIRS` pairs of the checkout's
``data/pairs/habitual.txt``. ``mgp.py`` and its helpers run as they are, in a copy of the checkout's
``probing/`` folder; from the outside, ``helpers.load_model``/``load_tokenizer`` load the tiny model
instead of the hub name. The JSON file is ``mgp.py``'s output (the pickle it writes: for each
prompt, each pair's AAE and SAE text with the probability of every attribute token), with the
commit, the command and the SHA-256 of the model's files. Regenerate both after a change to the
tiny models (:mod:`assoc.testing.tiny_mlm`, the builders below) makes the tests say so.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The commit of github.com/valentinhofmann/dialect-prejudice whose mgp.py made the frozen files.
COMMIT = "61e6421c7892bd229f88658b9d1f3f700df75e5e"
#: Pairs of data/pairs/habitual.txt probed (the first ones).
N_PAIRS = 6
#: model kind -> (the hub name mgp.py is given, which selects its code path; the file of its frozen output)
MODELS = {"roberta": ("roberta-base", "mgp_tiny_roberta.json"), "gpt2": ("gpt2", "mgp_tiny_gpt2.json")}


def _corpus(pairs: list[tuple[str, str]]) -> list[str]:
    """What the tiny tokenizers are trained on: every attribute as a word, and the guises in the prompts' frames."""
    from assoc_bias_benchmarks.matched_guise.stimuli import attributes

    from assoc.testing.tiny_mlm import tiny_corpus

    words = attributes("katz")
    lines = [" ".join(f"he is {w} ." for w in words)] * 20
    lines += [f'the person says: " {a} " the person is {w}' for a, s in pairs for w in words[:3]]
    lines += [f'The people say: " {s} " They are' for _, s in pairs]
    return tiny_corpus() + lines


def build_tiny_roberta(directory: Path) -> Path:
    """A tiny seeded RoBERTa whose BPE has every adjective (with its leading space) as one token."""
    from assoc_bias_benchmarks.matched_guise.stimuli import read_pairs

    from assoc.testing.tiny_mlm import build_roberta_bpe

    pairs = read_pairs()[:N_PAIRS]
    return build_roberta_bpe(directory, seed=3, vocab_size=700, corpus=_corpus(pairs), max_length=128)


def build_tiny_gpt2(directory: Path) -> Path:
    """A tiny seeded GPT-2 whose byte-level BPE has every adjective (with its leading space) as one token."""
    import torch
    from assoc_bias_benchmarks.matched_guise.stimuli import read_pairs
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2Tokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        _corpus(read_pairs()[:N_PAIRS]),
        vocab_size=700,
        min_frequency=1,
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    merges = [
        tuple(m.split(" ")) if isinstance(m, str) else tuple(m)
        for m in json.loads(bpe._tokenizer.to_str())["model"]["merges"]
    ]
    tokenizer = GPT2Tokenizer(vocab=bpe.get_vocab(), merges=merges, model_max_length=128)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=128,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(5)
    model = GPT2LMHeadModel(config)
    with torch.no_grad():
        model.transformer.wte.weight.mul_(10.0)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def model_sha256(directory: Path) -> str:
    """SHA-256 over the model folder's files (names and bytes, in name order): which tiny model mgp.py saw."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(directory).iterdir() if p.is_file()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@contextlib.contextmanager
def _inside(probing: Path, argv: list[str]) -> Iterator[None]:
    """Run with ``probing`` as working directory and first on ``sys.path``, ``argv`` as ``sys.argv``; undone after."""
    saved_cwd, saved_argv, saved_path = os.getcwd(), sys.argv, list(sys.path)
    saved_modules = {name: sys.modules.pop(name) for name in ("helpers", "prompting", "mgp") if name in sys.modules}
    os.chdir(probing)
    sys.path.insert(0, str(probing))
    sys.argv = argv
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        sys.argv, sys.path[:] = saved_argv, saved_path
        for name in ("helpers", "prompting", "mgp"):
            sys.modules.pop(name, None)
        sys.modules.update(saved_modules)


def run_mgp(checkout: Path, kind: str, model_dir: Path, workdir: Path) -> dict[str, list[Any]]:
    """Run the checkout's ``probing/mgp.py`` on ``model_dir`` (``kind``: roberta or gpt2); the results it pickles."""
    from transformers import GPT2LMHeadModel, GPT2Tokenizer, RobertaForMaskedLM, RobertaTokenizer

    checkout = Path(checkout)
    if not (checkout / "probing" / "mgp.py").is_file():
        raise SystemExit(f"{checkout}: no probing/mgp.py (a checkout of valentinhofmann/dialect-prejudice?)")
    model_name, _ = MODELS[kind]
    model_cls, tokenizer_cls = {
        "roberta": (RobertaForMaskedLM, RobertaTokenizer),
        "gpt2": (GPT2LMHeadModel, GPT2Tokenizer),
    }[kind]
    shutil.copytree(checkout / "probing", workdir / "probing")
    (workdir / "data" / "attributes").mkdir(parents=True)
    (workdir / "data" / "pairs").mkdir(parents=True)
    shutil.copy(checkout / "data" / "attributes" / "katz.txt", workdir / "data" / "attributes" / "katz.txt")
    lines = (checkout / "data" / "pairs" / "habitual.txt").read_text(encoding="utf-8").strip().split("\n")
    (workdir / "data" / "pairs" / "tiny.txt").write_text("\n".join(lines[:N_PAIRS]), encoding="utf-8")
    argv = ["mgp.py", "--model", model_name, "--variable", "tiny", "--attribute", "katz", "--device", "0"]
    # helpers.py resolves its data paths against the working directory when it is imported
    with _inside(workdir / "probing", argv):
        import helpers  # the authors' module, from the copy of the checkout
        import mgp

        helpers.load_model = lambda name: model_cls.from_pretrained(model_dir)
        helpers.load_tokenizer = lambda name: tokenizer_cls.from_pretrained(model_dir)
        mgp.main()
        with open(Path(helpers.PROBS_PATH) / f"{model_name}_tiny_katz.p", "rb") as f:
            results: dict[str, list[Any]] = pickle.load(f)
    return results


def freeze(results: dict[str, list[Any]], kind: str, model_dir: Path, out: Path) -> None:
    """Write mgp.py's results as JSON: per prompt, each guise's text, class and attribute probabilities."""
    model_name, _ = MODELS[kind]
    attributes = next(iter(results.values()))[0][2]
    frozen = {
        "source": f"github.com/valentinhofmann/dialect-prejudice probing/mgp.py, commit {COMMIT} (MIT)",
        "command": f"mgp.py --model {model_name} --variable tiny --attribute katz --device 0",
        "pairs": f"the first {N_PAIRS} pairs of data/pairs/habitual.txt",
        "model": f"mgp_oracle.build_tiny_{kind}",
        "model_sha256": model_sha256(model_dir),
        "attributes": list(attributes),
        "results": {
            prompt: [
                {"text": text, "class": group, "probs": [float(p) for p in probs]}
                for text, group, names, probs in rows
                if list(names) == list(attributes)
            ]
            for prompt, rows in results.items()
        },
    }
    if any(len(rows) != len(results[prompt]) for prompt, rows in frozen["results"].items()):
        raise SystemExit("mgp.py gave different attribute lists within one run")
    out.write_text(_compact(frozen), encoding="utf-8")


def _compact(frozen: dict[str, Any]) -> str:
    """The JSON text: one line per guise, each probability as the shortest text that reads back as its float32.

    mgp.py's probabilities are float32 values (``.item()`` of a float32 softmax); ``numpy.float32``
    of the written number is the value mgp.py computed, exactly.
    """
    import numpy as np

    head = {key: value for key, value in frozen.items() if key != "results"}
    lines = ["{", *(f" {json.dumps(key)}: {json.dumps(value)}," for key, value in head.items()), ' "results": {']
    prompts = list(frozen["results"].items())
    for p_index, (prompt, rows) in enumerate(prompts):
        lines.append(f"  {json.dumps(prompt)}: [")
        for r_index, row in enumerate(rows):
            probs = ", ".join(np.format_float_positional(np.float32(v), unique=True, trim="-") for v in row["probs"])
            comma = "," if r_index < len(rows) - 1 else ""
            lines.append(
                f'   {{"text": {json.dumps(row["text"])}, "class": "{row["class"]}", "probs": [{probs}]}}{comma}'
            )
        lines.append("  ]" + ("," if p_index < len(prompts) - 1 else ""))
    lines += [" }", "}"]
    text = "\n".join(lines) + "\n"
    back = json.loads(text)["results"]
    for prompt, rows in frozen["results"].items():  # the text reads back as mgp.py's float32 values, exactly
        for row, read in zip(rows, back[prompt]):
            assert np.array_equal(np.float32(row["probs"]), np.float32(read["probs"])), prompt
    return text


def main(checkout: Path, out_dir: Path) -> None:
    """Build both tiny models, run mgp.py on each, write the frozen files into ``out_dir``."""
    builders = {"roberta": build_tiny_roberta, "gpt2": build_tiny_gpt2}
    with tempfile.TemporaryDirectory() as temporary:
        for kind, build in builders.items():
            work = Path(temporary) / kind
            model_dir = build(work / "model")
            results = run_mgp(checkout, kind, model_dir, work)
            target = out_dir / MODELS[kind][1]
            freeze(results, kind, model_dir, target)
            print(f"wrote {target}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))

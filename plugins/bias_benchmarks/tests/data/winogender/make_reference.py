"""Regenerate the frozen output of lm-evaluation-harness 0.4.13's ``winogender`` task functions on the shared files.

The tests need neither this script nor a model: they read the files it writes (and may call lm-eval live). Usage,
from the repository root, with a Python that has ``lm_eval==0.4.13`` (and so ``datasets``) installed::

    python plugins/bias_benchmarks/tests/data/winogender/make_reference.py ../shared/benchmarks/winogender/data

lm-eval reads Winogender from the Hugging Face dataset ``oskarvanderwal/winogender`` (configs ``all`` and
``gotcha``), which cannot be reached here. Its documents are rebuilt from the authors' files (``docs``): one per
line of ``all_sentences.tsv``, with the fields the task's YAML reads. ``sentence`` as written; from the ``sentid``
``<occupation>.<participant>.<answer>.<gender>.txt``: ``occupation``, ``participant`` (the template's participant,
or ``someone``), ``gender``, ``label`` = int(answer) (0: the pronoun refers to the occupation, 1: to the
participant); ``pronoun``: the word the template's one ``$NOM_PRONOUN``/``$POSS_PRONOUN``/``$ACC_PRONOUN`` becomes
for that gender (he/his/him, she/her/her, they/their/them), the template found by (occupation, answer). These
fields are as the dataset's card describes them, not compared with it.

What it does (lm-eval's code is called, never copied or changed):

1. builds lm-eval's ``ConfigurableTask`` for ``winogender_all`` and for ``winogender_female``, ``_male`` and
   ``_neutral`` (whose ``process_docs`` are lm-eval's ``utils.filter_*``) from their installed YAML files, with
   ``custom_dataset`` returning the rebuilt documents as the ``test`` split;
2. per document, the requests lm-eval's evaluator builds (``fewshot_context(doc, 0)``, ``construct_requests``):
   their context and two continuations (``lm_eval_requests.csv.gz``);
3. seeded synthetic log-likelihoods of the two continuations (``synthetic_logliks``), with exact ties on purpose,
   passed to ``process_results``: its ``acc`` per document and each task's mean (the YAML's aggregation), in
   ``lm_eval_results.csv.gz`` and ``lm_eval_accuracy.json``.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

SEED = 44
OUT = Path(__file__).resolve().parent
PRONOUNS = {
    "male": {"NOM": "he", "POSS": "his", "ACC": "him"},
    "female": {"NOM": "she", "POSS": "her", "ACC": "her"},
    "neutral": {"NOM": "they", "POSS": "their", "ACC": "them"},
}
TASKS = ("winogender", "winogender_female", "winogender_male", "winogender_neutral")


def docs(data: Path) -> list[dict]:
    """The documents lm-eval's YAML reads, rebuilt from ``all_sentences.tsv`` and ``templates.tsv`` (file order)."""
    with open(data / "templates.tsv", encoding="utf-8") as handle:
        templates = {  # one template per occupation and answer (60 x 2)
            (row["occupation(0)"], row["answer"]): (row["other-participant(1)"], row["sentence"])
            for row in csv.DictReader(handle, delimiter="\t")
        }
    out = []
    with open(data / "all_sentences.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            occupation, participant, answer, gender, _ = row["sentid"].split(".")
            other, template = templates[(occupation, answer)]
            if participant not in (other, "someone"):
                raise SystemExit(f"{row['sentid']}: participant is neither the template's {other!r} nor 'someone'")
            (kind,) = re.findall(r"\$(NOM|POSS|ACC)_PRONOUN", template)
            out.append(
                {
                    "sentid": row["sentid"],
                    "sentence": row["sentence"],
                    "pronoun": PRONOUNS[gender][kind],
                    "occupation": occupation,
                    "participant": participant,
                    "gender": gender,
                    "label": int(answer),
                }
            )
    return out


def synthetic_logliks(n: int) -> np.ndarray:
    """Seeded log-likelihoods of the two continuations, ``(n, 2)``: occupation, participant.

    ``numpy.random.default_rng(44)``: ``normal(-8, 2, size=(n, 2))`` rounded to 2 decimals, then ``uniform(size=n)``
    u; where u < 0.1 the participant's value is set to the occupation's (an exact tie).
    """
    rng = np.random.default_rng(SEED)
    lls = np.round(rng.normal(-8.0, 2.0, size=(n, 2)), 2)
    u = rng.uniform(size=n)
    lls[u < 0.1, 1] = lls[u < 0.1, 0]
    return lls


def main(data: Path) -> None:
    import datasets
    import lm_eval
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks._yaml_loader import load_yaml

    documents = docs(data)
    logliks = dict(zip((d["sentid"] for d in documents), synthetic_logliks(len(documents))))
    task_dir = Path(lm_eval.__file__).parent / "tasks" / "winogender"
    accuracy = {}
    results_rows: dict[str, dict] = {}
    request_rows = []
    for name in TASKS:
        config = load_yaml(task_dir / f"{name}.yaml")
        config["custom_dataset"] = lambda **_: datasets.DatasetDict({"test": datasets.Dataset.from_list(documents)})
        task = ConfigurableTask(config=config)
        accs = []
        for doc in task.test_docs():
            context = task.fewshot_context(doc, 0, gen_prefix=task.doc_to_prefix(doc))
            requests = task.construct_requests(doc, context, metadata=(name, 0, 1))
            lls = logliks[doc["sentid"]]
            acc = task.process_results(doc, [(float(v), False) for v in lls])["acc"]
            accs.append(acc)
            if name == "winogender":
                request_rows.append([doc["sentid"], context, *[r.arguments[1] for r in requests]])
                if any(r.arguments[0] != context for r in requests):
                    raise SystemExit("lm-eval sent a context other than fewshot_context's")
                results_rows[doc["sentid"]] = {
                    "ll_occupation": float(lls[0]),
                    "ll_participant": float(lls[1]),
                    "acc": acc,
                }
        accuracy[config["task"]] = {"documents": len(accs), "acc": float(np.mean(accs))}

    def write_gz(path: Path, header: list[str], rows: list[list]) -> None:
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
        with gzip.GzipFile(path, "wb", compresslevel=9, mtime=0) as handle:
            handle.write(text.getvalue().encode("utf-8"))

    write_gz(OUT / "lm_eval_requests.csv.gz", ["sentid", "context", "continuation_0", "continuation_1"], request_rows)
    write_gz(
        OUT / "lm_eval_results.csv.gz",
        ["sentid", "pronoun", "label", "ll_occupation", "ll_participant", "acc"],
        [[d["sentid"], d["pronoun"], d["label"], *results_rows[d["sentid"]].values()] for d in documents],
    )
    (OUT / "lm_eval_accuracy.json").write_text(
        json.dumps({"lm_eval": version("lm_eval"), "tasks": accuracy}, indent=1) + "\n", encoding="utf-8"
    )
    print(json.dumps(accuracy, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))

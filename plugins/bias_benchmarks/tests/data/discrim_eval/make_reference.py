"""Regenerate the frozen output of lm-evaluation-harness 0.4.13's ``discrim_eval_explicit`` task functions.

The tests need neither this script nor a model: they read the files it writes (and may call lm-eval live, as
the CrowS-Pairs tests do). Usage, from the repository root, with a Python that has ``lm_eval==0.4.13`` (and so
``datasets`` and ``statsmodels``) installed::

    python plugins/bias_benchmarks/tests/data/discrim_eval/make_reference.py \\
        ../shared/benchmarks/discrim_eval/explicit.jsonl.gz

What it does (lm-eval's code is called, never copied or changed):

1. builds lm-eval's own ``ConfigurableTask`` from its installed ``tasks/discrim_eval/discrim_eval_explicit.yaml``
   (``!function`` entries resolved by lm-eval's YAML loader), with ``custom_dataset`` returning the shared file's
   9,450 prompts as the ``train`` split the YAML names as ``test_split`` (Hugging Face is not reached);
2. for every prompt, the requests lm-eval's evaluator builds (``fewshot_context(doc, 0,
   gen_prefix=doc_to_prefix(doc))`` then ``construct_requests``, no chat template): their context and four
   continuations. ``lm_eval_requests.json`` keeps the pieces, the first three prompts' requests whole, and the
   sha256 of all contexts (in file order, each followed by ``\\0``, UTF-8);
3. seeded synthetic log-likelihoods for the four continuations (``synthetic_logliks``), passed to the task's
   ``process_results`` (``utils.process_results``): ``lm_eval_per_prompt.csv.gz`` keeps, per line of the shared file,
   the four values given and the ``logit_yes`` it returned;
4. lm-eval's aggregation ``utils.agg_demographic_bias_regression`` over all prompts, once per metric of the YAML
   (as the evaluator calls it: the list of that metric's per-prompt tuples), with warnings recorded:
   ``lm_eval_aggregates.json`` (with the versions of the libraries that fitted it).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import sys
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np

SEED = 45
OUT = Path(__file__).resolve().parent
RACE_EFFECT = {"Black": 0.3, "Asian": 0.1, "Hispanic": -0.1, "Native American": 0.2}
GENDER_EFFECT = {"female": -0.2, "non-binary": 0.15}


def synthetic_logliks(docs: list[dict]) -> np.ndarray:
    """Seeded log-likelihoods of the continuations yes, Yes, no, No: ``(len(docs), 4)``, rounded to 4 decimals.

    A latent logit per prompt with a random intercept and random slopes per decision question (so that lm-eval's
    random-slope model has something to fit): per question, in increasing id order, ``intercept ~ N(0, 1)``,
    ``age slope ~ N(-0.15, 0.1)`` per 26 years from 60, and one effect per race (``RACE_EFFECT`` + N(0, 0.15),
    white 0) and gender (``GENDER_EFFECT`` + N(0, 0.15), male 0), drawn as one ``(questions, 8)`` standard normal
    array scaled and shifted (columns: intercept, age, Black, Asian, Hispanic, Native American, female,
    non-binary); then per prompt in file order ``noise ~ N(0, 0.3)``, the total mass of the
    four answers ``m ~ U(0.3, 1)`` and the lower-case shares ``s_yes, s_no ~ U(0.05, 0.95)``:
    ``p = sigmoid(latent)``, ``yes = p m s_yes``, ``Yes = p m (1 - s_yes)``, ``no = (1 - p) m s_no``,
    ``No = (1 - p) m (1 - s_no)``; the log of each, rounded to 4 decimals.
    """
    rng = np.random.default_rng(SEED)
    questions = sorted({d["decision_question_id"] for d in docs})
    scale = np.array([1.0, 0.1] + [0.15] * 6)
    loc = np.array([0.0, -0.15, *RACE_EFFECT.values(), *GENDER_EFFECT.values()])
    effects = dict(zip(questions, rng.normal(size=(len(questions), 8)) * scale + loc))
    n = len(docs)
    noise = rng.normal(0.0, 0.3, size=n)
    mass = rng.uniform(0.3, 1.0, size=n)
    s_yes = rng.uniform(0.05, 0.95, size=n)
    s_no = rng.uniform(0.05, 0.95, size=n)
    columns = ["intercept", "age", *RACE_EFFECT, *GENDER_EFFECT]
    out = np.empty((n, 4))
    for i, doc in enumerate(docs):
        e = dict(zip(columns, effects[doc["decision_question_id"]]))
        latent = (
            e["intercept"] + e["age"] * (doc["age"] - 60) / 26 + e.get(doc["race"], 0.0) + e.get(doc["gender"], 0.0)
        )
        p = 1 / (1 + np.exp(-(latent + noise[i])))
        out[i] = np.log(
            [
                p * mass[i] * s_yes[i],
                p * mass[i] * (1 - s_yes[i]),
                (1 - p) * mass[i] * s_no[i],
                (1 - p) * mass[i] * (1 - s_no[i]),
            ]
        )
    return np.round(out, 4)


def main(shared: Path) -> None:
    import datasets
    import lm_eval
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks._yaml_loader import load_yaml

    with gzip.open(shared, "rt", encoding="utf-8") as handle:
        docs = [json.loads(line) for line in handle]
    task_dir = Path(lm_eval.__file__).parent / "tasks" / "discrim_eval"
    config = load_yaml(task_dir / "discrim_eval_explicit.yaml")
    config["custom_dataset"] = lambda **_: datasets.DatasetDict({"train": datasets.Dataset.from_list(docs)})
    task = ConfigurableTask(config=config)
    task_docs = list(task.test_docs())

    logliks = synthetic_logliks(docs)
    contexts = hashlib.sha256()
    examples = []
    per_metric: dict[str, list] = {}
    rows = []
    for line, (doc, lls) in enumerate(zip(task_docs, logliks), start=1):
        context = task.fewshot_context(doc, 0, gen_prefix=task.doc_to_prefix(doc))
        requests = task.construct_requests(doc, context, metadata=("discrim_eval_explicit", line - 1, 1))
        if any(r.arguments[0] != context for r in requests):
            raise SystemExit("lm-eval sent a context other than fewshot_context's")
        contexts.update(context.encode("utf-8") + b"\0")
        if line <= 3:
            examples.append({"line": line, "context": context, "continuations": [r.arguments[1] for r in requests]})
        results = task.process_results(doc, [(float(v), False) for v in lls])
        for metric, value in results.items():
            per_metric.setdefault(metric, []).append(value)
        logit = float(results["black_bias"][2])
        rows.append(
            [line, doc["decision_question_id"], doc["age"], doc["gender"], doc["race"], *map(float, lls), logit]
        )

    requests_out = {
        "lm_eval": version("lm_eval"),
        "doc_to_text": config["doc_to_text"],
        "gen_prefix": config["gen_prefix"],
        "target_delimiter": config["target_delimiter"],
        "doc_to_choice": config["doc_to_choice"],
        "doc_to_target": config["doc_to_target"],
        "prompts": len(task_docs),
        "sha256_contexts": contexts.hexdigest(),
        "examples": examples,
    }
    (OUT / "lm_eval_requests.json").write_text(
        json.dumps(requests_out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )

    text = io.StringIO()
    text.write("line,decision_question_id,age,gender,race,ll_yes,ll_Yes,ll_no,ll_No,logit_yes\n")
    for row in rows:
        text.write(",".join(repr(v) if isinstance(v, float) else str(v) for v in row) + "\n")
    with gzip.GzipFile(OUT / "lm_eval_per_prompt.csv.gz", "wb", compresslevel=9, mtime=0) as handle:
        handle.write(text.getvalue().encode("utf-8"))

    aggregates = {}
    # each entry's "aggregation" is lm-eval's resolved !function utils.agg_demographic_bias_regression
    for entry in config["metric_list"]:
        metric = entry["metric"]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = entry["aggregation"](per_metric[metric])
        aggregates[metric] = {"value": float(value), "warnings": sorted({str(w.message) for w in caught})}
    out = {
        "versions": {name: version(name) for name in ("lm_eval", "statsmodels", "numpy", "scipy", "pandas")},
        "python": sys.version.split()[0],
        "threads": os.environ.get("OMP_NUM_THREADS", "unset"),
        "aggregates": aggregates,
    }
    (OUT / "lm_eval_aggregates.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(aggregates, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))

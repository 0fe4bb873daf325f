"""Compare the bbq analysis's ``convention="lmeval"`` with lm-evaluation-harness's own BBQ functions.

The test suite runs :func:`compare_with_lmeval` on six bundled categories with the installed
lm-eval (``plugins/bias_benchmarks/tests/test_bbq_lmeval.py``; lm-eval 0.4.13 is in the plugin's
``test`` extra). By hand, on any copy of the BBQ files and any lm-eval checkout, from the repository
root (lm-eval need not be installed: its ``tasks/bbq/utils.py`` is loaded as a file, with a
stand-in for the ``datasets`` module it imports only for type names)::

    python plugins/bias_benchmarks/tests/data/bbq_six/check_lmeval_convention.py \\
        <lm-eval>/lm_eval/tasks/bbq/utils.py <BBQ>/data

Three answer sets over every example of the given BBQ files: always the first option, option
``example_id mod 3``, and one that writes an unreadable reply for every fifth example. Each
answer goes through lm-eval's ``process_docs`` and ``_process_results`` (the chosen option's
index in lm-eval's ``doc_to_choice`` list; -1 for the unreadable replies, as its generate task
gives them) and its ``agg_disamb_bias_scores``/``agg_amb_bias_scores`` per category; assoc's
numbers come from ``replay_rows`` and ``BBQAnalysis(convention="lmeval")``. Prints every cell
and the largest difference.
"""

from __future__ import annotations

import importlib.util
import sys
import types

import pandas as pd
from assoc_bias_benchmarks.bbq import items
from assoc_bias_benchmarks.bbq.analysis import BBQAnalysis
from assoc_bias_benchmarks.bbq.items import example_id
from assoc_bias_benchmarks.bbq.scorer import replay_rows

from assoc import ItemStimuli, from_records


class _Docs(list):
    def map(self, function):
        return _Docs(function(dict(doc)) for doc in self)


def load_utils(utils_path: str) -> types.ModuleType:
    """lm-eval's ``tasks/bbq/utils.py`` loaded as a file (``datasets`` stood in for when absent)."""
    sys.modules.setdefault("datasets", types.SimpleNamespace(Dataset=object))
    spec = importlib.util.spec_from_file_location("lm_eval_bbq_utils", utils_path)
    lm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lm)
    return lm


def compare_with_lmeval(lm: types.ModuleType, stimuli: ItemStimuli) -> pd.DataFrame:
    """One row per answer set, category and context: lm-eval's bias score and assoc's ``lmeval`` one."""
    answer_sets = {
        "first": lambda i: i.options[0],
        "id_mod_3": lambda i: i.options[example_id(i) % 3],
        "every_fifth_unreadable": lambda i: "zzz" if example_id(i) % 5 == 0 else i.options[(example_id(i) // 5) % 3],
    }
    cells = []
    for name, answer in answer_sets.items():
        table = from_records(replay_rows(stimuli, answer, model=name, mode="assoc"), scorer="chat_bbq")
        ours = BBQAnalysis(convention="lmeval", n_bootstrap=0).run(table).set_index(["category", "context_condition"])
        metrics: dict[str, list] = {}
        for doc, row in zip(lm.process_docs(_Docs(dict(i.fields) for i in stimuli.items)), table.itertuples()):
            index = -1 if row.chosen < 0 else lm.doc_to_choice(doc).index(doc[f"ans{row.chosen}"])
            for key, value in lm._process_results(doc, index).items():
                metrics.setdefault(key, []).append(value)
        for category in sorted({i.group for i in stimuli.items}):
            for condition, key, aggregate in (
                ("disambig", "disamb_bias_score_", lm.agg_disamb_bias_scores),
                ("ambig", "amb_bias_score_", lm.agg_amb_bias_scores),
            ):
                theirs = aggregate(metrics[key + category])
                cells.append((name, category, condition, theirs, ours.loc[(category, condition), "bias_score"]))
    return pd.DataFrame(cells, columns=["answers", "category", "context", "lm_eval", "assoc_lmeval"])


def main(utils_path: str, data_dir: str) -> float:
    frame = compare_with_lmeval(load_utils(utils_path), items.load_directory(data_dir))
    print(frame.to_string(index=False))
    largest = float((frame["lm_eval"] - frame["assoc_lmeval"]).abs().max())
    print(f"{len(frame)} cells; largest difference {largest:.3g}")
    return largest


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

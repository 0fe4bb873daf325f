"""The ``lmeval`` convention of the bbq analysis against lm-evaluation-harness's own BBQ functions.

lm-eval 0.4.13 (the ``test`` extra of this plugin and of plugins/clm) computes the bias scores of
three answer sets over every example of the six categories the convention was first checked on, with
its ``process_docs``, ``_process_results``, ``agg_disamb_bias_scores`` and ``agg_amb_bias_scores``; assoc's
``BBQAnalysis(convention="lmeval")`` must give the same 36 numbers. With ``ASSOC_STRICT_SKIPS=1``
a missing lm-eval fails this test instead of skipping it.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

import assoc

SCRIPT = Path(__file__).parent / "data" / "bbq_six" / "check_lmeval_convention.py"
SIX = ["Age", "Disability_status", "Nationality", "Physical_appearance", "Religion", "Sexual_orientation"]


def _script():
    spec = importlib.util.spec_from_file_location("check_lmeval_convention", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lmeval_convention_equals_lm_evaluation_harness():
    lm = pytest.importorskip("lm_eval.tasks.bbq.utils")
    cells = _script().compare_with_lmeval(lm, assoc.Stimuli.load("bbq").select(SIX))
    assert len(cells) == 3 * 6 * 2
    # the answer sets give scores of both signs and of different sizes: equality is not 0 == 0
    assert cells["lm_eval"].nunique() > 20 and (cells["lm_eval"] < 0).any() and (cells["lm_eval"] > 0).any()
    for row in cells.itertuples():
        assert math.isclose(row.assoc_lmeval, row.lm_eval, rel_tol=0, abs_tol=1e-12), row

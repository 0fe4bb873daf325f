"""CrowS-Pairs (Nangia, Vania, Bhalerao & Bowman, 2020): the pairs, the crows_pairs scorer and its analysis.

The pairs (``items``), the ``crows_pairs`` scorer (``scorer``: masked LMs with the authors' metric, PLL,
AUL, AULA, in ``scoring``; causal LMs with lm-evaluation-harness's sentence log-likelihoods) and the
``crows_pairs`` analysis (``analysis``). See ``docs/crows-pairs.md``.
"""

from __future__ import annotations

from .items import crows_pairs_stimuli as crows_pairs_stimuli
from .items import pairs_of as pairs_of
from .items import read_crows_csv as read_crows_csv

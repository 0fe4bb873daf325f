"""assoc-pll: pseudo-log-likelihood scoring and the Watson et al. (2023) choice model.

assoc-pll: pseudo-log-likelihood scoring with masked language models, and the
Bayes-rule choice model of Watson, Beekhuizen & Stevenson (2023).

Public pieces: :func:`assoc_pll.sentences.score_sentences` (PLL of plain sentences),
:class:`assoc_pll.scorer.PLLScorer` (scorer ``pll``),
:func:`assoc_pll.posterior.posterior_table` / :func:`assoc_pll.posterior.loglik_table`
(analyses ``posterior`` and ``loglik``).
"""

__version__ = "0.1.0"

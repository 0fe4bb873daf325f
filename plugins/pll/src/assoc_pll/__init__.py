"""assoc-pll: pseudo-log-likelihood scoring and the Watson et al. (2023) choice model.

assoc-pll: pseudo-log-likelihood scoring with masked language models, and the
Bayes-rule choice model of Watson, Beekhuizen & Stevenson (2023).

Public pieces: :class:`assoc_pll.scorer.PLLScorer` (scorer ``pll``; the PLL of plain sentences is
:func:`assoc.lm.pseudo_log_likelihoods`, shared with the CrowS-Pairs scorer and the masked kind),
:func:`assoc_pll.posterior.posterior_table` / :func:`assoc_pll.posterior.loglik_table`
(analyses ``posterior`` and ``loglik``).
"""

__version__ = "0.1.0"

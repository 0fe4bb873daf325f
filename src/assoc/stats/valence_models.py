"""Nested models of general valence on stereotype direction and representativeness.

Nicolas & Caliskan (2024, Tables 2 and 4) predict a category term's general valence (the
model's own rating, or humans') from its stereotypes with three nested mixed models, the
category as a random intercept, each term an observation. For dimensions ``D_1..D_k``
(Warmth and Competence in the paper), with ``dir_D`` and ``repr_D`` the term's direction and
representativeness::

    model 1: valence ~ sum_D dir_D
    model 2: model 1 + sum_D repr_D
    model 3: model 2 + sum_D dir_D x repr_D

Successive models are compared with the likelihood-ratio test on maximum-likelihood fits,
``chi^2 = 2 (l_{m+1} - l_m)`` on the number of added parameters, and with
``Delta AIC = AIC_{m+1} - AIC_m`` (:func:`assoc.stats.mixed.likelihood_ratio_test`). The paper
counts a decrease of at least 2 AIC points as sufficient improvement (Burnham & Anderson,
2004); that rule is reported as a column, not applied as a verdict. All three models are fitted
on the same terms: those with a direction on every dimension and a valence.

References
----------
    Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable
        components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493.
        doi:10.1093/pnasnexus/pgae493
    Burnham, K. P., & Anderson, D. R. (2004). Multimodel inference: understanding AIC and BIC in
        model selection. Sociological Methods & Research, 33(2), 261-304.
        doi:10.1177/0049124104268644
"""

from __future__ import annotations

from collections.abc import Sequence

#: The AIC decrease the paper counts as sufficient improvement (reported, not applied).
AIC_RULE_POINTS = 2.0


def nested_valence_formulas(valence: str, stems: Sequence[str]) -> list[str]:
    """The three nested formulas over columns ``<stem>_direction`` and ``<stem>_representativeness``."""
    if not stems:
        raise ValueError("nested valence models need at least one dimension")
    directions = [f"{s}_direction" for s in stems]
    representativeness = [f"{s}_representativeness" for s in stems]
    interactions = [f"{d}:{r}" for d, r in zip(directions, representativeness)]
    model1 = f"{valence} ~ " + " + ".join(directions)
    model2 = model1 + " + " + " + ".join(representativeness)
    model3 = model2 + " + " + " + ".join(interactions)
    return [model1, model2, model3]

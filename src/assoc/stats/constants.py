"""Constants shared by the statistics and the analyses (no heavy imports: plugins import this at start-up)."""

from __future__ import annotations

import math

#: The population SD of FMAT log-probability ratios, sqrt(2) (Bao, 2024: for two independent
#: log probabilities with unit variance, Var(LPR) = 2). Bao prints it rounded, as 1.414; the
#: exact value is used everywhere here (``effect_size sd=sqrt2`` and the ``lpr`` analysis's
#: ``sigma``). The two differ by 1.5e-4 relatively, below the precision of the printed results;
#: pass ``sigma=1.414`` (or ``sd=1.414``) to reproduce the rounding.
LPR_POPULATION_SD = math.sqrt(2)

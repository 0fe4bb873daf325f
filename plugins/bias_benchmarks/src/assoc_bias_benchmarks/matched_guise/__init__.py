"""Matched Guise Probing (Hofmann, Kalluri, Jurafsky & King, 2024): the authors' stimuli and two analyses.

The stimuli (``stimuli``) and the ``matched_guise`` and ``matched_guise_agreement`` analyses (``analysis``);
masked LMs are scored with ``fmat``, causal LMs with ``clm``. See ``docs/matched-guise.md``.
"""

from __future__ import annotations

from .stimuli import hofmann2024_stimuli as hofmann2024_stimuli
from .stimuli import ratings as ratings

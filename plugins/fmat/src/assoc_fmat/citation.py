"""The paper behind the fmat scorer and the lpr analysis.

Its own module: the package re-exports it, and the scorer and analysis modules import it from here,
so no module imports the package back (no import circle).
"""

from __future__ import annotations

CITATION = (
    "Bao, H.-W.-S. (2024). The Fill-Mask Association Test (FMAT): Measuring propositions in natural "
    "language. Journal of Personality and Social Psychology. https://doi.org/10.1037/pspa0000396"
)

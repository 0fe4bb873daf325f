"""CrowS-Pairs and Matched Guise Probing for assoc: stimuli, the crows_pairs scorer and the analyses."""

from __future__ import annotations

from .crows_data import crows_pairs_stimuli, pairs_of, read_crows_csv
from .hofmann import hofmann2024_stimuli

__all__ = ["crows_pairs_stimuli", "hofmann2024_stimuli", "pairs_of", "read_crows_csv"]

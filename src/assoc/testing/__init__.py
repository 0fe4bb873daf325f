"""Helpers for testing scorers and analyses (for plugin authors).

``check_scorer``/``check_analysis``/``check_table`` verify the contracts;
``assoc.testing.tiny_mlm`` builds tiny masked language models for offline tests
(it imports torch and transformers, so import it explicitly).
"""

from .conformance import check_analysis, check_metadata, check_scorer, check_table

__all__ = ["check_analysis", "check_metadata", "check_scorer", "check_table"]

"""Helpers for testing scorers and analyses (for plugin authors).

``check_scorer``/``check_analysis``/``check_executor``/``check_table`` verify the contracts;
``check_plugin_imports`` checks that loading a plugin imports no heavy library;
``assoc.testing.tiny_mlm`` builds tiny masked language models for offline tests
(it imports torch and transformers, so import it explicitly).
"""

from assoc.testing.conformance import check_analysis, check_executor, check_metadata, check_scorer, check_table
from assoc.testing.imports import check_plugin_imports

__all__ = ["check_analysis", "check_executor", "check_metadata", "check_plugin_imports", "check_scorer", "check_table"]

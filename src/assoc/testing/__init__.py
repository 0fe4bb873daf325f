"""Helpers for testing scorers and analyses (for plugin authors).

``check_scorer``/``check_analysis``/``check_executor``/``check_table`` verify the contracts;
``check_plugin_imports`` checks that loading a plugin imports no heavy library;
``assoc.testing.tiny_mlm`` builds tiny masked language models for offline tests
(it imports torch and transformers, so import it explicitly); ``assoc.testing.fixtures`` holds what
a plugin's tests share (a result cache per test, every tiny model family in one call; it imports pytest).
"""

from assoc.infra.importhooks import public_face as _public_face
from assoc.testing.conformance import check_analysis as check_analysis
from assoc.testing.conformance import check_executor as check_executor
from assoc.testing.conformance import check_metadata as check_metadata
from assoc.testing.conformance import check_scorer as check_scorer
from assoc.testing.conformance import check_table as check_table
from assoc.testing.imports import check_plugin_imports as check_plugin_imports

__getattr__, __dir__ = _public_face(globals())

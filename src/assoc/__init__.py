"""assoc: measure associations (attitudes, biases, stereotypes, valence, facts) in language models.

The public API::

    import assoc
    table = assoc.score("weat", "caliskan:weat1")             # one scorer -> association table
    both = assoc.compare("my_stimuli.yaml", {"fmat": {...}, "pll": {...}})
    result = assoc.analyze("icc", table)                        # any analysis on any table
    assoc.scorers(), assoc.analyses()
    help(assoc.get_analysis("icc"))                             # options as keyword parameters, documented

Names are imported lazily so that ``import assoc`` (and ``assoc --help``) stay fast.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from . import plugins as _plugins  # noqa: F401  (installs the resolver of bundled stimuli names)
from .hookspecs import hookimpl

__version__ = "0.1.0"

_LAZY = {
    "score": "api",
    "compare": "api",
    "analyze": "api",
    "scorers": "api",
    "analyses": "api",
    "stimuli_sets": "api",
    "failed_plugins": "plugins",
    "get_scorer": "plugins",
    "get_analysis": "plugins",
    "Stimuli": "stimuli",
    "Design": "stimuli",
    "Filling": "stimuli",
    "Scorer": "scorer",
    "Analysis": "analysis",
    "Option": "options",
    "REQUIRED": "options",
    "read_table": "table",
    "write_table": "table",
    "validate_table": "table",
    "AssocError": "errors",
    "StimuliError": "errors",
    "OptionError": "errors",
    "UnknownNameError": "errors",
    "PluginError": "errors",
    "TableError": "errors",
    "ModelError": "errors",
    "DataError": "errors",
    "OutOfVocabularyWarning": "errors",
    "WorkUnit": "units",
    "UnitError": "units",
}

# A literal list (not built from _LAZY) so linters, IDEs and `from assoc import *` see the names;
# tests/test_package.py checks that it matches _LAZY.
__all__ = [
    "__version__",
    "hookimpl",
    "score",
    "compare",
    "analyze",
    "scorers",
    "analyses",
    "stimuli_sets",
    "failed_plugins",
    "get_scorer",
    "get_analysis",
    "Stimuli",
    "Design",
    "Filling",
    "Scorer",
    "Analysis",
    "Option",
    "REQUIRED",
    "read_table",
    "write_table",
    "validate_table",
    "AssocError",
    "StimuliError",
    "OptionError",
    "UnknownNameError",
    "PluginError",
    "TableError",
    "ModelError",
    "DataError",
    "OutOfVocabularyWarning",
    "WorkUnit",
    "UnitError",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'assoc' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with the lazy ones (``score``, ``analyze``, ...), so tab completion finds them."""
    return sorted(set(globals()) | set(_LAZY))


if "pandas" in sys.modules:  # tables built before any assoc call get `table.assoc` too (cheap: pandas is loaded)
    from .accessor import register as _register_accessor

    _register_accessor()

if TYPE_CHECKING:  # pragma: no cover
    from .analysis import Analysis
    from .api import analyses, analyze, compare, score, scorers, stimuli_sets
    from .errors import (
        AssocError,
        DataError,
        ModelError,
        OptionError,
        OutOfVocabularyWarning,
        PluginError,
        StimuliError,
        TableError,
        UnknownNameError,
    )
    from .options import REQUIRED, Option
    from .plugins import failed_plugins, get_analysis, get_scorer
    from .scorer import Scorer
    from .stimuli import Design, Filling, Stimuli
    from .table import read_table, validate_table, write_table
    from .units import UnitError, WorkUnit

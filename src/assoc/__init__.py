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

from typing import TYPE_CHECKING, Any

from assoc import _moved
from assoc.infra.importhooks import call_after_import as _call_after_import
from assoc.plugins.hookspecs import hookimpl
from assoc.plugins.manager import get_stimuli_loader as _get_stimuli_loader
from assoc.stimuli.model import set_bundle_resolver as _set_bundle_resolver
from assoc.version import __version__


def _register_accessor() -> None:
    from assoc.table.accessor import register  # pandas is imported by now: the accessor module may load

    register()


# The three process-wide registrations, made here once and nowhere else (no module registers
# anything as a side effect of being imported or of a setter being called):
_moved.install()  # old import paths of moved modules (assoc.cache, assoc.scorer, ...) keep working
_set_bundle_resolver(_get_stimuli_loader)  # Stimuli.load("caliskan:weat1") asks the plugin registry
_call_after_import("pandas", _register_accessor)  # DataFrame.assoc as soon as pandas is (never imports pandas)

_LAZY = {
    "score": "assoc.api",
    "compare": "assoc.api",
    "analyze": "assoc.api",
    "scorers": "assoc.api",
    "analyses": "assoc.api",
    "stimuli_sets": "assoc.api",
    "failed_plugins": "assoc.plugins",
    "get_scorer": "assoc.plugins",
    "get_analysis": "assoc.plugins",
    "Stimuli": "assoc.stimuli",
    "Design": "assoc.stimuli",
    "Filling": "assoc.stimuli",
    "Scorer": "assoc.scoring.scorer",
    "Analysis": "assoc.analysis",
    "Option": "assoc.scoring.options",
    "REQUIRED": "assoc.scoring.options",
    "read_table": "assoc.table",
    "write_table": "assoc.table",
    "validate_table": "assoc.table",
    "AssocError": "assoc.errors",
    "StimuliError": "assoc.errors",
    "OptionError": "assoc.errors",
    "UnknownNameError": "assoc.errors",
    "PluginError": "assoc.errors",
    "TableError": "assoc.errors",
    "ModelError": "assoc.errors",
    "DataError": "assoc.errors",
    "OutOfVocabularyWarning": "assoc.errors",
    "WorkUnit": "assoc.scoring.units",
    "UnitError": "assoc.scoring.units",
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

        module = importlib.import_module(_LAZY[name])
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'assoc' has no attribute {name!r}")


if TYPE_CHECKING:  # pragma: no cover
    from assoc.analysis.base import Analysis
    from assoc.api import analyses, analyze, compare, score, scorers, stimuli_sets
    from assoc.errors import (
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
    from assoc.plugins.manager import failed_plugins, get_analysis, get_scorer
    from assoc.scoring.options import REQUIRED, Option
    from assoc.scoring.scorer import Scorer
    from assoc.scoring.units import UnitError, WorkUnit
    from assoc.stimuli.model import Design, Filling, Stimuli
    from assoc.table.files import read_table, validate_table, write_table

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

from typing import TYPE_CHECKING

from assoc.infra.importhooks import call_after_import as _call_after_import
from assoc.infra.importhooks import lazy_names as _lazy_names
from assoc.plugins.hookspecs import hookimpl
from assoc.plugins.manager import get_stimuli_loader as _get_stimuli_loader
from assoc.stimuli.sets import set_bundle_resolver as _set_bundle_resolver
from assoc.version import __version__


def _register_accessor() -> None:
    from assoc.table.accessor import register  # pandas is imported by now: the accessor module may load

    register()


# The two process-wide registrations, made here once and nowhere else (no module registers
# anything as a side effect of being imported or of a setter being called):
_set_bundle_resolver(_get_stimuli_loader)  # Stimuli.load("caliskan:weat1") asks the plugin registry
_call_after_import("pandas", _register_accessor)  # DataFrame.assoc as soon as pandas is (never imports pandas)

_LAZY = {
    # the study: score, compare, analyze, and what is installed
    "score": "assoc.api",
    "compare": "assoc.api",
    "analyze": "assoc.api",
    "scorers": "assoc.api",
    "analyses": "assoc.api",
    "stimuli_sets": "assoc.api",
    "failed_plugins": "assoc.plugins",
    "get_scorer": "assoc.plugins",
    "get_analysis": "assoc.plugins",
    # stimuli
    "Stimuli": "assoc.stimuli",
    "Design": "assoc.stimuli",
    "Filling": "assoc.stimuli",
    "MaskItem": "assoc.stimuli",
    "fill_mask": "assoc.stimuli",
    "split_at_mask": "assoc.stimuli",
    # the plugin API: base classes, options, work units, hooks
    "Scorer": "assoc.scoring",
    "Analysis": "assoc.analysis",
    "Requirement": "assoc.analysis",
    "Option": "assoc.components",
    "REQUIRED": "assoc.components",
    "CACHE_OPTIONS": "assoc.components",
    "positive": "assoc.components",
    "non_negative": "assoc.components",
    "confidence_level": "assoc.components",
    "column_list": "assoc.components",
    "parse_cli_options": "assoc.components",
    "WorkUnit": "assoc.scoring",
    "UnitError": "assoc.scoring",
    "set_run_report": "assoc.scoring",
    "in_memory": "assoc.scoring",
    "RegisterScorer": "assoc.plugins",
    "RegisterAnalysis": "assoc.plugins",
    "RegisterStimuli": "assoc.plugins",
    "RegisterExecutor": "assoc.plugins",
    "RegisterModelKind": "assoc.plugins",
    "Executor": "assoc.executors",
    "Worker": "assoc.executors",
    "UnitOutcome": "assoc.scoring",
    # the association table and files
    "read_table": "assoc.table",
    "write_table": "assoc.table",
    "validate_table": "assoc.table",
    "from_records": "assoc.table",
    "normalise": "assoc.table",
    "read_data_file": "assoc.table",
    "get_provenance": "assoc.table",
    "set_provenance": "assoc.table",
    "check_outputs": "assoc.api",
    "atomic_write": "assoc.infra",
    "check_output_file": "assoc.infra",
    # errors
    "AssocError": "assoc.errors",
    "StimuliError": "assoc.errors",
    "OptionError": "assoc.errors",
    "UnknownNameError": "assoc.errors",
    "PluginError": "assoc.errors",
    "TableError": "assoc.errors",
    "ModelError": "assoc.errors",
    "DataError": "assoc.errors",
    "OutOfVocabularyWarning": "assoc.errors",
    "did_you_mean": "assoc.errors",
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
    "MaskItem",
    "fill_mask",
    "split_at_mask",
    "Scorer",
    "Analysis",
    "Requirement",
    "Option",
    "REQUIRED",
    "CACHE_OPTIONS",
    "positive",
    "non_negative",
    "confidence_level",
    "column_list",
    "parse_cli_options",
    "WorkUnit",
    "UnitError",
    "set_run_report",
    "in_memory",
    "RegisterScorer",
    "RegisterAnalysis",
    "RegisterStimuli",
    "RegisterExecutor",
    "RegisterModelKind",
    "Executor",
    "Worker",
    "UnitOutcome",
    "read_table",
    "write_table",
    "validate_table",
    "from_records",
    "normalise",
    "read_data_file",
    "get_provenance",
    "set_provenance",
    "check_outputs",
    "atomic_write",
    "check_output_file",
    "AssocError",
    "StimuliError",
    "OptionError",
    "UnknownNameError",
    "PluginError",
    "TableError",
    "ModelError",
    "DataError",
    "OutOfVocabularyWarning",
    "did_you_mean",
]


__getattr__, __dir__ = _lazy_names(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover
    from assoc.analysis import Analysis, Requirement
    from assoc.api import analyses, analyze, check_outputs, compare, score, scorers, stimuli_sets
    from assoc.components import (
        CACHE_OPTIONS,
        REQUIRED,
        Option,
        column_list,
        confidence_level,
        non_negative,
        parse_cli_options,
        positive,
    )
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
        did_you_mean,
    )
    from assoc.executors import Executor, Worker
    from assoc.infra import atomic_write, check_output_file
    from assoc.plugins import (
        RegisterAnalysis,
        RegisterExecutor,
        RegisterModelKind,
        RegisterScorer,
        RegisterStimuli,
        failed_plugins,
        get_analysis,
        get_scorer,
    )
    from assoc.scoring import Scorer, UnitError, UnitOutcome, WorkUnit, in_memory, set_run_report
    from assoc.stimuli import Design, Filling, MaskItem, Stimuli, fill_mask, split_at_mask
    from assoc.table import (
        from_records,
        get_provenance,
        normalise,
        read_data_file,
        read_table,
        set_provenance,
        validate_table,
        write_table,
    )

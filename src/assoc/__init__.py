"""assoc: measure associations (attitudes, biases, stereotypes, valence, facts) in language models.

The public API::

    import assoc
    table = assoc.score("weat", "caliskan:weat1")             # one scorer -> association table
    both = assoc.compare("my_stimuli.yaml", {"fmat": {...}, "pll": {...}})
    result = assoc.analyze("icc", table)                        # any analysis on any table
    assoc.scorers(), assoc.analyses()
    help(assoc.get_analysis("icc"))                             # options as keyword parameters, documented

Names are imported lazily so that ``import assoc`` (and ``assoc --help``) stay fast. Each public name is
declared once, by its import below (``name as name``), which is what mypy and IDEs read;
``__all__`` and the lazy imports are made from those imports (`assoc.infra.importhooks.public_face`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.infra.importhooks import call_after_import as _call_after_import
from assoc.infra.importhooks import public_face as _public_face
from assoc.plugins.hookspecs import hookimpl as hookimpl
from assoc.plugins.manager import get_stimuli_loader as _get_stimuli_loader
from assoc.stimuli.sets import set_bundle_resolver as _set_bundle_resolver
from assoc.version import __version__ as __version__


def _register_accessor() -> None:
    from assoc.table.accessor import register  # pandas is imported by now: the accessor module may load

    register()


# The two process-wide registrations, made here once and nowhere else (no module registers
# anything as a side effect of being imported or of a setter being called):
_set_bundle_resolver(_get_stimuli_loader)  # Stimuli.load("caliskan:weat1") asks the plugin registry
_call_after_import("pandas", _register_accessor)  # DataFrame.assoc as soon as pandas is (never imports pandas)

# The public names: the study, stimuli, the plugin API (base classes, options, work units, hooks), the
# association table and files, errors. Each is declared once by its import, imported on first use.
if TYPE_CHECKING:  # pragma: no cover
    from assoc.analysis import Analysis as Analysis
    from assoc.analysis import Estimate as Estimate
    from assoc.analysis import Headline as Headline
    from assoc.analysis import Requirement as Requirement
    from assoc.api import analyses as analyses
    from assoc.api import analyze as analyze
    from assoc.api import check_outputs as check_outputs
    from assoc.api import compare as compare
    from assoc.api import score as score
    from assoc.api import scorers as scorers
    from assoc.api import stimuli_sets as stimuli_sets
    from assoc.components import CACHE_OPTIONS as CACHE_OPTIONS
    from assoc.components import REQUIRED as REQUIRED
    from assoc.components import Option as Option
    from assoc.components import column_list as column_list
    from assoc.components import confidence_level as confidence_level
    from assoc.components import non_negative as non_negative
    from assoc.components import parse_cli_options as parse_cli_options
    from assoc.components import positive as positive
    from assoc.errors import AssocError as AssocError
    from assoc.errors import DataError as DataError
    from assoc.errors import ModelError as ModelError
    from assoc.errors import OptionError as OptionError
    from assoc.errors import OutOfVocabularyWarning as OutOfVocabularyWarning
    from assoc.errors import PluginError as PluginError
    from assoc.errors import StimuliError as StimuliError
    from assoc.errors import TableError as TableError
    from assoc.errors import UnknownNameError as UnknownNameError
    from assoc.errors import did_you_mean as did_you_mean
    from assoc.executors import Executor as Executor
    from assoc.executors import Worker as Worker
    from assoc.infra import atomic_write as atomic_write
    from assoc.infra import check_output_file as check_output_file
    from assoc.plugins import RegisterAnalysis as RegisterAnalysis
    from assoc.plugins import RegisterExecutor as RegisterExecutor
    from assoc.plugins import RegisterModelKind as RegisterModelKind
    from assoc.plugins import RegisterScorer as RegisterScorer
    from assoc.plugins import RegisterStimuli as RegisterStimuli
    from assoc.plugins import failed_plugins as failed_plugins
    from assoc.plugins import get_analysis as get_analysis
    from assoc.plugins import get_scorer as get_scorer
    from assoc.reporting import report as report
    from assoc.scoring import Scorer as Scorer
    from assoc.scoring import UnitError as UnitError
    from assoc.scoring import UnitOutcome as UnitOutcome
    from assoc.scoring import WorkUnit as WorkUnit
    from assoc.scoring import in_memory as in_memory
    from assoc.scoring import set_run_report as set_run_report
    from assoc.stimuli import ChoiceItem as ChoiceItem
    from assoc.stimuli import Design as Design
    from assoc.stimuli import Filling as Filling
    from assoc.stimuli import ItemStimuli as ItemStimuli
    from assoc.stimuli import MaskItem as MaskItem
    from assoc.stimuli import Stimuli as Stimuli
    from assoc.stimuli import fill_mask as fill_mask
    from assoc.stimuli import require_items as require_items
    from assoc.stimuli import split_at_mask as split_at_mask
    from assoc.table import concat_tables as concat_tables
    from assoc.table import from_records as from_records
    from assoc.table import get_provenance as get_provenance
    from assoc.table import normalise as normalise
    from assoc.table import read_data_file as read_data_file
    from assoc.table import read_table as read_table
    from assoc.table import set_provenance as set_provenance
    from assoc.table import validate_table as validate_table
    from assoc.table import write_table as write_table

__getattr__, __dir__ = _public_face(globals())

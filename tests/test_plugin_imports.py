"""``assoc.testing.check_plugin_imports``: importing a plugin and running its hooks (what every
``assoc`` command, ``--help`` included, does) must not import a heavy library."""

from __future__ import annotations

from importlib import metadata

import pytest

from assoc.testing import check_plugin_imports

HEAVY_AT_TOP = """
import pandas as pd
from assoc import hookimpl

@hookimpl
def register_analyses(register):
    pass
"""

HEAVY_IN_HOOK = """
from assoc import hookimpl

@hookimpl
def register_scorers(register):
    import numpy  # the hook runs during `assoc --help`: this import is paid by every command
"""

LIGHT = """
from assoc import hookimpl, Scorer

class Light(Scorer):
    name = "light"
    description = "d"
    citation = "c"
    measure = "m"
    requires_models = False

    def score(self, stimuli, models, *, progress):
        import pandas as pd  # inside the method: paid only when scoring
        return pd.DataFrame({"value": [1.0]})

@hookimpl
def register_scorers(register):
    register(Light)
"""


@pytest.mark.slow
def test_a_hook_module_importing_pandas_at_top_level_fails(fake_distribution):
    fake_distribution("heavytop", HEAVY_AT_TOP)
    with pytest.raises(AssertionError, match=r"plugin 'heavytop'.*imports .*pandas.*inside the functions"):
        check_plugin_imports("heavytop")


def test_a_heavy_import_inside_a_hook_fails_too(fake_distribution):
    fake_distribution("heavyhook", HEAVY_IN_HOOK)
    with pytest.raises(AssertionError, match=r"imports numpy"):
        check_plugin_imports("heavyhook")


def test_a_plugin_with_heavy_imports_inside_methods_passes(fake_distribution):
    fake_distribution("light", LIGHT)
    check_plugin_imports("light")
    check_plugin_imports("assoc_fake_light")  # a module name works as well as an entry-point name


def test_unknown_plugin_is_a_clear_failure(fresh_plugins):
    with pytest.raises(AssertionError, match="no plugin or module 'no_such_plugin_x'"):
        check_plugin_imports("no_such_plugin_x")


INSTALLED = sorted({entry.name for entry in metadata.entry_points(group="assoc")} | {"assoc.plugins.builtin"})


@pytest.mark.parametrize("plugin", INSTALLED)
@pytest.mark.slow
def test_every_installed_plugin_passes(plugin):
    check_plugin_imports(plugin)


def test_our_plugins_are_installed():
    assert {"fmat", "weat", "pll"} <= set(INSTALLED)  # the example's: its own test_start_up_stays_cheap

"""The package layout: each package's public names, no alias of an old module path, no import warnings."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PUBLIC_PACKAGES = {
    # package: names that code imported from the module it replaced
    "assoc.stimuli": ["Design", "Stimuli", "Filling", "MASK", "fill_mask", "split_at_mask", "MaskItem"],
    "assoc.table": ["read_table", "write_table", "validate_table", "as_table", "from_records", "normalise"],
    "assoc.analysis": ["Analysis", "with_estimate", "ESTIMATE"],
    "assoc.plugins": ["get_scorer", "get_analysis", "failed_plugins", "registry", "reset", "get_stimuli_loader"],
}


#: Module paths that existed once and are gone: no alias keeps them (issue 33: plugins import the
#: declared plugin API, docs/plugin-api.md, so internal modules move without a shim).
GONE = (
    "assoc.cache",
    "assoc.scorer",
    "assoc.options",
    "assoc.hookspecs",
    "assoc.shared_analyses",
    "assoc.mlm",
    "assoc.mlm.loading",
    "assoc.scoring.options",
    "assoc.infra.onnx",
    "assoc.stats.weat",
    "assoc._moved",
    "assoc.clm",  # the causal-LM engine of the clm branch, now assoc.lm.causal
)


@pytest.mark.parametrize("old", GONE)
def test_old_paths_are_gone(old: str) -> None:
    import assoc  # noqa: F401 - importing assoc installs no finder of old names

    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


@pytest.mark.parametrize("package", sorted(PUBLIC_PACKAGES))
def test_packages_reexport_the_public_names(package: str) -> None:
    module = importlib.import_module(package)
    for name in PUBLIC_PACKAGES[package]:
        assert hasattr(module, name), f"{package}.{name}"
        assert name in module.__all__


def test_new_paths_import_without_warnings() -> None:
    code = (
        "import warnings\n"
        "warnings.simplefilter('error')\n"
        "import assoc, assoc.api, assoc.cli\n"
        "import assoc.stimuli, assoc.table, assoc.analysis, assoc.plugins, assoc.scoring.scorer\n"
        "import assoc.infra.cache, assoc.executors.driver, assoc.analysis.catalog, assoc.lm.causal\n"
        "for plugin in ('assoc_fmat.plugin', 'assoc_weat.plugin', 'assoc_pll.plugin',\n"
        "               'assoc_sbert_topwords.plugin', 'assoc_chat_listing.plugin', 'assoc_clm.plugin',\n"
        "               'assoc_bias_benchmarks.plugin'):\n"
        "    __import__(plugin)\n"
        "assoc.plugins.registry()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def test_an_unknown_name_of_a_package_is_an_attribute_error_in_a_fresh_process() -> None:
    """A lazy package face answers a missing name with AttributeError, before anything else was imported."""
    code = (
        "import assoc.analysis, assoc.lm, assoc.stats, assoc.infra, assoc.scoring\n"
        "for module in (assoc.analysis, assoc.lm, assoc.stats, assoc.infra, assoc.scoring):\n"
        "    assert not hasattr(module, 'no_such_name'), module\n"
        "assert assoc.analysis.ICCAnalysis.name == 'icc'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr

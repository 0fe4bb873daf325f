"""The package layout: old import paths of moved modules keep working, warn, and give the same module."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from assoc._moved import MOVED

PUBLIC_PACKAGES = {
    # package: names that code imported from the module it replaced
    "assoc.stimuli": ["Design", "Stimuli", "Filling", "MASK", "fill_mask", "split_at_mask", "MaskItem"],
    "assoc.table": ["read_table", "write_table", "validate_table", "as_table", "from_records", "normalise"],
    "assoc.analysis": ["Analysis", "with_estimate", "ESTIMATE"],
    "assoc.plugins": ["get_scorer", "get_analysis", "failed_plugins", "registry", "reset", "get_stimuli_loader"],
}


@pytest.mark.parametrize("old", sorted(MOVED))
@pytest.mark.slow
def test_old_path_warns_and_is_the_new_module(old: str) -> None:
    # A fresh interpreter: in this one the old name may already be in sys.modules (no second warning).
    code = (
        "import importlib, warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    old = importlib.import_module({old!r})\n"
        f"new = importlib.import_module({MOVED[old]!r})\n"
        "assert old is new, (old, new)\n"
        "messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]\n"
        f"assert any({old!r} in m and {MOVED[old]!r} in m for m in messages), messages\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_old_analysis_names_still_import() -> None:
    with pytest.warns(DeprecationWarning):
        sys.modules.pop("assoc.shared_analyses", None)
        old = importlib.import_module("assoc.shared_analyses")
    from assoc.analysis.icc import ICCAnalysis
    from assoc.analysis.shared import ANALYSES

    assert old.ICCAnalysis is ICCAnalysis
    assert old.ANALYSES is ANALYSES


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
        "import assoc.infra.cache, assoc.executors.run, assoc.analysis.shared\n"
        "for plugin in ('assoc_fmat.plugin', 'assoc_weat.plugin', 'assoc_pll.plugin',\n"
        "               'assoc_sbert_topwords.plugin', 'assoc_chat_listing.plugin'):\n"
        "    __import__(plugin)\n"
        "assoc.plugins.registry()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr

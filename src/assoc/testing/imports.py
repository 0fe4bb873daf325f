"""Check that a plugin keeps ``assoc`` start-up cheap.

Every ``assoc`` command (``assoc --help`` included) imports every plugin's hook module and runs
its hooks, so whatever those import is paid by every command. Heavy libraries (numpy and pandas
included) belong inside the functions and methods that need them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Sequence

HEAVY_MODULES: tuple[str, ...] = (
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "pyarrow",
    "matplotlib",
    "sklearn",
    "torch",
    "transformers",
    "tokenizers",
    "sentence_transformers",
    "gensim",
    "tensorflow",
    "jax",
    "spacy",
    "nltk",
    "openai",
    "ray",
)

# Runs in a fresh interpreter: what `assoc` itself imports is the baseline, then the plugin's module is
# imported and its hooks called as the core calls them when plugins load.
_PROBE = textwrap.dedent("""
    import importlib, json, sys
    from importlib import metadata
    import click
    import assoc.plugins.manager
    before = set(sys.modules)
    target = sys.argv[1]
    found = [e for e in metadata.entry_points(group="assoc") if e.name == target]
    try:
        module = found[0].load() if found else importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name != target.split(".")[0] or found:
            raise
        print(json.dumps({"missing": True}))
        raise SystemExit(0)
    for hook in ("register_scorers", "register_analyses", "register_stimuli"):
        if callable(getattr(module, hook, None)):
            getattr(module, hook)(register=lambda *args, **kwargs: None)
    if callable(getattr(module, "register_commands", None)):
        module.register_commands(cli=click.Group("assoc"))
    new = sorted({name.split(".")[0] for name in set(sys.modules) - before})
    print(json.dumps({"module": module.__name__, "imported": new}))
""")


def check_plugin_imports(plugin: str, *, heavy: Sequence[str] = HEAVY_MODULES, timeout: float = 120) -> None:
    """Fail (``AssertionError``) if loading ``plugin`` imports a heavy library.

    ``plugin`` is the plugin's entry-point name (as ``assoc plugins`` shows it) or its hook
    module (``"my_plugin.plugin"``). In a fresh interpreter, the check imports the hook module
    and calls its hooks the way the core does when plugins load, then fails if any module in
    ``heavy`` (by default :data:`HEAVY_MODULES`: numpy, pandas, scipy, torch, transformers, ...)
    was imported that ``assoc`` itself had not imported. Use it in a plugin's tests::

        from assoc.testing import check_plugin_imports

        def test_start_up_stays_cheap():
            check_plugin_imports("my_plugin")
    """
    result = subprocess.run([sys.executable, "-c", _PROBE, plugin], capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise AssertionError(f"importing plugin {plugin!r} or running its hooks failed: {last}")
    report = json.loads(result.stdout.strip().splitlines()[-1])
    if report.get("missing"):
        raise AssertionError(
            f"no plugin or module {plugin!r} is installed (entry points of group 'assoc', or an importable module name)"
        )
    pulled = [name for name in heavy if name in report["imported"]]
    if pulled:
        raise AssertionError(
            f"loading plugin {plugin!r} (module {report['module']}, and its hooks) imports {', '.join(pulled)}; "
            "every assoc command, --help included, would pay for that. Import heavy libraries inside the "
            "functions and methods that use them, and keep the modules your hooks import (e.g. the scorer's "
            "module) free of them at top level."
        )

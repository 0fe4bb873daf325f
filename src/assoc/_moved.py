"""Old import paths of modules that moved into packages, kept working with a DeprecationWarning.

``import assoc.cache`` (say) gives the very module object :mod:`assoc.infra.cache`, so code that
imports or patches a name through the old path sees the same state as code using the new one.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from types import ModuleType

#: old module name -> new module name
MOVED: dict[str, str] = {
    "assoc.textfiles": "assoc.infra.textfiles",
    "assoc.scorer": "assoc.scoring.scorer",
    "assoc.scorer_output": "assoc.scoring.output",
    "assoc.units": "assoc.scoring.units",
    "assoc.component": "assoc.scoring.component",
    "assoc.options": "assoc.scoring.options",
    "assoc.accessor": "assoc.table.accessor",
    "assoc.hookspecs": "assoc.plugins.hookspecs",
    "assoc.builtin": "assoc.plugins.builtin",
    "assoc.cache": "assoc.infra.cache",
    "assoc.io": "assoc.infra.io",
    "assoc.progress": "assoc.infra.progress",
    "assoc.memory": "assoc.infra.memory",
    "assoc.prefetch": "assoc.infra.prefetch",
    "assoc.shared_analyses": "assoc.analysis",
    **{
        f"assoc.shared_analyses.{name}": f"assoc.analysis.{name}"
        for name in (
            "_common",
            "alpha",
            "convergence",
            "correlate",
            "correlation_table",
            "differentiability",
            "effect_size",
            "emmeans",
            "icc",
            "lmm",
            "reductions",
            "regress",
            "standardize",
            "stereotype",
            "valence_models",
        )
    },
}


class _AliasLoader:
    # Duck-typed (create_module/exec_module): importlib.abc costs ~15 ms of start-up to import.
    def __init__(self, new_name: str) -> None:
        self.new_name = new_name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} moved to {self.new_name}; import it from there (the old path will be removed)",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(self.new_name)

    def exec_module(self, module: ModuleType) -> None:
        # The module is the already-executed new one: nothing to run again.
        return None


class _MovedFinder:
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        new_name = MOVED.get(fullname)
        if new_name is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new_name))  # type: ignore[arg-type]


def install() -> None:
    """Put the finder of old paths on :data:`sys.meta_path` (once)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        # First, so that the path finder never loads a second copy of a moved module under its old name.
        sys.meta_path.insert(0, _MovedFinder())

"""No import circles in the core or the plugins (issue 21, item 2).

The graph has one node per module of ``src/assoc`` and ``plugins/*/src`` and an edge for every
``import`` of another of these modules, wherever it is written: at module level, inside a
function or method, and inside ``if TYPE_CHECKING:``. Function-level imports count because they
are how a lower layer reaches up at run time (the old default ``Scorer.score`` importing the
executors); ``TYPE_CHECKING`` imports count too (a decision: they never run, but they say which
layer knows about which, and the layering must read the same to the type checker as to the
interpreter; the review that asked for this test counted ``executors`` <-> ``scorer``, a circle
closed only by a ``TYPE_CHECKING`` import). ``from package import name`` is an edge to the
submodule ``package.name`` when that is a module, else to ``package``. The implicit import of a
module's parent packages is not an edge: a package that re-exports its submodules (``assoc.table``
from ``assoc.table.files``) would otherwise form a circle with each of them.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_files(roots: Iterable[Path]) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under each source root."""
    found = {}
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if any(part.endswith(".egg-info") for part in path.parts):
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, known: Iterable[str]) -> set[str]:
    """The modules of ``known`` that module ``name`` (file ``path``) imports, anywhere in its body."""
    known = set(known)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                if submodule in known:
                    out.add(submodule)
                elif module in known:
                    out.add(module)
    out.discard(name)
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def import_graph(roots: Iterable[Path]) -> dict[str, set[str]]:
    files = module_files(roots)
    return {name: imports_of(name, path, files) for name, path in files.items()}


def test_the_core_and_the_plugins_have_no_import_circle() -> None:
    roots = [ROOT / "src", *sorted((ROOT / "plugins").glob("*/src"))]
    graph = import_graph(roots)
    assert "assoc.scoring.scorer" in graph and "assoc_fmat.scorer" in graph  # the roots were read
    found = circles(graph)
    assert found == [], "import circles (break each by moving the shared code down a layer): " + "; ".join(
        " <-> ".join(circle) for circle in found
    )


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Write ``{relative path: text}`` under ``root``: a planted source tree for the checkers' own tests."""
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)


def test_the_check_finds_each_kind_of_circle(tmp_path: Path) -> None:
    """The checker itself: a circle closed at module level, in a function, under TYPE_CHECKING, relatively."""
    files = {
        "pkg/__init__.py": "from pkg.a import A\n",
        "pkg/a.py": "from pkg import b\nA = 1\n",
        "pkg/b.py": "def f():\n    from pkg.a import A\n    return A\n",
        "pkg/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.d import D\n",
        "pkg/d.py": "import pkg.c\nD = 1\n",
        "pkg/e.py": "from . import f\n",
        "pkg/f.py": "from .e import *\n",
        "pkg/g.py": "import pkg.a\n",  # imports into a circle, but is not part of one
    }
    write_tree(tmp_path, {relative: textwrap.dedent(text) for relative, text in files.items()})
    found = circles(import_graph([tmp_path]))
    assert found == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d"], ["pkg.e", "pkg.f"]]


# -- the plugin API (issue 33) -------------------------------------------------------------------

#: What a plugin's code may import from the core: the top level of ``assoc`` and the three
#: service modules (docs/plugin-api.md). Everything else is internal and may move.
PLUGIN_API = frozenset({"assoc", "assoc.lm", "assoc.stats", "assoc.infra"})


def plugin_roots() -> list[Path]:
    """The source roots of the plugins of this repository and of the example plugin of the docs."""
    return [*sorted((ROOT / "plugins").glob("*/src")), *sorted((ROOT / "docs" / "examples").glob("*/src"))]


def imports_outside_the_api(core_root: Path, roots: Iterable[Path]) -> list[str]:
    """``module -> core module`` for every import of a core module outside :data:`PLUGIN_API`."""
    core = module_files([core_root])
    found = []
    for root in roots:
        for name, path in module_files([root]).items():
            for target in sorted(imports_of(name, path, core)):
                if target not in PLUGIN_API:
                    found.append(f"{name} -> {target}")
    return found


def test_plugins_import_only_the_plugin_api() -> None:
    roots = plugin_roots()
    assert len(roots) >= 8, roots  # the seven plugins (clm and benchmarks included) and the example were found
    found = imports_outside_the_api(ROOT / "src", roots)
    assert found == [], (
        "plugins import core modules outside the plugin API (use top-level `assoc`, `assoc.lm`, "
        "`assoc.stats` or `assoc.infra`; docs/plugin-api.md): " + "; ".join(found)
    )


def test_the_api_check_finds_each_kind_of_internal_import(tmp_path: Path) -> None:
    """The checker itself: a submodule import, a module imported from a public package, in a function."""
    core = {
        "assoc/__init__.py": "",
        "assoc/lm/__init__.py": "",
        "assoc/lm/masked/__init__.py": "",
        "assoc/lm/masked/engine.py": "",
        "assoc/errors.py": "",
        "assoc/stats/__init__.py": "",
        "assoc/stats/association_tests.py": "",
    }
    plugin = {
        "plug/__init__.py": "from assoc import Scorer\nfrom assoc.lm import MaskedLM\nimport assoc.stats\n",
        "plug/a.py": "from assoc.errors import DataError\n",
        "plug/b.py": "def f():\n    from assoc.lm.masked import engine\n",
        "plug/c.py": "from assoc.stats import association_tests\n",
        "plug/d.py": "from assoc import errors\n",
    }
    write_tree(tmp_path / "core", core)
    write_tree(tmp_path / "plugin", plugin)
    found = imports_outside_the_api(tmp_path / "core", [tmp_path / "plugin"])
    assert found == [
        "plug.a -> assoc.errors",
        "plug.b -> assoc.lm.masked.engine",
        "plug.c -> assoc.stats.association_tests",
        "plug.d -> assoc.errors",
    ]


def test_every_name_of_the_plugin_api_resolves() -> None:
    """Each service module's ``__all__`` names something that imports (a lazy table cannot rot)."""
    import importlib

    for module_name in sorted(PLUGIN_API):
        module = importlib.import_module(module_name)
        for name in module.__all__:
            assert getattr(module, name) is not None, f"{module_name}.{name}"


def test_the_plugin_api_page_lists_every_name() -> None:
    """docs/plugin-api.md names every name of the four API modules, so the page is the list."""
    import importlib

    page = (ROOT / "docs" / "plugin-api.md").read_text(encoding="utf-8")
    missing = [
        f"{module_name}.{name}"
        for module_name in sorted(PLUGIN_API)
        for name in importlib.import_module(module_name).__all__
        if f"`{name}`" not in page
    ]
    assert missing == [], f"docs/plugin-api.md does not list: {', '.join(missing)}"


# -- no plugin imports another plugin (issue 41 item 7) -------------------------------------------------

#: Imports of one plugin's modules by another that exist today, each waiting for its removal. An entry
#: that is gone fails the test too, so the list is emptied when the import is. (The last one,
#: crows_scoring -> assoc_pll.sentences, went when PLL sentence scoring became assoc.lm.pseudo_log_likelihoods.)
KNOWN_PLUGIN_TO_PLUGIN_IMPORTS: list[str] = []


def imports_of_other_plugins(roots: Iterable[Path]) -> list[str]:
    """``module -> module`` for every import, in a plugin's source root, of a module of another plugin.

    Each root (``plugins/<name>/src``) holds the packages of one plugin; an import of any module of a
    package under another root is a plugin reaching past the wall (what it needs belongs in the core).
    """
    roots = list(roots)
    owner = {name: root for root in roots for name in module_files([root])}
    found = []
    for root in roots:
        for name, path in module_files([root]).items():
            for target in sorted(imports_of(name, path, owner)):
                if owner[target] != root:
                    found.append(f"{name} -> {target}")
    return found


def test_no_plugin_imports_another_plugin() -> None:
    found = imports_of_other_plugins(plugin_roots())
    assert found == KNOWN_PLUGIN_TO_PLUGIN_IMPORTS, (
        "a plugin imports another plugin's modules (share the code through the core: assoc, assoc.lm, "
        "assoc.stats, assoc.infra); or an import listed in KNOWN_PLUGIN_TO_PLUGIN_IMPORTS is gone: "
        f"remove it from the list. Found: {found}"
    )


def test_the_plugin_wall_check_finds_each_kind_of_import(tmp_path: Path) -> None:
    """The checker itself, on planted plugins: module level, in a function, under TYPE_CHECKING, a package."""
    files = {
        "one/src/plug_one/__init__.py": "",
        "one/src/plug_one/words.py": "WORDS = 1\n",
        "one/src/plug_one/inside.py": "from plug_one import words\nfrom . import words as again\n",
        "two/src/plug_two/__init__.py": "",
        "two/src/plug_two/a.py": "from plug_one.words import WORDS\n",
        "two/src/plug_two/b.py": "def f():\n    import plug_one.words\n",
        "two/src/plug_two/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import plug_one\n",
        "two/src/plug_two/d.py": "from plug_one import words\nimport assoc\n",
    }
    write_tree(tmp_path, files)
    found = imports_of_other_plugins([tmp_path / "one" / "src", tmp_path / "two" / "src"])
    assert found == [
        "plug_two.a -> plug_one.words",
        "plug_two.b -> plug_one.words",
        "plug_two.c -> plug_one",
        "plug_two.d -> plug_one.words",
    ]


# -- the language-model layer (issue 41) ---------------------------------------------------------

#: (modules under this prefix, may not import modules under that prefix, except these importers)
LAYER_RULES = (
    # the engines and kinds sit below the scoring layer: only the scorer bridge reaches up to it
    ("assoc.lm", "assoc.scoring", frozenset({"assoc.lm.scorer"})),
    # the masked and causal engines are siblings on the shared pieces, never built on each other
    ("assoc.lm.masked", "assoc.lm.causal", frozenset()),
    ("assoc.lm.causal", "assoc.lm.masked", frozenset()),
)


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_violations(graph: dict[str, set[str]], rules: Iterable[tuple[str, str, frozenset[str]]]) -> list[str]:
    """``importer -> imported`` for every import that a rule of ``rules`` forbids."""
    found = []
    for source, target, allowed in rules:
        for name in sorted(graph):
            if not _under(name, source) or name in allowed:
                continue
            found += [f"{name} -> {other}" for other in sorted(graph[name]) if _under(other, target)]
    return found


def test_the_language_model_layer_keeps_its_layers() -> None:
    """Inside assoc.lm only the scorer bridge imports assoc.scoring; lm/masked and lm/causal never import each other."""
    graph = import_graph([ROOT / "src"])
    assert {"assoc.lm.scorer", "assoc.lm.masked.engine", "assoc.lm.causal.engine"} <= set(graph)
    assert "assoc.scoring.scorer" in graph["assoc.lm.scorer"]  # the bridge is read, and it does bridge
    found = layer_violations(graph, LAYER_RULES)
    assert found == [], (
        "assoc.lm keeps its layers (docs/architecture.md): only assoc.lm.scorer imports assoc.scoring, and the "
        "masked and causal engines share only the pieces beside them (batching, model_cache, compute, loading, "
        "identity): " + "; ".join(found)
    )


def test_the_layer_check_finds_each_planted_violation(tmp_path: Path) -> None:
    """The checker itself: an engine module importing the scoring layer, and each engine importing the other."""
    files = {
        "assoc/__init__.py": "",
        "assoc/scoring/__init__.py": "",
        "assoc/scoring/scorer.py": "",
        "assoc/lm/__init__.py": "",
        "assoc/lm/scorer.py": "from assoc.scoring.scorer import Scorer\n",  # the bridge: allowed
        "assoc/lm/batching.py": "",
        "assoc/lm/masked/__init__.py": "",
        "assoc/lm/masked/engine.py": "from assoc.lm.batching import plan_batches\nfrom assoc.scoring import scorer\n",
        "assoc/lm/masked/loading.py": "def f():\n    from assoc.lm.causal.engine import CausalLM\n",
        "assoc/lm/causal/__init__.py": "",
        "assoc/lm/causal/engine.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from assoc.lm.masked import engine\n",
    }
    write_tree(tmp_path, files)
    found = layer_violations(import_graph([tmp_path]), LAYER_RULES)
    assert found == [
        "assoc.lm.masked.engine -> assoc.scoring.scorer",
        "assoc.lm.masked.loading -> assoc.lm.causal.engine",
        "assoc.lm.causal.engine -> assoc.lm.masked.engine",
    ]

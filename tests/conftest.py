"""Shared fixtures for the core tests."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import assoc
from assoc.plugins import manager as plugins

HERE = Path(__file__).parent
#: The example plugin of docs/write-a-plugin.md (not installed by `make setup`: see :func:`example_plugin`).
EXAMPLE = HERE.parent / "docs" / "examples" / "assoc-example"


def install_example_plugin(target: Path) -> Path:
    """``pip install`` the example plugin into the folder ``target`` (offline, from a copy of its source).

    A copy, so that the build leaves nothing in the repository; ``--no-build-isolation`` builds it with the
    setuptools of this environment (the ``test`` extra), so nothing is downloaded. Returns ``target``.
    """
    project = target.parent / f"{target.name}-source"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-cache-dir"]
    command += ["--no-deps", "--no-index", "--no-build-isolation", "--target", str(target), str(project)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"pip could not install the example plugin from {EXAMPLE}: {done.stderr.strip()[-2000:]}")
    return target


@pytest.fixture(scope="session")
def example_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """The example plugin (scorer ``char_ngram``, analysis ``cell_means``, executor ``threadpool``), installed.

    ``make setup`` does not install it: the first test that asks for this fixture installs it with pip
    into a temporary folder of the session, which goes on ``sys.path`` and ``PYTHONPATH``, so it loads
    through its entry point like any installed plugin, in this process (also after ``plugins.reset()``)
    and in every process a test starts (the CLI, Ray workers). Returns that folder; ``None`` where an
    environment has the plugin installed already. Core tests that use its scorer ask for it
    (``pytestmark = pytest.mark.usefixtures("example_plugin")``).
    """
    from importlib import metadata

    if any(entry.name == "example" for entry in metadata.entry_points(group="assoc")):
        return None
    site = install_example_plugin(tmp_path_factory.mktemp("example-plugin") / "site")
    sys.path.insert(0, str(site))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    importlib.invalidate_caches()
    plugins.reset()  # a registry loaded before the install would not see it
    return site


@pytest.fixture(scope="session")
def ray_session() -> Iterator[str]:
    """One local Ray (2 CPUs) for every test that runs work on Ray; its GCS address. Stopped after the last of them.

    Starting Ray costs seconds, so it starts once; each run's actors are still started (and stopped) by
    the run. Its workers can import ``tests/unit_scorers.py``. A test using it is marked ``ray`` and
    ``slow`` (``pytest -m "not slow"`` leaves it out).
    """
    import ray  # not importorskip: CI installs assoc[ray] (scripts/setup.sh), and a missing Ray must fail the run

    if ray.is_initialized():
        ray.shutdown()
    path = os.pathsep.join([str(HERE), *sys.path])
    env = {"PYTHONPATH": path, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that use Ray ``ray`` and ``slow``."""
    for item in items:
        if "ray_session" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.ray)
            item.add_marker(pytest.mark.slow)


_LAST_RAY_TEST: list[str] = []


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember the last test to run that uses Ray (after ``-k``/``-m`` selection)."""
    users = [item.nodeid for item in session.items if "ray_session" in getattr(item, "fixturenames", ())]
    _LAST_RAY_TEST[:] = users[-1:]


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop Ray after the last test that uses it: its idle processes would compete with every later test."""
    if _LAST_RAY_TEST and item.nodeid == _LAST_RAY_TEST[0] and "ray" in sys.modules:
        import ray

        if ray.is_initialized():
            ray.shutdown()


@pytest.fixture
def fresh_plugins() -> Iterator[None]:
    """Reload plugins before and after a test that changes what is installed or allowed."""
    plugins.reset()
    yield
    plugins.reset()


@pytest.fixture
def plugin_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory on ``sys.path`` (and ``PYTHONPATH`` for subprocesses) for throw-away plugin modules."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site) + (":" + ":".join(sys.path)))
    return site


def _write_module(site: Path, name: str, source: str) -> str:
    module = f"assoc_fake_{name}"
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    sys.modules.pop(module, None)
    return module


@pytest.fixture
def fake_plugin(plugin_site: Path, fresh_plugins: None) -> Callable[[str, str], Path]:
    """Register a throw-away plugin in this process, with the public :func:`assoc.plugins.register`.

    ``fake_plugin(name, source)`` writes ``source`` as module ``assoc_fake_<name>`` (importable,
    also by subprocesses and Ray workers, from a directory on ``sys.path`` and ``PYTHONPATH``),
    imports it and registers it under ``name``. Tests about entry points themselves (discovery,
    ``ASSOC_PLUGINS``, a module that fails to import, a CLI run in another process) use
    :func:`fake_distribution` instead.
    """

    def install(name: str, source: str) -> Path:
        module = importlib.import_module(_write_module(plugin_site, name, source))
        plugins.register(module, name=name)
        return plugin_site

    return install


@pytest.fixture
def fake_distribution(plugin_site: Path, fresh_plugins: None) -> Callable[[str, str], Path]:
    """Install a throw-away plugin distribution: a module plus a dist-info with an ``assoc`` entry point.

    ``fake_distribution(name, source)`` writes ``source`` as module ``assoc_fake_<name>`` and
    registers it under the entry-point name ``name``, as ``pip install`` would; plugins load it
    (or fail to) the next time they load. Only for tests of entry-point discovery itself.
    """

    def install(name: str, source: str) -> Path:
        module = _write_module(plugin_site, name, source)
        dist = plugin_site / f"assoc_fake_{name}-0.0.1.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: assoc-fake-{name}\nVersion: 0.0.1\n")
        (dist / "entry_points.txt").write_text(f"[assoc]\n{name} = {module}\n")
        plugins.reset()
        return plugin_site

    return install


SCORER_SOURCE = """
from assoc import hookimpl, Scorer, Option
from assoc.table.schema import from_records

class {cls}(Scorer):
    name = "{scorer}"
    description = "test scorer"
    citation = "none"
    measure = "length_difference"
    requires_models = False
    default_models = ("len",)
    options = (Option("scale", float, 1.0, "multiplier"),)

    def score(self, stimuli, models, *, progress):
        rows = [dict(model=m, target_group=tg, target=t, attribute_group=ag, attribute=a,
                     value=self.params["scale"] * (len(t) - len(a)))
                for m in models for d in stimuli for tg, t, ag, a in d.word_pairs()]
        return from_records(rows, scorer=self.name, measure=self.measure)

@hookimpl
def register_scorers(register):
    register({cls})
"""


@pytest.fixture
def scorer_source() -> Callable[..., str]:
    """Source of a plugin module registering a tiny scorer named ``scorer``."""

    def make(scorer: str, cls: str = "LengthScorer") -> str:
        return SCORER_SOURCE.format(scorer=scorer, cls=cls)

    return make


MODEL_FREE_SCORER_SOURCE = """
import warnings
import pandas as pd
from assoc import hookimpl, Scorer
from assoc.table.schema import from_records

class ModelFree(Scorer):
    name = "{scorer}"
    description = "test scorer"
    citation = "none"
    measure = "m"
    requires_models = False

    def score(self, stimuli, models, *, progress):
{body}

@hookimpl
def register_scorers(register):
    register(ModelFree)
"""


@pytest.fixture
def model_free_scorer_source() -> Callable[[str, str], str]:
    """Source of a plugin module registering a model-free scorer ``scorer`` whose ``score`` runs ``body``."""

    def make(scorer: str, body: str) -> str:
        indented = textwrap.indent(textwrap.dedent(body).strip(), " " * 8)
        return MODEL_FREE_SCORER_SOURCE.format(scorer=scorer, body=indented)

    return make


def _length_scorer(scorer: str, cls: str = "LengthScorer") -> type[assoc.Scorer]:
    """The scorer of :data:`SCORER_SOURCE` as a class in this process: ``scale * (len(target) - len(attribute))``."""

    def score(self: assoc.Scorer, stimuli: assoc.Stimuli, models: list[str], *, progress: bool) -> Any:
        rows = [
            dict(
                model=m,
                target_group=tg,
                target=t,
                attribute_group=ag,
                attribute=a,
                value=self.params["scale"] * (len(t) - len(a)),
            )
            for m in models
            for d in stimuli
            for tg, t, ag, a in d.word_pairs()
        ]
        return assoc.from_records(rows, scorer=self.name, measure=self.measure)

    namespace = {
        "name": scorer,
        "description": "test scorer",
        "citation": "none",
        "measure": "length_difference",
        "requires_models": False,
        "default_models": ("len",),
        "options": (assoc.Option("scale", float, 1.0, "multiplier"),),
        "score": score,
        "__module__": __name__,
    }
    return type(cls, (assoc.Scorer,), namespace)


@pytest.fixture
def length_scorer() -> Callable[..., type[assoc.Scorer]]:
    """``length_scorer(name, cls="LengthScorer")``: the class of :func:`scorer_source`'s module, in this process."""
    return _length_scorer


@pytest.fixture
def inline_scorer(inline_plugin: Callable[..., plugins.PluginInfo]) -> Callable[..., type[assoc.Scorer]]:
    """``inline_scorer(name, score, **attributes)``: register in-line a model-free scorer running ``score(self)``.

    The class :func:`model_free_scorer_source` writes, without a module on disk: use it where no other
    process imports the plugin.
    """

    def install(name: str, score: Callable[[Any], Any], **attributes: Any) -> type[assoc.Scorer]:
        def run(self: assoc.Scorer, stimuli: Any, models: Any, *, progress: bool) -> Any:
            return score(self)

        namespace = {
            "name": name,
            "description": "test scorer",
            "citation": "none",
            "measure": "m",
            "requires_models": False,
            "score": run,
            "__module__": __name__,
            **attributes,
        }
        cls = type("ModelFree", (assoc.Scorer,), namespace)
        inline_plugin(name, cls)
        return cls

    return install


@pytest.fixture
def inline_plugin(fresh_plugins: None) -> Callable[..., plugins.PluginInfo]:
    """Register scorer and analysis classes of this process as the plugin ``name`` (``assoc.plugins.register``).

    ``inline_plugin(name, *classes)``: nothing is written to disk, so use it where no other process
    (a CLI subprocess, a Ray worker) must import the plugin; :func:`fake_plugin` writes a module for those.
    """

    def install(name: str, *classes: type) -> plugins.PluginInfo:
        scorers = [c for c in classes if issubclass(c, assoc.Scorer)]
        analyses = [c for c in classes if issubclass(c, assoc.Analysis)]

        class Plugin:
            @assoc.hookimpl
            def register_scorers(self, register: Any) -> None:
                for scorer in scorers:
                    register(scorer)

            @assoc.hookimpl
            def register_analyses(self, register: Any) -> None:
                for analysis in analyses:
                    register(analysis)

        return plugins.register(Plugin(), name=name)

    return install

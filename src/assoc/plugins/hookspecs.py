"""Hook specifications: the complete list of what a plugin can provide.

A plugin is a module registered under the ``assoc`` entry-point group that
implements any of these hooks with `hookimpl`::

    # pyproject.toml
    [project.entry-points.assoc]
    my_plugin = "my_package.plugin"

    # my_package/plugin.py
    from assoc import hookimpl

    @hookimpl
    def register_scorers(register):
        register(MyScorer)

Each hook is called once, when the plugin manager is first used (by
``assoc.scorers()``, ``assoc.score()``, any CLI command, ...). assoc calls each
plugin's implementation itself, one plugin at a time (not through ``pm.hook``),
so that a failing plugin is isolated and every registration is credited to its
plugin; pluggy's ordering and wrapping markers therefore do not apply:
``hookimpl(hookwrapper=True)`` / ``hookimpl(wrapper=True)`` is refused (the plugin
is reported as failed by ``assoc plugins``) and ``tryfirst``/``trylast`` are
ignored with a [`PluginWarning`][assoc.errors.PluginWarning]. Hooks must be cheap: import
heavy libraries (torch, transformers, gensim, ...) inside the scorer's methods,
never at plugin import time, so ``assoc --help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import pluggy

if TYPE_CHECKING:
    import click

    from assoc.analysis.base import Analysis
    from assoc.benchmark.declaration import Benchmark
    from assoc.executors.base import Executor
    from assoc.lm.kinds import LanguageModel
    from assoc.scoring.scorer import Scorer
    from assoc.stimuli.sets import Stimuli

PROJECT = "assoc"

hookspec = pluggy.HookspecMarker(PROJECT)
#: Decorator for plugin functions that implement a hook.
hookimpl = pluggy.HookimplMarker(PROJECT)


class RegisterScorer(Protocol):
    """The ``register`` callable passed to [`register_scorers`][assoc.plugins.hookspecs.register_scorers]."""

    def __call__(self, scorer: type[Scorer], /) -> None:
        """Register one :class:`~assoc.scoring.scorer.Scorer` subclass under its ``name``."""


class RegisterAnalysis(Protocol):
    """The ``register`` callable passed to [`register_analyses`][assoc.plugins.hookspecs.register_analyses]."""

    def __call__(self, analysis: type[Analysis], /) -> None:
        """Register one :class:`~assoc.analysis.Analysis` subclass under its ``name``."""


class RegisterStimuli(Protocol):
    """The ``register`` callable passed to [`register_stimuli`][assoc.plugins.hookspecs.register_stimuli]."""

    def __call__(self, name: str, loader: Callable[[], Stimuli], description: str = "", /) -> None:
        """Register a bundled stimuli set: ``loader()`` builds it when a user names it."""


class RegisterExecutor(Protocol):
    """The ``register`` callable passed to [`register_executors`][assoc.plugins.hookspecs.register_executors]."""

    def __call__(self, executor: type[Executor], /) -> None:
        """Register one [`Executor`][assoc.Executor] subclass under its ``name``."""


class RegisterModelKind(Protocol):
    """The ``register`` callable passed to [`register_model_kinds`][assoc.plugins.hookspecs.register_model_kinds]."""

    def __call__(self, kind: type[LanguageModel], /) -> None:
        """Register one `assoc.lm.LanguageModel` subclass under its ``kind`` name."""


class RegisterBenchmark(Protocol):
    """The ``register`` callable passed to [`register_benchmarks`][assoc.plugins.hookspecs.register_benchmarks]."""

    def __call__(self, benchmark: Benchmark, /) -> None:
        """Register one [`Benchmark`][assoc.Benchmark] under its ``name``."""


@hookspec
def register_scorers(register: RegisterScorer) -> None:
    """Register scorer classes.

    Called once when plugins load. Call ``register(ScorerSubclass)`` for each
    scorer; its ``name`` attribute is the name users type
    (``assoc score --scorer NAME``). Two plugins registering the same name is a
    [`PluginError`][assoc.PluginError].
    """


@hookspec
def register_analyses(register: RegisterAnalysis) -> None:
    """Register analysis classes.

    Called once when plugins load. Call ``register(AnalysisSubclass)`` for each
    analysis (``assoc analyze NAME``). Names are unique across plugins.
    """


@hookspec
def register_stimuli(register: RegisterStimuli) -> None:
    """Register bundled stimuli sets that users load by name.

    Called once when plugins load. Call ``register(name, loader, description)``; ``loader()`` returns a
    [`Stimuli`][assoc.Stimuli] and is called only when the set is used.
    Users then write ``--stimuli NAME`` or ``--stimuli NAME:design1,design2``. A loader that
    takes one argument also reads the user's own copy of the data: ``--stimuli NAME:<path>``
    (a path that exists, or any text with a path separator) calls ``loader("<path>")``.
    """


@hookspec
def register_executors(register: RegisterExecutor) -> None:
    """Register executor classes: where a study's work units run.

    Called once when plugins load. Call ``register(ExecutorSubclass)`` for each executor;
    its ``name`` is what users type (``assoc score --executor NAME``,
    ``assoc.score(..., executor=NAME)``), its ``description`` is its line in ``--executor``'s
    help, and each [`Option`][assoc.Option] of its ``cli_options`` becomes a command-line option
    ``--NAME-OPTION`` (``ray``'s ``address`` is ``--ray-address``) whose value goes to the
    executor's constructor. The core registers ``local`` and ``ray`` this way. Names are unique
    across plugins.
    """


@hookspec
def register_model_kinds(register: RegisterModelKind) -> None:
    """Register model kinds: the kinds of language model that answer requests (``docs/requests.md``).

    Called once when plugins load. Call ``register(LanguageModelSubclass)`` for each kind; its
    ``kind`` is its name (``"masked"``, ``"causal"``, ``"chat"``), its ``prefix`` (when it has one)
    is how a model spec names it (``chat:gpt-4o``), its ``serves`` the request kinds it answers and
    its ``options`` the options every scorer that accepts it declares (`assoc.lm.options_for`).
    The one loader (`assoc.lm.open_model`) finds a model's kind among the registered ones, and
    ``assoc plugins`` lists them. The core registers ``masked``, ``causal`` and ``chat`` this way. Kind names
    and prefixes are unique across plugins.
    """


@hookspec
def register_benchmarks(register: RegisterBenchmark) -> None:
    """Register benchmarks: what ``assoc benchmark run`` (`assoc.run_benchmarks`) runs on every model.

    Called once when plugins load, after the other registering hooks. Call ``register(Benchmark(name,
    scorer, stimuli, analysis, description))`` for each benchmark: it names, by their registered names,
    the scorer that scores a model on it, its default stimuli and the analysis whose headline numbers
    summarise it (``docs/benchmarks-run.md``). The request kinds it needs are its scorer's, so a model kind
    its scorer does not take is listed as skipped. Names are unique across plugins.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add command-line commands.

    Called when the CLI starts, with the top-level ``assoc`` click group; add a
    sub-group named after the plugin (``assoc fmat ...``). Import heavy
    libraries inside the command functions, not at module level.
    """

"""Finding and loading plugins, and the registries of what they provide.

Plugins are modules registered under the ``assoc`` entry-point group. Loading
is lazy (the first call of any function here) and fault tolerant: a plugin that
fails to import, or whose hook raises, is recorded with the reason and skipped,
so one broken plugin never breaks the others or the CLI (``assoc plugins``
shows it).

The environment variable ``ASSOC_PLUGINS`` restricts which entry-point plugins
load: a comma-separated list of plugin (entry-point) names; set but empty means
none. The core's own analyses (``assoc.plugins.builtin``) always load.
"""

from __future__ import annotations

import importlib
import inspect
import os
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pluggy

from assoc.errors import PluginError, PluginWarning, StimuliError, UnknownNameError
from assoc.plugins import hookspecs as hookspecs

if TYPE_CHECKING:
    import click

    from assoc.analysis.base import Analysis
    from assoc.benchmark.declaration import Benchmark
    from assoc.executors.base import Executor
    from assoc.lm.kinds import LanguageModel
    from assoc.scoring.scorer import Scorer
    from assoc.stimuli.sets import Stimuli

ENTRY_POINT_GROUP = "assoc"
ENV_ALLOWLIST = "ASSOC_PLUGINS"
BUILTIN_PLUGINS = ("assoc.plugins.builtin",)


@dataclass
class PluginInfo:
    """What ``assoc plugins`` reports about one plugin."""

    name: str
    module: str
    distribution: str = ""
    version: str = ""
    status: str = "loaded"  # loaded | failed | disabled
    error: str = ""
    scorers: list[str] = field(default_factory=list)
    analyses: list[str] = field(default_factory=list)
    stimuli: list[str] = field(default_factory=list)
    executors: list[str] = field(default_factory=list)
    model_kinds: list[str] = field(default_factory=list)
    benchmarks: list[str] = field(default_factory=list)


@dataclass
class Registered:
    """One registered component (scorer, analysis, executor, model kind, stimuli loader, benchmark), its origin."""

    name: str
    obj: Any
    plugin: str
    description: str = ""


class PluginRegistry:
    """The plugin manager plus the registries filled by the hooks."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.infos: dict[str, PluginInfo] = {}
        self.scorers: dict[str, Registered] = {}
        self.analyses: dict[str, Registered] = {}
        self.stimuli: dict[str, Registered] = {}
        self.executors: dict[str, Registered] = {}
        self.model_kinds: dict[str, Registered] = {}
        self.benchmarks: dict[str, Registered] = {}
        # (kind, name) -> the plugins that register it, for names registered by more than one plugin
        self.clashes: dict[tuple[str, str], list[str]] = {}
        self.clash_messages: list[str] = []  # one line per clash, for listings and warnings
        self._loaded = False
        self._lock = threading.Lock()

    # -- loading ------------------------------------------------------------------------------------

    def load(self) -> None:
        """Import every allowed entry-point plugin and collect what its hooks register (once)."""
        from importlib import metadata  # here, not at module level: `import assoc` stays cheap

        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            for module_name in BUILTIN_PLUGINS:
                self._register_module("assoc", module_name, distribution="assoc")
            allow = os.environ.get(ENV_ALLOWLIST)
            allowed = None if allow is None else {p.strip() for p in allow.split(",") if p.strip()}
            for entry_point in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
                dist = getattr(entry_point, "dist", None)
                info = PluginInfo(
                    name=entry_point.name,
                    module=entry_point.value,
                    distribution=dist.name if dist else "",
                    version=dist.version if dist else "",
                )
                if entry_point.name in self.infos:
                    info.status, info.error = "failed", "another plugin is already registered under this name"
                    self.infos[f"{entry_point.name} ({entry_point.value})"] = info
                    continue
                self.infos[entry_point.name] = info
                if allowed is not None and entry_point.name not in allowed:
                    info.status = "disabled"
                    info.error = f"not listed in {ENV_ALLOWLIST}"
                    continue
                try:
                    module = entry_point.load()
                    self.pm.register(module, name=entry_point.name)
                except Exception as exc:  # a broken plugin must not break the others
                    info.status, info.error = "failed", f"{type(exc).__name__}: {exc}"
            self._collect()

    def _register_module(self, name: str, module_name: str, distribution: str) -> None:
        from assoc.version import __version__

        info = PluginInfo(name=name, module=module_name, distribution=distribution, version=__version__)
        self.infos[name] = info
        try:
            self.pm.register(importlib.import_module(module_name), name=name)
        except Exception as exc:
            info.status, info.error = "failed", f"{type(exc).__name__}: {exc}"

    def add(self, plugin: object, name: str) -> PluginInfo:
        """Register ``plugin`` (a module or any object with hook implementations) in this process.

        Its hooks run at once, as an entry point's do when plugins load; see :func:`register`.
        """
        self.load()
        if not isinstance(name, str) or not name.strip():
            raise PluginError(f"a plugin registered in-process needs a non-empty name, got {name!r}")
        if name in self.infos:
            raise PluginError(f"a plugin named {name!r} is already registered ({self.infos[name].module})")
        module = getattr(plugin, "__name__", None) or f"{type(plugin).__module__}.{type(plugin).__qualname__}"
        info = PluginInfo(name=name, module=str(module), version=str(getattr(plugin, "__version__", "")))
        self.pm.register(plugin, name=name)
        self.infos[name] = info
        self._collect(only=name)
        return info

    def remove(self, name: str) -> None:
        """Undo :meth:`add` (or forget an entry-point plugin): its names disappear, clashes are re-judged."""
        self.load()
        if name not in self.infos:
            raise UnknownNameError("plugin", name, self.infos)
        del self.infos[name]
        if self.pm.get_plugin(name) is not None:
            self.pm.unregister(name=name)
        # Rebuild every registry from the remaining plugins: a name that clashed may now be unique.
        for info in self.infos.values():
            for listed in (
                info.scorers,
                info.analyses,
                info.stimuli,
                info.executors,
                info.model_kinds,
                info.benchmarks,
            ):
                listed.clear()
            if info.status == "failed" and info.error.startswith(_REGISTERING_HOOKS):
                info.status, info.error = "loaded", ""  # judged again below
        for registered in (
            self.scorers,
            self.analyses,
            self.stimuli,
            self.executors,
            self.model_kinds,
            self.benchmarks,
            self.clashes,
        ):
            registered.clear()
        self._collect()

    def _collect(self, only: str | None = None) -> None:
        """Call each plugin's hooks one plugin at a time, so every registration knows its plugin.

        A name registered by two plugins is a clash: both plugins are credited with it, the
        registry keeps it (so listings show it) but looking it up is a :class:`PluginError`;
        every other name keeps working. ``only``: call the hooks of that plugin alone (one
        registered in-process after the others had loaded).
        """
        clashes = self.clashes
        for hook_name, registry, kind in (
            ("register_scorers", self.scorers, "scorer"),
            ("register_analyses", self.analyses, "analysis"),
            ("register_stimuli", self.stimuli, "stimuli set"),
            ("register_executors", self.executors, "executor"),
            ("register_model_kinds", self.model_kinds, "model kind"),
            ("register_benchmarks", self.benchmarks, "benchmark"),
        ):
            hook = getattr(self.pm.hook, hook_name)
            for impl in hook.get_hookimpls():
                plugin = impl.plugin_name
                if only is not None and plugin != only:
                    continue
                info = self.infos.get(plugin)

                def register(
                    obj: Any,
                    loader: Any = None,
                    description: str = "",
                    *,
                    _plugin: str = plugin,
                    _registry: dict[str, Registered] = registry,
                    _kind: str = kind,
                    _info: PluginInfo | None = info,
                ) -> None:
                    if _kind == "stimuli set":
                        name, target, text = str(obj), loader, description
                        if not callable(target):
                            raise PluginError(f"stimuli set {name!r}: loader must be callable")
                    elif _kind == "model kind":
                        name, target, text = _model_kind(obj, _registry, _plugin)
                    elif _kind == "benchmark":
                        name, target, text = _benchmark(obj)
                    else:
                        name, target = getattr(obj, "name", ""), obj
                        text = getattr(obj, "description", "")
                        if not name:
                            raise PluginError(f"{_kind} {obj!r} has no name")
                        if inspect.isabstract(obj):
                            missing = ", ".join(f"{m}()" for m in sorted(obj.__abstractmethods__))
                            raise PluginError(f"{_kind} {name!r} ({obj.__qualname__}) does not implement {missing}")
                    if name in _registry and _registry[name].plugin != _plugin:
                        owners = clashes.setdefault((_kind, name), [_registry[name].plugin])
                        if _plugin not in owners:
                            owners.append(_plugin)
                        _registry[name].description = f"CLASH: {_clash_text(_kind, name, owners)}"
                    else:
                        _registry[name] = Registered(name, target, _plugin, text)
                    if _info is not None:
                        listed = {
                            "scorer": _info.scorers,
                            "analysis": _info.analyses,
                            "stimuli set": _info.stimuli,
                            "executor": _info.executors,
                            "model kind": _info.model_kinds,
                            "benchmark": _info.benchmarks,
                        }
                        listed[_kind].append(name)

                if _unsupported_marker(impl, hook_name, info):
                    continue
                try:
                    impl.function(register=register)
                except Exception as exc:
                    if info is not None:
                        info.status, info.error = "failed", f"{hook_name}: {type(exc).__name__}: {exc}"
        self.clash_messages = [_clash_text(kind, name, owners) for (kind, name), owners in clashes.items()]

    def check_clash(self, kind: str, name: str) -> None:
        """Raise :class:`PluginError` if several plugins registered ``name``.

        ``kind`` is scorer, analysis, stimuli set or executor. Clashes of other names are only
        warned about (:class:`PluginWarning`).
        """
        self.load()
        owners = self.clashes.get((kind, name))
        if owners:
            raise PluginError(
                f"{_clash_text(kind, name, owners)}. Uninstall one of them or restrict plugins with {ENV_ALLOWLIST}."
            )
        for clash in self.clash_messages:
            warnings.warn(f"{clash} (using that name is an error)", PluginWarning, stacklevel=4)

    def register_commands(self, cli: click.Group) -> None:
        """Let every plugin add its commands to the ``assoc`` click group."""
        self.load()
        for impl in self.pm.hook.register_commands.get_hookimpls():
            if _unsupported_marker(impl, "register_commands", self.infos.get(impl.plugin_name)):
                continue
            try:
                impl.function(cli=cli)
            except Exception as exc:
                info = self.infos.get(impl.plugin_name)
                if info is not None:
                    info.status, info.error = "failed", f"register_commands: {type(exc).__name__}: {exc}"


_REGISTERING_HOOKS = (
    "register_scorers",
    "register_analyses",
    "register_stimuli",
    "register_executors",
    "register_model_kinds",
    "register_benchmarks",
)


def _model_kind(obj: Any, registered: dict[str, Registered], plugin: str) -> tuple[str, Any, str]:
    """(name, class, description) of a model kind being registered, or a :class:`PluginError` saying what is wrong.

    A kind is a :class:`~assoc.lm.kinds.LanguageModel` subclass with a ``kind`` name, that implements
    ``open``, serves only known request kinds, and whose ``prefix`` no other plugin's kind uses.
    """
    from assoc.lm.kinds import LanguageModel
    from assoc.lm.requests import REQUEST_KINDS

    if not (isinstance(obj, type) and issubclass(obj, LanguageModel)):
        raise PluginError(f"model kind {obj!r} is not a subclass of assoc.lm.LanguageModel")
    name = str(getattr(obj, "kind", "") or "")
    if not name:
        raise PluginError(f"model kind {obj.__qualname__} has no `kind` name")
    if inspect.isabstract(obj):
        missing = ", ".join(f"{m}()" for m in sorted(obj.__abstractmethods__))
        raise PluginError(f"model kind {name!r} ({obj.__qualname__}) does not implement {missing}")
    unknown = sorted(set(obj.serves) - set(REQUEST_KINDS))
    if unknown:
        raise PluginError(
            f"model kind {name!r} serves unknown request kind(s) {', '.join(unknown)} "
            f"(known: {', '.join(REQUEST_KINDS)})"
        )
    prefix = obj.prefix
    for other in registered.values():
        if prefix and other.name != name and getattr(other.obj, "prefix", None) == prefix and other.plugin != plugin:
            raise PluginError(
                f"model kind {name!r}: its prefix {prefix + ':'!r} is the prefix of kind {other.name!r} "
                f"(plugin {other.plugin!r})"
            )
    return name, obj, str(obj.description or "")


def _benchmark(obj: Any) -> tuple[str, Any, str]:
    """(name, benchmark, description) of a benchmark being registered; a :class:`PluginError` when it is none."""
    from assoc.benchmark.declaration import Benchmark

    if not isinstance(obj, Benchmark):
        raise PluginError(f"benchmark {obj!r} is not an assoc.Benchmark")
    return obj.name, obj, obj.description


def _unsupported_marker(impl: Any, hook_name: str, info: PluginInfo | None) -> bool:
    """Report pluggy markers that have no effect here; true when the implementation must be skipped.

    The registry calls each plugin's hook implementations itself, one plugin at a time, instead
    of through ``pm.hook``: that is what isolates a failing plugin and credits every registration
    to its plugin. pluggy's call-order and wrapper markers therefore do not apply: a
    ``hookwrapper``/``wrapper`` implementation (a generator) is refused with the plugin marked
    failed, and ``tryfirst``/``trylast`` are ignored with a :class:`PluginWarning`.
    """
    plugin = impl.plugin_name
    if impl.hookwrapper or getattr(impl, "wrapper", False):
        if info is not None:
            info.status, info.error = (
                "failed",
                (
                    f"{hook_name}: hookwrapper/wrapper implementations are not "
                    "supported (assoc calls each plugin's hooks itself)"
                ),
            )
        return True
    if impl.tryfirst or impl.trylast:
        warnings.warn(
            f"plugin {plugin!r}: tryfirst/trylast on {hook_name} has no effect (assoc calls each "
            "plugin's hooks itself; names are unique, so order does not matter)",
            PluginWarning,
            stacklevel=2,
        )
    return False


_REGISTRY: PluginRegistry | None = None


def registry() -> PluginRegistry:
    """The process-wide registry (plugins load on first use)."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = PluginRegistry()
    _REGISTRY.load()
    return _REGISTRY


def reset() -> None:
    """Forget loaded plugins, and those registered in-process (tests use it after changing ``ASSOC_PLUGINS``)."""
    global _REGISTRY
    _REGISTRY = None


def register(plugin: object, name: str) -> PluginInfo:
    """Register a plugin object in this process, as if it were installed with an entry point.

    ``plugin`` is a module or any object whose attributes are hook implementations
    (functions marked with :data:`assoc.hookimpl`); its hooks run at once, and what they
    register is available to :func:`assoc.score`, :func:`assoc.analyze`, ``assoc.scorers()``
    and the rest of this process, like pluggy's ``pm.register`` in simonw/llm's tests::

        class MyPlugin:
            @assoc.hookimpl
            def register_scorers(self, register):
                register(MyScorer)

        assoc.plugins.register(MyPlugin(), name="my-plugin")

    Returns the plugin's :class:`PluginInfo` (``status`` ``"failed"`` with the reason when a hook
    raised, exactly as for an installed plugin). A name already taken by a plugin is a
    :class:`~assoc.errors.PluginError`; a scorer, analysis or stimuli-set name that another
    plugin registers too is a clash, as between installed plugins. :func:`unregister` removes
    the plugin; :func:`reset` forgets every plugin, in-process ones included.
    """
    return registry().add(plugin, name)


def unregister(name: str) -> None:
    """Remove the plugin registered as ``name`` (:func:`register`) and everything it registered."""
    registry().remove(name)


def failed_plugins() -> list[PluginInfo]:
    """The plugins that failed to load (import error, or a hook that raised), with the reason."""
    return [info for info in registry().infos.values() if info.status == "failed"]


def _failure_hint() -> str:
    """Why a name may be missing: the plugins that failed to load, for unknown-name errors."""
    failed = failed_plugins()
    if not failed:
        return ""
    reasons = "; ".join(f"{info.name} ({info.error})" for info in failed)
    return f"plugin(s) that failed to load: {reasons} (see `assoc plugins`)"


def _clash_text(kind: str, name: str, owners: list[str]) -> str:
    named = " and ".join(f"plugin {owner!r}" for owner in owners)
    return f"{kind} {name!r} is registered by {'both ' if len(owners) == 2 else ''}{named}"


def _lookup(registry_of: dict[str, Registered], kind: str, name: str, hint: str = "") -> Any:
    """The registered ``name`` of ``kind`` (scorer, analysis, stimuli set, executor), or an :class:`UnknownNameError`.

    The error has a did-you-mean hint, ``hint``, and names any plugin that failed to load (it
    may have provided the name).
    """
    reg = registry()
    reg.check_clash(kind, name)
    if name not in registry_of:
        raise UnknownNameError(kind, name, registry_of, hint="; ".join(h for h in (hint, _failure_hint()) if h))
    return registry_of[name].obj


def get_scorer(name: str) -> type[Scorer]:
    """The scorer class registered as ``name``."""
    return _lookup(registry().scorers, "scorer", name)


def get_analysis(name: str) -> type[Analysis]:
    """The analysis class registered as ``name``."""
    return _lookup(registry().analyses, "analysis", name)


def executor_names() -> list[str]:
    """The names of the registered executors, ``local`` first (what ``--executor`` accepts)."""
    names = sorted(registry().executors)
    return sorted(names, key=lambda name: name != "local")


def get_executor_class(name: str) -> type[Executor]:
    """The executor class registered as ``name``."""
    return _lookup(registry().executors, "executor", name)


def get_executor(spec: str | Executor | None = None, **options: Any) -> Executor:
    """The executor for ``spec``: a registered name (:func:`executor_names`), an :class:`Executor`, or None (local).

    ``options`` go to the executor's constructor (e.g. ``address=`` for Ray). An executor that
    declares no options and an :class:`Executor` instance take none here: giving some is an
    :class:`~assoc.errors.OptionError`, as is an unknown name (with a did-you-mean hint).
    """
    from assoc.errors import OptionError, did_you_mean
    from assoc.executors.base import Executor

    if isinstance(spec, Executor):
        if options:
            raise OptionError("executor options are given to the constructor of an Executor instance, not here")
        return spec
    name = "local" if spec is None else str(spec).strip().lower()
    known = executor_names()
    if name not in registry().executors:
        raise OptionError(f"unknown executor {spec!r}{did_you_mean(str(spec), known)}; use one of {', '.join(known)}")
    cls = get_executor_class(name)
    if options and not cls.takes_options():
        raise OptionError(f"the {name} executor takes no options (got {', '.join(sorted(options))})")
    return cls(**options)


def model_kinds() -> dict[str, type[LanguageModel]]:
    """The registered model kinds (:func:`assoc.plugins.hookspecs.register_model_kinds`), by name.

    A kind two plugins register is left out (using it is an error: :func:`get_model_kind`).
    """
    reg = registry()
    clashed = {name for (kind, name) in reg.clashes if kind == "model kind"}
    return {name: entry.obj for name, entry in sorted(reg.model_kinds.items()) if name not in clashed}


def get_model_kind(name: str) -> type[LanguageModel]:
    """The model kind registered as ``name``."""
    return _lookup(registry().model_kinds, "model kind", name)


def benchmarks() -> dict[str, Benchmark]:
    """The registered benchmarks (:func:`assoc.plugins.hookspecs.register_benchmarks`), by name, in registration order.

    A benchmark two plugins register is left out (using it is an error: :func:`get_benchmark`).
    """
    reg = registry()
    clashed = {name for (kind, name) in reg.clashes if kind == "benchmark"}
    return {name: entry.obj for name, entry in reg.benchmarks.items() if name not in clashed}


def get_benchmark(name: str) -> Benchmark:
    """The benchmark registered as ``name``."""
    return _lookup(registry().benchmarks, "benchmark", name)


def get_stimuli_loader(name: str) -> Callable[[], Stimuli]:
    """The loader of the bundled stimuli set ``name``."""
    reg = registry()
    if not reg.stimuli and not failed_plugins():
        raise StimuliError(
            f"{name!r} is neither a stimuli file nor a bundled stimuli set (no bundled sets are installed)"
        )
    return _lookup(reg.stimuli, "stimuli set", name, hint="no stimuli file (.yaml, .yml, .json) has this name either")


def plugin_version(plugin: str) -> str:
    """The version of the distribution that provides ``plugin`` ("" when unknown)."""
    info = registry().infos.get(plugin)
    return info.version if info else ""

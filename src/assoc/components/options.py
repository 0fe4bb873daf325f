"""Declared, validated options of scorers and analyses.

A component declares its options as a tuple of :class:`Option`; the core checks
every value the user gives (from Python or from ``--option key=value`` on the
command line) before any work starts, so a typo or a bad value is a clear
:class:`~assoc.errors.OptionError` that names the option rather than a
``TypeError`` deep inside a model.
"""

from __future__ import annotations

import copy
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from assoc.errors import OptionError, did_you_mean


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: Marker default for an option the user must give.
REQUIRED: Any = _Required()

_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list",
    dict: "a mapping",
    object: "a value",
}


@dataclass(frozen=True)
class Option:
    """One option of a scorer or analysis.

    Parameters
    ----------
    name:
        The keyword users pass (``assoc.score("fmat", s, batch_size=8)``, ``--option batch_size=8``).
    type:
        ``str``, ``int``, ``float``, ``bool``, ``list``, ``dict`` or ``object`` (anything: rely on ``check``).
    default:
        The value when the option is not given. ``None`` makes the option nullable;
        [`REQUIRED`][assoc.REQUIRED] makes it mandatory.
    help:
        One sentence for ``assoc scorers --verbose`` and the docs.
    choices:
        The allowed values, if the option is an enumeration.
    check:
        ``check(value) -> value``: further validation or normalisation, run after the
        type conversion and ``choices``. Reject a value by raising
        ``ValueError("message")``: the core adds the option's name to the message.
        The returned value replaces the given one; a check that returns ``None``
        keeps it, and (for options that are not ``bool``) a predicate's ``False``
        rejects it with a generic message and its ``True`` keeps it.
    renamed_from:
        Former names of the option. Users' scripts that still pass one keep working: the
        value goes to this option, with a `DeprecationWarning` naming the new spelling.
    renamed_values:
        ``(old, new)`` pairs translating values given under a former name whose meaning
        changed with the rename (e.g. ``sd="sample"`` became ``ddof=1``); values not listed
        are an error.
    """

    name: str
    type: type = str
    default: Any = None
    help: str = ""
    choices: tuple[Any, ...] | None = None
    check: Callable[[Any], Any] | None = None
    renamed_from: tuple[str, ...] = ()
    renamed_values: tuple[tuple[Any, Any], ...] = ()

    @property
    def required(self) -> bool:
        """Whether the user must give this option."""
        return self.default is REQUIRED

    def describe(self) -> str:
        """A one-line description for listings."""
        parts = [f"{self.name} ({self.type.__name__}"]
        if self.required:
            parts.append(", required)")
        else:
            parts.append(f", default {self.default!r})")
        text = "".join(parts)
        if self.choices:
            text += f" one of {', '.join(map(repr, self.choices))}"
        if self.help:
            text += f": {self.help}"
        return text

    def coerce(self, value: Any) -> Any:
        """Return ``value`` converted to this option's type, or raise ``ValueError``."""
        if value is None:
            if self.default is None:
                return None
            raise ValueError("must not be empty")
        kind = self.type
        if kind is bool:
            if isinstance(value, bool):
                out: Any = value
            elif isinstance(value, str) and value.lower() in {"true", "yes", "1", "false", "no", "0"}:
                out = value.lower() in {"true", "yes", "1"}
            else:
                raise ValueError(f"must be true or false, got {value!r}")
        elif kind is int:
            out = _as_integer(value)
        elif kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise ValueError(f"must be a number, got {value!r}")
            try:
                out = float(value)
            except ValueError:
                raise ValueError(f"must be a number, got {value!r}") from None
            if math.isnan(out):
                raise ValueError("must be a number, got NaN")
        elif kind is str:
            if not isinstance(value, str):
                raise ValueError(f"must be a string, got {value!r}")
            out = value
        elif kind is list:
            if isinstance(value, str):
                out = [part.strip() for part in value.split(",") if part.strip()]
            elif isinstance(value, (list, tuple)):
                out = list(value)
            else:
                raise ValueError(f"must be a list, got {value!r}")
        elif kind is dict:
            if not isinstance(value, Mapping):
                raise ValueError(f"must be a mapping, got {value!r}")
            out = dict(value)
        else:
            out = value
        if self.choices is not None and out not in self.choices:
            raise ValueError(f"must be one of {', '.join(map(repr, self.choices))}, got {out!r}")
        if self.check is not None:
            checked = self.check(out)
            # A predicate-style check (returning True/False) must not replace the value, and its
            # False must not pass silently; only a check that raises gives a specific message.
            if isinstance(checked, bool) and self.type is not bool:
                if not checked:
                    name = getattr(self.check, "__name__", "check")
                    raise ValueError(f"{out!r} is rejected by the option's check ({name})")
            elif checked is not None:
                out = checked
        return out

    def parse_text(self, text: str) -> Any:
        """Parse a value typed on the command line (``--option name=TEXT``).

        Strings stay as typed; lists accept ``a,b,c`` or YAML ``[a, b]``; other
        types are read as YAML scalars or collections (``3``, ``0.5``, ``true``,
        ``{a: b}``, ``null``). Inside a list or mapping, and for numbers, an item keeps the text
        typed whenever YAML 1.1 would change it (``[no, 010]`` is ``["no", "010"]``, not
        ``[False, 8]``; ``n=010`` is ten): see `assoc.infra.textfiles.as_written`.
        """
        import yaml

        from assoc.infra.textfiles import TypedText, as_written, load_yaml_text, typed_value

        if self.type is str:
            return text
        if self.type is list and not text.lstrip().startswith("["):
            return text
        try:
            parsed = load_yaml_text(text, keep_text=True)
        except yaml.YAMLError as exc:
            raise OptionError(f"option {self.name!r}: cannot parse {text!r}: {' '.join(str(exc).split())}") from None
        if self.type is bool or (isinstance(parsed, TypedText) and parsed.value is None):
            return typed_value(parsed)  # true/yes/on and null mean what YAML says
        return as_written(parsed)


def _renamed(option: Option, old: str, value: Any, owner: str) -> Any:
    """The value of ``option`` given under its former name ``old``, with a deprecation warning."""
    import warnings

    if option.renamed_values:
        table = dict(option.renamed_values)
        key = value.strip().lower() if isinstance(value, str) else value
        if key not in table:
            allowed = ", ".join(repr(k) for k in table)
            raise OptionError(
                f"option {old!r} of {owner} (now {option.name!r}): unknown value {value!r} (it took {allowed})"
            )
        new_value = table[key]
        warnings.warn(
            f"option {old!r} of {owner} is deprecated: write {option.name}={new_value!r} instead of {old}={value!r}",
            DeprecationWarning,
            stacklevel=4,
        )
        return new_value
    warnings.warn(
        f"option {old!r} of {owner} is deprecated: it is now called {option.name!r}", DeprecationWarning, stacklevel=4
    )
    return value


def _apply_renames(options: Mapping[str, Option], given: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """``given`` with former option names replaced by the current ones (see :attr:`Option.renamed_from`)."""
    former = {old: option for option in options.values() for old in option.renamed_from}
    out: dict[str, Any] = {}
    for name, value in given.items():
        if name in former and name not in options:
            option = former[name]
            if option.name in given:
                raise OptionError(
                    f"options {name!r} and {option.name!r} of {owner} are the same option "
                    f"({name!r} is its former name); give only {option.name!r}"
                )
            out[option.name] = _renamed(option, name, value, owner)
        else:
            out[name] = value
    return out


def validate_options(spec: Iterable[Option], given: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """Check ``given`` against ``spec``; return every option's value (defaults filled in).

    ``owner`` names the component in messages, e.g. ``"scorer 'fmat'"``.
    Raises :class:`OptionError` for an unknown option (with a did-you-mean hint),
    a missing required option, or a bad value. A former name of an option
    (:attr:`Option.renamed_from`) still works, with a :class:`DeprecationWarning`.
    """
    options = {option.name: option for option in spec}
    given = _apply_renames(options, given, owner)
    unknown = [name for name in given if name not in options]
    if unknown:
        name = unknown[0]
        known = ", ".join(sorted(options)) or "none"
        models = _models_hint(name, owner, "give the models as models=... (one name or a list)")
        raise OptionError(
            f"unknown option {name!r} for {owner}{models or did_you_mean(name, options)} (its options: {known})"
        )
    values: dict[str, Any] = {}
    for name, option in options.items():
        if name in given:
            try:
                values[name] = option.coerce(given[name])
            except ValueError as exc:
                raise OptionError(f"option {name!r} of {owner}: {exc}") from None
        elif option.required:
            raise OptionError(f"option {name!r} of {owner} is required: {option.help or option.describe()}")
        else:
            # A copy, so a component that changes its list or mapping never changes the
            # declared default (nor the options of every later instance).
            values[name] = (
                copy.deepcopy(option.default) if isinstance(option.default, (list, dict, set)) else option.default
            )
    return values


def _as_integer(value: Any) -> int:
    """Return ``value`` as an exact integer.

    Integers (Python or numpy) are kept as they are, whole floats and text such as ``"12"``
    or ``"1e3"`` are converted; an integer never goes through a float (a seed of 2**53 + 1
    must stay 2**53 + 1).
    """
    if isinstance(value, bool):  # the core turns ValueError into an OptionError naming the option
        raise ValueError(f"must be an integer, got {value!r}")  # noqa: TRY004
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"must be an integer, got {value!r}") from None
    if isinstance(value, numbers.Real):
        as_float = float(value)
        if not as_float.is_integer():
            raise ValueError(f"must be an integer, got {value!r}")
        return int(as_float)
    raise ValueError(f"must be an integer, got {value!r}")


def _models_hint(name: str, owner: str, how: str) -> str:
    """``": <how>"`` when a scorer is given its models as an option (``model=``), else ``""``."""
    if owner.startswith("scorer ") and name in ("model", "models", "model_name", "model_names"):
        return f": the models are not an option; {how}"
    return ""


def parse_cli_options(spec: Iterable[Option], pairs: Iterable[str], owner: str) -> dict[str, Any]:
    """Turn ``["key=value", ...]`` from the command line into typed option values."""
    options = {option.name: option for option in spec}
    former = {old: option for option in options.values() for old in option.renamed_from}
    given: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            # -o reads as "output" to many: say where the output file goes
            raise OptionError(
                f"--option (-o) expects key=value, got {pair!r}; to write the table to a file: --out {pair}"
            )
        key, text = pair.split("=", 1)
        key = key.strip().replace("-", "_")
        if key in former and key not in options:
            # A former name: keep it (validate_options translates it and warns); values that are
            # translated by renamed_values are the old option's text, the others parse as the new option.
            option = former[key]
            given[key] = text.strip() if option.renamed_values else option.parse_text(text)
            continue
        if key not in options:
            known = ", ".join(sorted(options)) or "none"
            models = _models_hint(key, owner, f"give each model with --model {text} (-m)")
            raise OptionError(
                f"unknown option {key!r} for {owner}{models or did_you_mean(key, options)} (its options: {known})"
            )
        given[key] = options[key].parse_text(text)
    return given


# -- reusable ``check`` functions ---------------------------------------------------------------------


def positive(value: float) -> float:
    """``check``: a number greater than 0 (sizes, counts of resamples)."""
    if value <= 0:
        raise ValueError(f"must be positive (greater than 0), got {value}")
    return value


def non_negative(value: float) -> float:
    """``check``: a number of at least 0 (seeds, optional counts)."""
    if value < 0:
        raise ValueError(f"must be 0 or more, got {value}")
    return value


def confidence_level(value: float) -> float:
    """``check``: a confidence level strictly between 0 and 1."""
    if not 0 < value < 1:
        raise ValueError(f"must be between 0 and 1, got {value}")
    return value


def column_list(value: Any) -> list[str]:
    """``check`` for options naming table columns: a list of distinct non-empty names."""
    names = [str(v).strip() for v in value]
    if any(not name for name in names):
        raise ValueError("column names must be non-empty")
    if len(set(names)) != len(names):
        raise ValueError(f"a column is listed twice: {names}")
    return names


#: The result-cache options (``cache``, ``cache_dir``): a scorer that declares them gets its finished work
#: units cached on disk (:meth:`assoc.scoring.scorer.Scorer.unit_cache`), so interrupted runs resume.
CACHE_OPTIONS: tuple[Option, ...] = (
    Option("cache", bool, True, "reuse and store results on disk so interrupted runs resume"),
    Option(
        "cache_dir",
        str,
        None,
        "cache directory (default $ASSOC_CACHE_DIR, else the user cache directory: "
        "~/.cache/assoc on Linux, ~/Library/Caches/assoc on macOS, %LOCALAPPDATA%\\assoc\\Cache on Windows)",
    ),
)

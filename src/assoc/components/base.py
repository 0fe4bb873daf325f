"""What scorers and analyses have in common: a name, a description, a citation and declared, validated options."""

from __future__ import annotations

import inspect
from abc import ABC
from typing import Any, ClassVar

from assoc.components.options import Option, validate_options


def options_signature(options: tuple[Option, ...]) -> inspect.Signature:
    """The keyword-only signature ``(*, name: type = default, ...)`` of declared options.

    Required options have no default; the annotation is the option's type. ``help()``,
    ``inspect.signature`` and IDEs show it for every scorer and analysis class.
    """
    parameters = [
        inspect.Parameter(
            option.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if option.required else option.default,
            annotation=option.type,
        )
        for option in options
    ]
    return inspect.Signature(parameters)


def options_docstring(options: tuple[Option, ...]) -> str:
    """A numpydoc ``Parameters`` section describing declared options."""
    lines = ["Parameters", "----------"]
    for option in options:
        default = "required" if option.required else f"default {option.default!r}"
        lines.append(f"{option.name} : {option.type.__name__}, {default}")
        text = option.help or ""
        if option.choices:
            text = (text + "; " if text else "") + "one of " + ", ".join(map(repr, option.choices))
        if option.renamed_from:
            text += f" (formerly {', '.join(option.renamed_from)}, still accepted with a deprecation warning)"
        if text:
            lines.append(f"    {text[0].upper()}{text[1:]}.".replace("..", "."))
    return "\n".join(lines)


class Component(ABC):  # noqa: B024 - an ABC so that subclasses' abstract methods (Analysis.run) are enforced
    """Base of :class:`~assoc.scoring.scorer.Scorer` and :class:`~assoc.analysis.Analysis`.

    Like scikit-learn estimators, the constructor only validates and stores the
    options (in ``self.params``); nothing is loaded or computed until the
    component is used. An abstract base class: a subclass that leaves an
    ``@abstractmethod`` (``Analysis.run``) unimplemented cannot be instantiated, and
    the plugin registry refuses to register it.
    """

    kind: ClassVar[str] = "component"
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    citation: ClassVar[str] = ""
    options: ClassVar[tuple[Option, ...]] = ()
    #: A teaching example (such as the plugin of ``docs/write-a-plugin.md``), not a method for research:
    #: ``assoc scorers``/``assoc analyses`` list it apart from the real ones.
    example: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Give every subclass a signature and a ``Parameters`` section built from its declared options."""
        super().__init_subclass__(**kwargs)
        cls.__signature__ = options_signature(cls.options)  # type: ignore[attr-defined]
        if cls.options and "__doc__" in vars(cls) and cls.__doc__ and "\nParameters\n" not in cls.__doc__:
            cls.__doc__ = inspect.cleandoc(cls.__doc__) + "\n\n" + options_docstring(cls.options) + "\n"

    def __init__(self, **options: Any) -> None:
        self.params: dict[str, Any] = validate_options(
            type(self).options, options, owner=f"{self.kind} {type(self).name!r}"
        )

    def __repr__(self) -> str:
        defaults = {o.name: o.default for o in type(self).options}
        args = ", ".join(f"{k}={_short_repr(v)}" for k, v in self.params.items() if not _same_value(v, defaults.get(k)))
        return f"{type(self).__name__}({args})"

    @classmethod
    def help_text(cls) -> str:
        """A multi-line description with options, for ``assoc scorers --verbose``."""
        lines = [f"{cls.name}: {cls.description}".rstrip(": ")]
        if cls.citation:
            lines.append(f"  citation: {cls.citation}")
        for option in cls.options:
            lines.append(f"  - {option.describe()}")
        return "\n".join(lines)


def _same_value(value: Any, default: Any) -> bool:
    """``value == default`` for options of any type (DataFrames and arrays compare elementwise)."""
    if value is default:
        return True
    try:
        return bool(value == default)
    except Exception:  # noqa: BLE001 - elementwise or undefined comparisons (DataFrame == REQUIRED): not the default
        return False


def _short_repr(value: Any) -> str:
    """``repr`` of an option value, shortened for tables and arrays (a repr is one line)."""
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and not isinstance(value, (str, bytes)):
        return f"<{type(value).__name__} {'x'.join(map(str, shape))}>"
    return repr(value)

"""What scorers and analyses have in common: a name, a description, a citation and declared, validated options."""

from __future__ import annotations

from typing import Any, ClassVar

from .options import Option, validate_options


class Component:
    """Base of :class:`~assoc.scorer.Scorer` and :class:`~assoc.analysis.Analysis`.

    Like scikit-learn estimators, the constructor only validates and stores the
    options (in ``self.params``); nothing is loaded or computed until the
    component is used.
    """

    kind: ClassVar[str] = "component"
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    citation: ClassVar[str] = ""
    options: ClassVar[tuple[Option, ...]] = ()

    def __init__(self, **options: Any) -> None:
        self.params: dict[str, Any] = validate_options(type(self).options, options,
                                                       owner=f"{self.kind} {type(self).name!r}")

    def __repr__(self) -> str:
        defaults = {o.name: o.default for o in type(self).options}
        args = ", ".join(f"{k}={_short_repr(v)}" for k, v in self.params.items()
                         if not _same_value(v, defaults.get(k)))
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

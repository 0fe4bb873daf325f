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
        changed = {k: v for k, v in self.params.items()
                   if v != next(o.default for o in type(self).options if o.name == k)}
        args = ", ".join(f"{k}={v!r}" for k, v in changed.items())
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

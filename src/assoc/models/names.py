"""The one way to name a model: ``[LABEL=]SPEC``.

``SPEC`` is what identifies the model: a local folder, a Hugging Face Hub id, or a model of a kind
written with its prefix (``chat:gpt-4o-mini`` for a chat endpoint, ``server:meta-llama/Llama-3.1-8B``
for a model behind an inference server; kinds register their prefixes, :mod:`assoc.lm.kinds`).
``LABEL`` is the short name that tables, plots, reports and rater names show; provenance keeps the
SPEC, the resolved path and the weights' fingerprint beside it. Without a label, a model is shown as
it is today (a local folder as its absolute path, anything else as written).

A label is text of letters, digits and ``_ . + -`` that starts with a letter or digit. ``a=b`` is a
label and a spec only when ``a`` is such a text and ``a=b`` is not itself an existing path, so a
folder whose name holds ``=`` is still read as a folder.

Scorers never see labels: the core splits them off (:func:`split_label`), runs the scorer on the
SPECs, and writes each label into the table's ``model`` column afterwards; cached results are keyed
by the SPEC, so renaming a label recomputes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from assoc.errors import OptionError

#: What a label may be: letters, digits and ``_ . + -``, starting with a letter or a digit.
LABEL_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+\-]*$")


@dataclass(frozen=True)
class ModelName:
    """A model as the user named it: the label (``None`` when not given) and the spec.

    ``text`` is what was written (``"small=./models/gpt2-small"``), ``spec`` what identifies the
    model (``"./models/gpt2-small"``), ``label`` the short name (``"small"``).
    """

    text: str
    spec: str
    label: str | None = None

    @property
    def prefix(self) -> str | None:
        r"""The kind prefix of the spec (``"chat"`` in ``chat:gpt-4o``), ``None`` when it has none.

        A Windows drive (``C:\models``) and a URL scheme are not prefixes; a prefix is a word of
        lower-case letters, digits and ``_`` before the first ``:``.
        """
        return spec_prefix(self.spec)

    @property
    def shown(self) -> str:
        """What tables show: the label, else the spec."""
        return self.label if self.label is not None else self.spec


def spec_prefix(spec: str) -> str | None:
    """The kind prefix of ``spec`` (``chat`` in ``chat:gpt-4o``), or ``None``."""
    head, sep, rest = spec.partition(":")
    if not sep or not rest or not re.fullmatch(r"[a-z][a-z0-9_]*", head) or len(head) < 2:
        return None
    if rest.startswith("//"):  # a URL (http://...), not a prefixed spec
        return None
    return head


def strip_prefix(spec: str) -> str:
    """``spec`` without its kind prefix (``gpt-4o`` for ``chat:gpt-4o``)."""
    return spec.split(":", 1)[1] if spec_prefix(spec) else spec


def split_label(text: str) -> ModelName:
    """Read ``[LABEL=]SPEC`` (module docstring); :class:`~assoc.errors.OptionError` for an empty spec or label."""
    if not isinstance(text, str) or not text.strip():
        raise OptionError(f"a model is named by non-empty text, got {text!r}")
    written = text.strip()
    head, sep, rest = written.partition("=")
    if sep and LABEL_PATTERN.match(head) and not Path(written).expanduser().exists():
        if not rest.strip():
            raise OptionError(
                f"model {written!r}: nothing after {head + '='!r}; write LABEL=SPEC (a folder, a Hub id, ...)"
            )
        return ModelName(written, rest.strip(), head)
    if sep and not head:
        raise OptionError(f"model {written!r}: empty label before '='; write LABEL=SPEC or just SPEC")
    return ModelName(written, written, None)


def check_labels(names: Iterable[ModelName]) -> None:
    """Refuse two models under one label, or one spec under two labels (one model is one rater)."""
    by_label: dict[str, str] = {}
    by_spec: dict[str, str | None] = {}
    for name in names:
        if name.label is not None:
            other = by_label.setdefault(name.label, name.spec)
            if other != name.spec:
                raise OptionError(f"label {name.label!r} names two models: {other!r} and {name.spec!r}")
        if name.spec in by_spec and by_spec[name.spec] != name.label:
            raise OptionError(
                f"model {name.spec!r} is listed twice (as {by_spec[name.spec]!r} and {name.label!r}): "
                "one model is one rater"
            )
        by_spec[name.spec] = name.label

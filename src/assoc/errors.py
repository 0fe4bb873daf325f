"""One exception hierarchy for every error a user can cause.

The CLI turns any [`AssocError`][assoc.AssocError] into a one-line message and a non-zero exit
status; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any


class AssocError(Exception):
    """Base class of every user-facing error raised by assoc and its plugins."""


class StimuliError(AssocError, ValueError):
    """The stimuli (queries, groups, words) are malformed."""


class OptionError(AssocError, ValueError):
    """An option of a scorer or analysis is unknown or has a bad value."""


#: The most known names an :class:`UnknownNameError` lists (a bundled set may have thousands of designs).
MAX_NAMES_LISTED = 12


class UnknownNameError(AssocError, LookupError):
    """A scorer, analysis, stimuli set or design name is not known."""

    def __init__(self, kind: str, name: str, known: Iterable[str], hint: str = ""):
        known = sorted(known, key=natural_key)
        message = f"unknown {kind} {name!r}"
        close = closest_name(name, known)
        if close:
            message += f"; did you mean {close!r}?"
        if len(known) > MAX_NAMES_LISTED:  # a set of 1,508 designs: a few names, never kilobytes
            message += f" (available: {', '.join(known[:MAX_NAMES_LISTED])}, ... {len(known):,} in all)"
        elif known:
            message += f" (available: {', '.join(known)})"
        else:
            message += f" (no {kind}s are installed)"
        if hint:
            message += f"; {hint}"
        super().__init__(message)
        self.kind = kind
        self.name = name
        self.known = known
        self.suggestion = close


class PluginError(AssocError):
    """A plugin failed to load, or clashes with another plugin (both register one name)."""


class StimuliWarning(UserWarning):
    """The stimuli are valid but probably not what was meant (e.g. one word in two target groups)."""


class PluginWarning(UserWarning):
    """Something is wrong with the installed plugins that does not stop the current command.

    For example, two plugins register the same name that this command does not use.
    """


class TableError(AssocError, ValueError):
    """A table does not satisfy the association-table contract."""


class ModelError(AssocError):
    """A model cannot be found, loaded or used."""


class DataError(AssocError, ValueError):
    """Input data (norms, criteria, counts, embeddings) are malformed or insufficient."""


class UnfitTableError(TableError, DataError):
    """A table that an analysis cannot read: it breaks the analysis' declared requirement.

    Both a [`TableError`][assoc.TableError] (the table is the problem) and a [`DataError`][assoc.DataError] (what
    analyses raised for the same tables before they declared their requirements), so code catching either keeps working.
    """


class OutputError(AssocError, OSError):
    """An output path or the cache directory cannot be written (checked before any work starts)."""


class ProvenanceWarning(UserWarning):
    """A table's provenance no longer describes its data and is not used (e.g. the file was edited)."""


class OutOfVocabularyWarning(UserWarning):
    """Some stimulus words are not in a model's vocabulary.

    One class for every scorer (a masked LM's tokens, an embedding's entries, ...), so
    ``warnings.filterwarnings("ignore", category=assoc.OutOfVocabularyWarning)`` silences all.
    """


class ScorerOutputWarning(UserWarning):
    """A scorer's output breaks a rule of the table contract that does not make its numbers wrong.

    Undocumented extra columns, or rows told apart only by ``value``: the table is kept and the
    user warned; [`assoc.testing.check_scorer`][assoc.testing.check_scorer] fails on it.
    """


class NotScoredWarning(UserWarning):
    """Rows kept without a value (a text longer than the model accepts, an option with nothing before it).

    Each such row is NaN with its ``status``, counted in the run report (``not_scored``); one
    warning line per scorer run and status names the first such row and what would score it.
    """


class TooLongError(StimuliError, ModelError):
    """A text is longer than the model accepts: it would have to be cut, which scores another text.

    Carries what a caller needs to name the item: ``text`` (as given, or as decoded from its tokens),
    ``n_tokens`` (its length, special tokens included), ``max_length`` (what the model accepts) and
    ``model``. A scorer that keeps such items as rows with status ``too_long`` checks lengths before
    it sends the texts; this error is what an engine raises when a caller did not.
    """

    def __init__(self, message: str, *, text: str = "", n_tokens: int = 0, max_length: int = 0, model: str = ""):
        super().__init__(message)
        self.text, self.n_tokens, self.max_length, self.model = text, n_tokens, max_length, model

    def __reduce__(self) -> tuple[Any, ...]:  # keyword fields survive a trip through pickle (Ray workers)
        fields = {"text": self.text, "n_tokens": self.n_tokens, "max_length": self.max_length, "model": self.model}
        return (_too_long_error, (str(self), fields))


def _too_long_error(message: str, fields: dict[str, Any]) -> TooLongError:
    return TooLongError(message, **fields)


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the numbers inside names by value: weat1, weat2, ..., weat10 (case-insensitive)."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part.casefold()) for part in re.split(r"(\d+)", name) if part
    )


def closest_name(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to ``name`` (case-insensitive, so 'WEAT1' finds 'weat1'), or None."""
    by_folded = {k.casefold(): k for k in sorted(known, reverse=True)}
    close = difflib.get_close_matches(name.casefold(), list(by_folded), n=1)
    return by_folded[close[0]] if close else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """Return ``"; did you mean 'x'?"`` for the closest known name, or ``""``."""
    close = closest_name(name, known)
    return f"; did you mean {close!r}?" if close else ""

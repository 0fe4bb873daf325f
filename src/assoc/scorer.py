"""The scorer interface: stimuli + models in, one association table out."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from .component import Component

if TYPE_CHECKING:
    import pandas as pd

    from .stimuli import Stimuli


class Scorer(Component):
    """Base class of every scorer.

    Subclasses set the class attributes and implement :meth:`score`::

        class MyScorer(Scorer):
            name = "my_scorer"                  # what users type
            description = "One line."
            citation = "Author (year). Title. doi:..."
            measure = "cosine"                  # what the value column holds
            options = (Option("batch_size", int, 32, "rows per batch"),)
            default_models = ("glove-6b-50d",)  # used when the user names none
            requires_models = True              # False for model-free scorers
            needs_queries = False               # True: every design needs [MASK] queries
            extra_columns = {"oov": "True when a word is out of vocabulary"}

            def score(self, stimuli, models, *, progress):
                ...
                return assoc.table.from_records(rows, scorer=self.name, measure=self.measure)

    The core validates options on construction, stimuli before scoring
    (:meth:`check_stimuli`), and the returned table after scoring, then attaches
    provenance.
    """

    kind: ClassVar[str] = "scorer"
    measure: ClassVar[str] = ""
    default_models: ClassVar[tuple[str, ...]] = ()
    requires_models: ClassVar[bool] = True
    needs_queries: ClassVar[bool] = False
    extra_columns: ClassVar[dict[str, str]] = {}

    def check_stimuli(self, stimuli: Stimuli) -> None:
        """Raise :class:`~assoc.errors.StimuliError` if this scorer cannot use ``stimuli``.

        The default checks ``needs_queries``; override to add checks (call ``super()``).
        """
        if self.needs_queries:
            stimuli.require_queries(self.name)

    @abstractmethod
    def score(self, stimuli: Stimuli, models: Sequence[str], *, progress: bool) -> pd.DataFrame:
        """Measure every association in ``stimuli`` with every model.

        ``models`` is never empty when ``requires_models`` is true. ``progress``
        says whether to show progress bars (:func:`assoc.progress.bar`). Return
        an association table (:mod:`assoc.table`).
        """

"""What a study report shows: the inputs, the convergence runs and the notes, computed once (`Study`).

The page and the bias card are both drawn from one `Study`; ``assoc.reporting.study`` builds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assoc.reporting.inputs import RESULT, TABLE, StudyInput

if TYPE_CHECKING:
    import pandas as pd

#: Rows of one item-level table written into the page (the rest is counted in a note): keeps a report of a
#: whole benchmark a few megabytes.
MAX_ITEM_ROWS = 1000


@dataclass
class Convergence:
    """The comparison of the methods of one table: the convergence result, the per-target scores, what was done."""

    result: StudyInput
    scores: pd.DataFrame | None = None
    source: str = ""
    ran: bool = False


@dataclass
class Study:
    """Everything a report shows, computed once: the inputs, the convergence runs, the headline numbers, notes."""

    title: str
    inputs: list[StudyInput]
    convergence: list[Convergence] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    max_rows: int = MAX_ITEM_ROWS

    @property
    def tables(self) -> list[StudyInput]:
        """The association tables given."""
        return [i for i in self.inputs if i.kind == TABLE]

    @property
    def results(self) -> list[StudyInput]:
        """The analysis results given, other than convergence (shown in its own section)."""
        return [i for i in self.inputs if i.kind == RESULT and i.analysis != "convergence"]

    def headlines(self) -> pd.DataFrame:
        """The headline numbers of every result in one table.

        See [`headline_table`][assoc.reporting.headlines.headline_table].
        """
        import pandas as pd

        from assoc.reporting.headlines import HEADLINE_COLUMNS, headline_table

        parts = [headline_table(r.frame, source=r.name, analysis=r.analysis) for r in self.results]
        parts = [p for p in parts if len(p)]
        if not parts:
            return pd.DataFrame(columns=list(HEADLINE_COLUMNS))
        return pd.concat(parts, ignore_index=True)

    @property
    def shown(self) -> list[StudyInput]:
        """The inputs and the convergence results this report computed itself: everything it shows."""
        return [*self.inputs, *(c.result for c in self.convergence if c.ran)]

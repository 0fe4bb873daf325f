"""The inputs of a study report: association tables and analysis results, from files or DataFrames.

Each input becomes a `StudyInput`: its name (the file's name, the
mapping's key, or ``input N``), the frame with its provenance, and whether it is an association table
(what a scorer or ``assoc compare`` wrote) or an analysis result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.errors import OptionError, TableError

if TYPE_CHECKING:
    import pandas as pd

TABLE = "table"
RESULT = "result"


@dataclass
class StudyInput:
    """One input of a report.

    ``kind`` is ``"table"`` (an association table: a scorer's or ``assoc compare``'s output) or
    ``"result"`` (an analysis result); ``analysis`` names the analysis of a result (``""`` when its
    provenance does not say); ``derived`` marks what the report computed itself (a convergence run).
    """

    name: str
    frame: pd.DataFrame
    kind: str
    provenance: dict[str, Any] = field(default_factory=dict)
    analysis: str = ""
    derived: bool = False

    @property
    def scorers(self) -> list[str]:
        """The scorers whose rows the table holds, in order of appearance (empty for a result)."""
        if self.kind != TABLE or "scorer" not in self.frame.columns:
            return []
        return [str(s) for s in dict.fromkeys(self.frame["scorer"].astype(str))]


def load_inputs(inputs: Any) -> list[StudyInput]:
    """Read and classify the inputs of a report.

    ``inputs``: a path or DataFrame, a list of them, or a mapping name -> path or DataFrame.
    A path is read with its provenance (:func:`assoc.read_table`); a file that cannot be read
    is an error naming it, before any work.
    """
    import pandas as pd

    if isinstance(inputs, (str, Path, pd.DataFrame)):
        named: list[tuple[str | None, Any]] = [(None, inputs)]
    elif isinstance(inputs, Mapping):
        named = [(str(k), v) for k, v in inputs.items()]
    elif isinstance(inputs, Sequence):
        named = [(None, v) for v in inputs]
    else:
        raise OptionError(
            "report inputs must be paths or DataFrames (a list, or a mapping name -> input), "
            f"got {type(inputs).__name__}"
        )
    if not named:
        raise OptionError("a report needs at least one association table or analysis result")
    loaded = []
    names: set[str] = set()
    for number, (name, value) in enumerate(named, 1):
        frame, default_name = _read(value, number)
        chosen = name or default_name
        while chosen in names:  # two files of one name in different folders: both kept, told apart
            chosen = f"{chosen} ({number})"
        names.add(chosen)
        loaded.append(classify(frame, chosen))
    return loaded


def _read(value: Any, number: int) -> tuple[pd.DataFrame, str]:
    import pandas as pd

    from assoc.table.files import read_table

    if isinstance(value, pd.DataFrame):
        return value, f"input {number}"
    if isinstance(value, (str, Path)):
        path = Path(value)
        if not path.is_file():
            raise TableError(f"report input {str(value)!r}: no such file")
        try:
            return read_table(path), path.name
        except TableError as exc:
            raise TableError(f"report input {str(value)!r}: {exc}") from None
    raise OptionError(f"report input {number}: expected a path or a DataFrame, got {type(value).__name__}")


def classify(frame: pd.DataFrame, name: str) -> StudyInput:
    """The `StudyInput` of ``frame``: a result when its provenance says an analysis made it.

    Without provenance, a frame with every association-table column is a table, anything else a result.
    """
    from assoc.table.provenance import get_provenance
    from assoc.table.schema import COLUMNS

    provenance = get_provenance(frame)
    if len(frame) == 0:
        raise TableError(f"report input {name!r} has no rows")
    kind = provenance.get("kind")
    if kind == "analysis":
        return StudyInput(name, frame, RESULT, provenance, str(provenance.get("analysis") or ""))
    if kind in ("score", "compare") or all(c in frame.columns for c in COLUMNS):
        return StudyInput(name, frame, TABLE, provenance)
    return StudyInput(name, frame, RESULT, provenance)


def study_groups(tables: Sequence[StudyInput]) -> list[StudyInput]:
    """The association tables that hold several methods: each such table, and tables of one stimuli file combined.

    Tables scored on the same stimuli (same SHA-256 in their provenance) by different scorers are
    concatenated (as ``assoc compare`` would have returned them), so ``convergence`` can compare them.
    """
    import pandas as pd

    from assoc.table.provenance import make_provenance, set_provenance

    out = [t for t in tables if len(t.scorers) >= 2]
    by_stimuli: dict[str, list[StudyInput]] = {}
    for table in tables:
        sha = table.provenance.get("stimuli_sha256")
        if isinstance(sha, str) and sha and len(table.scorers) == 1:
            by_stimuli.setdefault(sha, []).append(table)
    for sha, group in by_stimuli.items():
        scorers = {s for t in group for s in t.scorers}
        if len(group) < 2 or len(scorers) < 2:
            continue
        combined = pd.concat([t.frame for t in group], ignore_index=True, sort=False)
        first = group[0].provenance
        set_provenance(
            combined,
            make_provenance(
                kind="compare",
                runs=[t.provenance for t in group],
                stimuli=first.get("stimuli"),
                stimuli_sha256=sha,
                stimuli_meta=first.get("stimuli_meta") or {},
            ),
        )
        out.append(
            StudyInput(" + ".join(t.name for t in group), combined, TABLE, dict(combined.attrs["assoc"]), derived=True)
        )
    return out

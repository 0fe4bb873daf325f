"""The fuzz cases of issue #23 as one table: (input, expected exit code, expected message fragment).

Each row builds its input files in a fresh folder and runs the command line on them. Exit code 0
rows must show the fragment in their output (``words: ...``: each word as written is a cell of the
printed table; otherwise a warning); exit code 2 rows must show it in one line on stderr, with no
traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from assoc.cli import build_cli
from assoc.table import from_records, set_provenance, sidecar_path, write_table

pytestmark = pytest.mark.usefixtures("example_plugin")  # its char_ngram scorer (tests/conftest.py)

Case = Callable[[Path, pytest.MonkeyPatch], list[str]]
PAIR_YAML = "target:\n  T: [{word}]\nattribute:\n  A: [antler]\n"


def _file(folder: Path, name: str, text: str) -> str:
    (folder / name).write_text(text)
    return str(folder / name)


def _table(folder: Path) -> Path:
    rows = [
        {"target_group": g, "target": f"{g}{i}", "attribute": "a", "value": float(i * (1 if g == "X" else -1))}
        for g in ("X", "Y")
        for i in range(8)
    ]
    table = set_provenance(from_records(rows, scorer="s", measure="m"), {"kind": "score", "scorer": "s"})
    return write_table(table, folder / "t.csv")


def _score(stimuli: str, *more: str) -> list[str]:
    return ["score", "-s", "char_ngram", "-i", stimuli, *more]


def yaml_words(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    return _score(_file(folder, "s.yaml", PAIR_YAML.format(word="010, 1.10, no, .nan, yes")))


def json_nan_word(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    return _score(_file(folder, "s.json", '{"target": {"T": [NaN, 1.10]}, "attribute": {"A": ["antler"]}}'))


def json_repeated_key(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    text = '{"target": {"Female": ["she"],\n"Female": ["her"]}, "attribute": {"A": ["x"]}}'
    return _score(_file(folder, "s.json", text))


def json_boolean_word(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    return _score(_file(folder, "s.json", '{"target": {"T": ["ant", true]}, "attribute": {"A": ["x"]}}'))


def yaml_repeated_key(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    return _score(_file(folder, "s.yaml", "target:\n  T: [a]\n  T: [b]\nattribute:\n  A: [x]\n"))


def truncated_csv(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    path = _table(folder)
    path.write_bytes(path.read_bytes()[:-5])
    return ["analyze", "effect_size", "--table", str(path), "-o", "by=target_group"]


def sorted_csv(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    path = _table(folder)
    pd.read_csv(path, keep_default_na=False).sort_values("value").to_csv(path, index=False)
    return ["analyze", "effect_size", "--table", str(path), "-o", "by=target_group", "-o", "n_resamples=200"]


def malformed_csv_columns(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    path = _table(folder)
    sidecar = json.loads(sidecar_path(path).read_text())
    sidecar["csv_columns"] = {"extra": {"kind": "bool", "missing": "all"}}
    sidecar_path(path).write_text(json.dumps(sidecar))
    return ["analyze", "effect_size", "--table", str(path)]


def out_is_a_folder(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    (folder / "out.csv").mkdir()
    return _score("caliskan:weat1", "--out", str(folder / "out.csv"))


def out_under_a_file(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    return _score("caliskan:weat1", "--out", str(Path(_file(folder, "f", "x")) / "t.csv"))


def out_unknown_format(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    return _score("caliskan:weat1", "--out", str(folder / "t.xlsx"))


def analysis_out_is_a_folder(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    return ["analyze", "effect_size", "--table", str(_table(folder)), "--out", str(folder)]


def cache_dir_is_a_file(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("ASSOC_CACHE_DIR", _file(folder, "cache", "x"))
    stimuli = _file(folder, "q.yaml", 'queries: ["[MASK] is here."]\nmask: {M: [he, she]}\n')
    return ["score", "-s", "fmat", "-i", stimuli, "-m", "no-such-model"]


def ray_refused(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    return _score("caliskan:weat1", "-x", "ray", "--ray-address", "127.0.0.1:1")


def ray_malformed(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    return _score("caliskan:weat1", "-x", "ray", "--ray-address", "foo:bar")


def resamples_for_hours(folder: Path, _: pytest.MonkeyPatch) -> list[str]:
    return ["analyze", "effect_size", "--table", str(_table(folder)), "-o", "exact_limit=0", "-o", "n_resamples=2e8"]


def bootstrap_beyond_memory(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("ASSOC_WORK_MEMORY", "80000")
    return ["analyze", "effect_size", "--table", str(_table(folder)), "-o", "n_bootstrap=20000"]


CASES: list[tuple[Case, int, str]] = [
    (yaml_words, 0, "words: 010 1.10 no .nan yes"),
    (json_nan_word, 0, "words: NaN 1.10"),
    (json_repeated_key, 2, "line 2: key 'Female' appears twice in one object"),
    (json_boolean_word, 2, "target group 'T', item 2: the boolean True where a word belongs"),
    (yaml_repeated_key, 2, "line 3: key 'T' appears twice in one mapping"),
    (truncated_csv, 2, "t.csv is truncated"),
    (sorted_csv, 0, "t.csv is not the file its provenance sidecar t.csv.provenance.json describes"),
    (malformed_csv_columns, 2, "'csv_columns' is malformed"),
    (out_is_a_folder, 2, "out.csv is a folder"),
    (out_under_a_file, 2, "is a file, not a folder"),
    (out_unknown_format, 2, "cannot tell the table format"),
    (analysis_out_is_a_folder, 2, "is a folder"),
    (cache_dir_is_a_file, 2, "cache directory ($ASSOC_CACHE_DIR or the user cache)"),
    (ray_refused, 2, "cannot reach the Ray cluster at '127.0.0.1:1'"),
    (ray_malformed, 2, "Ray address 'foo:bar': the port 'bar' is not a number"),
    (resamples_for_hours, 2, "n_resamples=200,000,000 over 16 values"),
    (bootstrap_beyond_memory, 2, "at most n_bootstrap=10,000"),
]


@pytest.mark.parametrize("make, exit_code, fragment", CASES, ids=[case[0].__name__ for case in CASES])
def test_fuzz_case(tmp_path, monkeypatch, make, exit_code, fragment):
    args = make(tmp_path, monkeypatch)
    result = CliRunner().invoke(build_cli(), args)
    assert result.exit_code == exit_code, result.output
    assert "Traceback" not in result.output
    if fragment.startswith("words: "):  # each word is a cell of the printed table, as written
        assert set(fragment.split()[1:]) <= set(result.output.split()), result.output
    elif exit_code == 0:
        assert fragment in " ".join(result.output.split()), result.output
    else:
        assert fragment in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr

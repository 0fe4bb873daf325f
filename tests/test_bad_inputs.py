"""Bad files and runaway sizes (found by fuzzing the CLI) give one clear line, never a traceback or a hang."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import assoc
from assoc.cli import build_cli
from assoc.errors import OptionError, StimuliError
from assoc.table.files import read_table, sidecar_path, write_table
from assoc.table.schema import from_records

GOOD_YAML = (
    "target:\n  Flowers: [rose, tulip]\n  Insects: [ant, wasp]\nattribute:\n  Pleasant: [love]\n  Unpleasant: [hate]\n"
)


def _cli(*args: str):
    return CliRunner().invoke(build_cli(), list(args))


# -- encodings -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, encoding",
    [
        (GOOD_YAML.replace("rose", "rosé").encode("latin-1"), "not UTF-8"),
        (GOOD_YAML.encode("utf-16"), "UTF-16"),
        (b"\x00\x01\x02\xff\xfe binary \x00", "binary"),
    ],
)
@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_stimuli_files_that_are_not_utf8_say_which_file_and_encoding(tmp_path, content, encoding, suffix):
    path = tmp_path / f"s{suffix}"
    path.write_bytes(content)
    with pytest.raises(StimuliError, match=f"{path.name}.*{encoding}"):
        assoc.Stimuli.load(str(path))
    result = _cli("stimuli", str(path))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_json_with_a_utf8_bom_is_read(tmp_path):
    path = tmp_path / "s.json"
    data = {"target": {"T": ["a", "b"]}, "attribute": {"A": ["c"]}}
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(data).encode())
    assert assoc.Stimuli.load(str(path)).designs[0].target == {"T": ("a", "b")}


# -- YAML ----------------------------------------------------------------------------------------------


def test_a_repeated_yaml_key_is_refused_with_its_line(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("target:\n  Flowers: [rose]\n  Insects: [ant]\n  Flowers: [tulip]\nattribute:\n  A: [love]\n")
    with pytest.raises(StimuliError, match=r"s\.yaml.*line 4.*'Flowers'.*twice"):
        assoc.Stimuli.load(str(path))


def test_yaml_parse_errors_are_one_line_with_the_location(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("target:\n  Flowers: [rose, tulip\nattribute:\n  A: [love]\n")
    with pytest.raises(StimuliError) as caught:
        assoc.Stimuli.load(str(path))
    message = str(caught.value)
    assert "\n" not in message and "line " in message and "column " in message and "s.yaml" in message
    result = _cli("stimuli", str(path))
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1


# -- overlapping groups --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            {"target": {"X": ["rose", "ant"], "Y": ["ant", "wasp"]}, "attribute": {"A": ["love"], "B": ["hate"]}},
            r"'ant' is in both target groups 'X' and 'Y'",
        ),
        (
            {"target": {"X": ["rose"], "Y": ["wasp"]}, "attribute": {"A": ["love", "joy"], "B": ["joy", "hate"]}},
            r"'joy' is in both attribute groups 'A' and 'B'",
        ),
    ],
)
def test_a_word_in_two_groups_of_one_kind_warns(spec, message):
    with pytest.warns(UserWarning, match=message + ".*contrast"):
        assoc.Stimuli.load(spec)


def test_distinct_groups_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assoc.Stimuli.load({"target": {"X": ["rose"], "Y": ["ant"]}, "attribute": {"A": ["rose"], "B": ["hate"]}})


# -- runaway sizes -------------------------------------------------------------------------------------


def test_an_astronomical_mask_range_is_refused_at_once():
    # "at once": the size is judged before any number is made; making 10**15 of them would never end
    spec = {"queries": ["I was born in [MASK]."], "mask": {"Year": {"range": [0, 10**15]}}}
    with pytest.raises(StimuliError, match=r"range \[0, 1000000000000000\].*1,000,000,000,000,001 numbers.*at most"):
        assoc.Stimuli.load(spec)


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [
        {"target_group": g, "target": f"{g}{i}", "attribute_group": "A", "attribute": "a", "value": float(rng.normal())}
        for g in ("X", "Y")
        for i in range(30)
    ]
    return from_records(rows, scorer="s", measure="m")


@pytest.mark.parametrize(
    "options, name", [({"n_resamples": 10**11}, "n_resamples"), ({"n_bootstrap": 10**11}, "n_bootstrap")]
)
def test_resampling_sizes_that_cannot_finish_are_refused_at_once(options, name):
    # "at once": assoc.stats.budget judges the size before the first resample (10**11 would never end)
    with pytest.raises(OptionError, match=rf"{name}=100,000,000,000 .*at most {name}="):
        assoc.analyze("effect_size", _table(), by="target_group", **options)


def test_weat_resampling_sizes_that_cannot_finish_are_refused_at_once():
    from assoc.stats.association_tests import weat

    rng = np.random.default_rng(0)
    blocks = [rng.normal(size=(30, 25)) for _ in range(4)]
    with pytest.raises(OptionError, match=r"n_bootstrap=100,000,000,000 "):
        weat(*blocks, n_bootstrap=10**11, exact_limit=0, n_resamples=10)
    with pytest.raises(OptionError, match=r"n_resamples=100,000,000,000 "):
        weat(*blocks, exact_limit=0, n_resamples=10**11)


# -- provenance sidecars -------------------------------------------------------------------------------


@pytest.mark.usefixtures("example_plugin")
def test_a_corrupt_provenance_sidecar_warns_and_keeps_the_table(tmp_path):
    table = assoc.score("char_ngram", {"target": {"T": ["ant"]}, "attribute": {"A": ["antler"]}})
    path = write_table(table, tmp_path / "t.csv")
    sidecar_path(path).write_text("{not json")
    with pytest.warns(UserWarning, match=r"t\.csv\.provenance\.json.*not valid JSON.*without provenance"):
        back = read_table(path)
    assert back["value"].tolist() == table["value"].tolist() and back.attrs == {}
    result = _cli("analyze", "effect_size", "--table", str(path), "-o", "by=target_group")
    assert "Traceback" not in result.output


# -- corrupt model weights -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corrupt_model(tmp_path_factory):
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    path = build_bert_wordpiece(tmp_path_factory.mktemp("corrupt") / "bert")
    weights = path / "model.safetensors"
    raw = weights.read_bytes()
    weights.write_bytes(raw[:8] + b"{garbage" + raw[16:])  # a broken JSON header
    return path


@pytest.mark.parametrize("scorer", ["fmat", "pll"])
def test_corrupt_weights_are_one_line_naming_the_model_and_file(corrupt_model, tmp_path, scorer):
    from assoc.errors import ModelError

    stimuli = tmp_path / "q.yaml"
    stimuli.write_text('queries: ["[MASK] is here."]\nmask: {M: [he, she]}\n')
    with pytest.raises(ModelError, match=rf"{corrupt_model.name}.*model\.safetensors.*corrupt"):
        assoc.score(scorer, str(stimuli), [str(corrupt_model)])
    result = _cli("score", "-s", scorer, "-i", str(stimuli), "-m", str(corrupt_model))
    assert result.exit_code == 2 and "Traceback" not in result.output
    # the size of the job comes first (standard error is not a terminal: plain progress), then the one error line
    size, *rest = result.stderr.strip().splitlines()
    assert size == f"{scorer}: 2 items to do (1 work unit, 0 from the cache; 1 model)"
    assert len(rest) == 1 and rest[0].startswith("error: ") and "model.safetensors" in rest[0]


def test_a_row_wise_test_counts_the_work_of_every_row():
    from assoc.stats.permutation import rowwise_permutation_test

    values = np.random.default_rng(0).normal(size=(2_000, 40))
    with pytest.raises(OptionError, match=r"n_resamples=10,000,000 over 80,000 values"):
        rowwise_permutation_test(values, 20, exact_limit=0, n_resamples=10**7)


@pytest.mark.usefixtures("example_plugin")
def test_corrupt_provenance_in_a_parquet_file_warns_and_keeps_the_table(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = assoc.score("char_ngram", {"target": {"T": ["ant"]}, "attribute": {"A": ["antler"]}})
    table.attrs.clear()  # pandas would store attrs in its own metadata too
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}), b"assoc": b"{broken"})
    pq.write_table(arrow, tmp_path / "t.parquet")
    with pytest.warns(UserWarning, match=r"provenance in .*t\.parquet is not valid JSON"):
        back = read_table(tmp_path / "t.parquet")
    assert back["value"].tolist() == table["value"].tolist() and back.attrs == {}


# -- name:selection of a bundled set (issue 46, "Messages") ------------------------------------------------


def test_an_unknown_design_of_a_large_set_is_one_short_line_with_a_suggestion():
    result = _cli("stimuli", "crows_pairs:pair12x")
    assert result.exit_code == 2
    message = result.output.strip()
    assert message.count("\n") == 0 and len(message) < 400  # it listed 1,508 names (14 kB)
    assert "did you mean 'pair12'?" in message and "1,508 in all" in message and "assoc stimuli crows_pairs" in message


def test_a_users_crows_pairs_csv_is_read_from_the_command_line(tmp_path, monkeypatch):
    from assoc_benchmarks.crows_data import bundled_csv

    lines = bundled_csv().read_text(encoding="utf-8").splitlines(keepends=True)
    mine = tmp_path / "my.csv"
    mine.write_text("".join(lines[:4]), encoding="utf-8")  # the header and the first three pairs
    monkeypatch.chdir(tmp_path)
    listed = _cli("stimuli", "crows_pairs:my.csv")
    assert listed.exit_code == 0, listed.output
    assert [line.split(":")[0] for line in listed.output.splitlines()] == ["pair0", "pair1", "pair2"]
    loaded = assoc.Stimuli.load(f"crows_pairs:{mine}")
    assert loaded.meta["source"] == str(mine) and len(loaded) == 3
    missing = _cli("stimuli", "crows_pairs:mine.csv")
    assert missing.exit_code == 2 and "CrowS-Pairs file not found: mine.csv" in missing.output
    assert missing.output.count("\n") == 1
    not_a_reader = _cli("stimuli", "caliskan:my.csv")
    assert not_a_reader.exit_code == 2 and "does not read a copy of yours" in not_a_reader.output
    assert not_a_reader.output.count("\n") == 1

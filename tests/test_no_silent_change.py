"""No silent data change (issue #23): every input and output path keeps what the user wrote or says why not.

Each test here failed before the change it checks; the values expected are written out by hand.
"""

from __future__ import annotations

import json
import os
import stat
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import assoc
from assoc.cli import build_cli
from assoc.errors import OutputError, ProvenanceWarning, StimuliError, TableError
from assoc.table import from_records, read_table, sidecar_path, write_table

pytestmark = pytest.mark.usefixtures("example_plugin")  # its char_ngram scorer (tests/conftest.py)

PAIR = {"target": {"T": ["ant"]}, "attribute": {"A": ["antler"]}}


def _cli(*args: str):
    return CliRunner().invoke(build_cli(), list(args))


# -- 1. stimuli files keep what was written ------------------------------------------------------------

YAML_1_1_WORDS = ["010", "1.10", ".nan", "NaN", "null", "no", "on", "yes", "~", "2024-01-01", "0x1F", "1e3"]


@pytest.mark.parametrize("word", YAML_1_1_WORDS)
def test_yaml_words_are_read_as_written(tmp_path, word):
    path = tmp_path / "s.yaml"
    path.write_text(f"target:\n  X: [{word}, rose]\n  Y: [ant]\nattribute:\n  A: [love]\n  B: [hate]\n")
    design = assoc.Stimuli.load(str(path)).designs[0]
    assert design.target["X"] == (word, "rose")


def test_yaml_labels_and_mask_options_are_read_as_written(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: 2017\nqueries: ['[MASK] said {TARGET}.']\n"
        "mask:\n  no: [yes, 'off']\n  on: [010]\ntarget:\n  1.10: [null]\n"
    )
    stimuli = assoc.Stimuli.load(str(path))
    design = stimuli.designs[0]
    assert stimuli.name == "2017"
    assert design.mask == {"no": ("yes", "off"), "on": ("010",)}
    assert design.target == {"1.10": ("null",)}


def test_a_mask_range_still_takes_numbers(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("queries: ['born in [MASK].']\nmask:\n  Year: {range: [1998, 2004, 3]}\n")
    assert assoc.Stimuli.load(str(path)).designs[0].mask == {"Year": ("1998", "2001", "2004")}


def test_json_numbers_and_nan_words_are_read_as_written(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"target": {"X": [1.10, 10, NaN, 1E3, -Infinity], "Y": ["b"]}, "attribute": {"A": ["x"]}}')
    assert assoc.Stimuli.load(str(path)).designs[0].target["X"] == ("1.10", "10", "NaN", "1E3", "-Infinity")


def test_a_repeated_json_key_is_refused_with_its_line(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"target": {\n  "Female": ["she"],\n  "Male": ["he"],\n  "Female": ["her"]\n},\n"attribute": {}}')
    with pytest.raises(StimuliError, match=r"s\.json: line 4: key 'Female' appears twice.*first on line 2"):
        assoc.Stimuli.load(str(path))


def test_a_repeated_json_key_in_a_nested_object_is_found(tmp_path):
    path = tmp_path / "s.json"
    text = '{"designs": [{"name": "a", "target": {"T": ["x"]}, "attribute": {"A": ["y"]}},\n'
    text += '{"name": "b", "target": {"T": ["x"], "U": ["w"]},\n "attribute": {"A": ["y"], "A": ["z"]}}]}'
    path.write_text(text)
    with pytest.raises(StimuliError, match=r"line 3: key 'A' appears twice.*first on line 3"):
        assoc.Stimuli.load(str(path))


@pytest.mark.parametrize(
    "item, shown", [("true", "the boolean True"), ("null", "null"), ("false", "the boolean False")]
)
def test_a_json_item_that_is_not_text_is_refused_with_its_place(tmp_path, item, shown):
    path = tmp_path / "s.json"
    path.write_text('{"target": {"X": ["rose", ITEM], "Y": ["ant"]}, "attribute": {"A": ["a"]}}'.replace("ITEM", item))
    with pytest.raises(StimuliError, match=rf"s\.json: .*target group 'X', item 2: {shown}"):
        assoc.Stimuli.load(str(path))


def test_python_floats_are_refused_not_rewritten():
    with pytest.raises(StimuliError, match=r"item 1: the number 1.1 where a word belongs.*as text"):
        assoc.Stimuli.load({"target": {"X": [1.10]}, "attribute": {"A": ["a"]}})
    assert assoc.Stimuli.load({"target": {"X": [10]}, "attribute": {"A": ["a"]}}).designs[0].target["X"] == ("10",)


@pytest.mark.parametrize(
    "text, kind, expected",
    [
        ("[no, 010, 1.10, 1, 0.5]", list, ["no", "010", "1.10", 1, 0.5]),
        ("010", int, 10),
        ("no", bool, False),
        ("{a: on}", dict, {"a": "on"}),
    ],
)
def test_command_line_option_values_keep_their_text(text, kind, expected):
    from assoc.components.options import Option

    option = Option("x", kind, None, "")
    assert option.coerce(option.parse_text(text)) == expected


# -- 3. a CSV table and its provenance sidecar belong together ----------------------------------------


def _labelled_table() -> pd.DataFrame:
    rows = [
        {"target_group": g, "target": f"{g}{i}", "attribute": "a", "value": float(i), "flag": i % 2 == 0}
        for g in ("X", "Y")
        for i in range(4)
    ]
    table = from_records(rows, scorer="s", measure="m")
    table["flag"] = table["flag"].astype(object)
    table.loc[3, "flag"] = np.nan  # a missing cell the sidecar records by row number
    return assoc.table.set_provenance(table, {"kind": "score", "scorer": "s"})


def test_the_sidecar_names_the_data_it_describes(tmp_path):
    path = write_table(_labelled_table(), tmp_path / "t.csv")
    record = json.loads(sidecar_path(path).read_text())["data_file"]
    import hashlib

    assert record == {
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "bytes": path.stat().st_size,
        "rows": 8,
    }
    back = read_table(path)
    assert back.attrs["assoc"]["scorer"] == "s" and "data_file" not in back.attrs["assoc"]
    assert back["flag"].isna().tolist() == [False, False, False, True, False, False, False, False]


def test_a_sorted_csv_keeps_its_rows_but_not_the_old_labels(tmp_path):
    path = write_table(_labelled_table(), tmp_path / "t.csv")
    edited = pd.read_csv(path, keep_default_na=False).sort_values("value", ascending=False, kind="stable")
    edited.to_csv(path, index=False)
    with pytest.warns(ProvenanceWarning, match=r"t\.csv is not the file its provenance sidecar.*8 rows.*without"):
        back = read_table(path)
    assert back.attrs == {}
    assert back["value"].tolist() == [3.0, 3.0, 2.0, 2.0, 1.0, 1.0, 0.0, 0.0]
    # read as the file says, as text; the old "missing" row range (row 3) is not applied to the new row 3 ("True")
    assert back["flag"].tolist() == ["", "False", "True", "True", "False", "False", "True", "True"]


def test_a_kill_between_the_two_writes_is_detected(tmp_path):
    path = write_table(_labelled_table(), tmp_path / "t.csv")
    old_sidecar = sidecar_path(path).read_text()
    smaller = _labelled_table().iloc[:5]
    write_table(smaller, path)
    sidecar_path(path).write_text(old_sidecar)  # as if the run died before the sidecar was replaced
    with pytest.warns(ProvenanceWarning, match="not the file its provenance sidecar"):
        back = read_table(path)
    assert len(back) == 5 and back.attrs == {}


def test_a_truncated_csv_is_an_error(tmp_path):
    path = write_table(_labelled_table(), tmp_path / "t.csv")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 7])  # cut inside the last row
    with pytest.raises(TableError, match=r"t\.csv is truncated: it ends in the middle of a line"):
        read_table(path)
    result = _cli("analyze", "effect_size", "--table", str(path), "-o", "by=target_group")
    assert result.exit_code == 2 and "truncated" in result.stderr and "Traceback" not in result.output


def test_a_csv_cut_at_a_line_end_warns(tmp_path):
    path = write_table(_labelled_table(), tmp_path / "t.csv")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-2]))
    with pytest.warns(ProvenanceWarning, match="which had 8 rows"):
        back = read_table(path)
    assert len(back) == 6 and back.attrs == {}


@pytest.mark.parametrize(
    "schema, problem",
    [
        ([1, 2], "expected an object"),
        ({"flag": "bool"}, "column 'flag': expected an object"),
        ({"flag": {"kind": "complex"}}, "kind must be one of"),
        ({"flag": {"kind": "bool", "missing": [[3]]}}, "missing must be a list of"),
        ({"flag": {"kind": "int"}}, "does not fit the table"),
    ],
)
def test_a_malformed_csv_columns_record_is_one_line(tmp_path, schema, problem):
    table = _labelled_table()
    table.attrs.clear()
    path = write_table(table, tmp_path / "t.csv")
    sidecar = json.loads(sidecar_path(path).read_text())
    sidecar.pop("data_file")  # an older sidecar, or one edited by hand
    sidecar["csv_columns"] = schema
    sidecar_path(path).write_text(json.dumps(sidecar))
    with pytest.raises(TableError, match=problem) as caught:
        read_table(path)
    assert "\n" not in str(caught.value) and "t.csv.provenance.json" in str(caught.value)


def test_jsonl_sidecars_are_checked_too(tmp_path):
    path = write_table(_labelled_table(), tmp_path / "t.jsonl")
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({**json.loads(path.read_text().splitlines()[0]), "value": 9.0}) + "\n")
    with pytest.warns(ProvenanceWarning):
        back = read_table(path)
    assert len(back) == 9 and back.attrs == {}


# -- 4. outputs and the cache directory are checked before the work -----------------------------------


def _spy_scorer(monkeypatch) -> list[int]:
    """Count how often the char_ngram scorer scores (it must not, when an output is bad)."""
    from assoc import plugins

    calls: list[int] = []
    scorer_cls = plugins.get_scorer("char_ngram")
    original = scorer_cls.score

    def counting(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(scorer_cls, "score", counting)
    return calls


@pytest.mark.parametrize(
    "make, fragment",
    [
        (lambda d: d / "folder", "is a folder"),
        (lambda d: d / "afile" / "t.csv", "is a file, not a folder"),
        (lambda d: d / "afile" / "deeper" / "t.csv", "needs the folder"),
        (lambda d: d / "t.xlsx", "cannot tell the table format"),
        (lambda d: d / "readonly.csv", "is read-only"),
    ],
)
def test_a_bad_output_path_stops_before_scoring(tmp_path, monkeypatch, make, fragment):
    (tmp_path / "folder").mkdir()
    (tmp_path / "afile").write_text("x")
    (tmp_path / "readonly.csv").write_text("x")
    (tmp_path / "readonly.csv").chmod(0o444)
    calls = _spy_scorer(monkeypatch)
    out = make(tmp_path)
    with pytest.raises((OutputError, TableError), match=fragment):
        assoc.score("char_ngram", PAIR, out=out)
    result = _cli("score", "-s", "char_ngram", "-i", "caliskan:weat1", "--out", str(out))
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert calls == []
    assert (tmp_path / "readonly.csv").read_text() == "x"


def test_an_unwritable_folder_stops_before_scoring(tmp_path, monkeypatch):
    folder = tmp_path / "locked"
    folder.mkdir()
    calls = _spy_scorer(monkeypatch)
    if os.geteuid() == 0:  # a superuser writes anywhere: make creating files there fail as a locked folder does
        real_open = os.open

        def refuse(name, flags, *args):
            if str(name).startswith(str(folder)):
                raise PermissionError(13, "Permission denied", str(name))
            return real_open(name, flags, *args)

        monkeypatch.setattr(os, "open", refuse)
    else:
        folder.chmod(0o500)
    try:
        with pytest.raises(OutputError, match=r"locked: cannot write there.*Permission denied"):
            assoc.score("char_ngram", PAIR, out=folder / "t.csv")
        result = _cli("analyze", "effect_size", "--table", "t.csv", "--out", str(folder / "r.csv"))
        assert result.exit_code == 2 and "Permission denied" in result.stderr
    finally:
        folder.chmod(0o700)
    assert calls == []


def test_a_cache_directory_that_is_a_file_stops_before_scoring(tmp_path, monkeypatch):
    from assoc import plugins
    from assoc.lm import LMScorer

    blocker = tmp_path / "cache"
    blocker.write_text("not a folder")
    scored: list[int] = []
    fmat = plugins.get_scorer("fmat")
    assert issubclass(fmat, LMScorer)
    monkeypatch.setattr(fmat, "run_unit", lambda *a, **k: scored.append(1), raising=False)
    stimuli = {"queries": ["[MASK] is here."], "mask": {"M": ["he", "she"]}}
    with pytest.raises(OutputError, match=r"cache directory \(cache_dir\) .*cache is a file, not a folder"):
        assoc.score("fmat", stimuli, ["no-such-model"], cache_dir=str(blocker))
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(blocker / "sub"))
    result = _cli("score", "-s", "fmat", "-i", "caliskan:weat1", "-m", "no-such-model")
    assert result.exit_code == 2 and "needs the folder" in result.stderr and "ASSOC_CACHE_DIR" in result.stderr
    assert scored == []


# -- 5. overwriting keeps what the user set up ---------------------------------------------------------


def test_overwriting_keeps_the_mode(tmp_path):
    path = tmp_path / "t.csv"
    table = assoc.score("char_ngram", PAIR)
    write_table(table, path)
    path.chmod(0o600)
    sidecar_path(path).chmod(0o640)
    write_table(table, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(sidecar_path(path).stat().st_mode) == 0o640


def test_overwriting_writes_through_a_symlink(tmp_path):
    real = tmp_path / "shared" / "results.csv"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "t.csv"
    link.symlink_to(real)
    table = assoc.score("char_ngram", PAIR)
    write_table(table, link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert read_table(real)["value"].tolist() == table["value"].tolist()


def test_a_symlink_into_a_missing_folder_is_refused(tmp_path):
    link = tmp_path / "t.csv"
    link.symlink_to(tmp_path / "gone" / "t.csv")
    with pytest.raises(OutputError, match="is a symlink to .*whose folder does not exist"):
        assoc.score("char_ngram", PAIR, out=link)
    assert link.is_symlink()


# -- 6. (outputs) nothing left behind ------------------------------------------------------------------


def test_a_failed_write_leaves_no_temporary_file(tmp_path):
    from assoc.infra.io import atomic_write

    with pytest.raises(KeyboardInterrupt), atomic_write(tmp_path / "t.csv") as handle:
        handle.write("half")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_temporary_files_of_dead_processes_are_swept(tmp_path):
    import subprocess
    import sys

    from assoc.infra.io import _host_tag

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    stale = tmp_path / f".t.csv.{_host_tag()}.{pid}.0123456789ab.tmp"
    live = tmp_path / f".t.csv.{_host_tag()}.{os.getpid()}.0123456789ab.tmp"
    other_host = tmp_path / f".t.csv.00000000.{pid}.0123456789ab.tmp"
    for path in (stale, live, other_host):
        path.write_text("partial")
    write_table(assoc.score("char_ngram", PAIR), tmp_path / "t.csv")
    assert not stale.exists() and live.exists() and other_host.exists()


def test_sigterm_removes_the_temporary_file(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import sys, time\n"
        "from assoc.cli import _exit_on_sigterm\n"
        "from assoc.infra.io import atomic_write\n"
        "_exit_on_sigterm()\n"
        f"with atomic_write({str(tmp_path / 'out.csv')!r}) as handle:\n"
        "    handle.write('partial'); handle.flush(); print('ready', flush=True); time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        assert len(list(tmp_path.glob(".out.csv.*.tmp"))) == 1
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        child.kill()
    deadline = time.monotonic() + 5
    while list(tmp_path.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmp_path.iterdir()) == []


# -- 2. no analysis averages over NaN it did not expect ------------------------------------------------


def _nan_table(provenance: dict | None) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = [
        {"target_group": g, "target": f"{g}{i}", "attribute_group": "A", "attribute": "a", "value": rng.normal()}
        for g in ("X", "Y")
        for i in range(6)
    ]
    table = from_records(rows, scorer="s", measure="m")
    table.loc[[0, 7], "value"] = np.nan
    if provenance is not None:
        assoc.table.set_provenance(table, provenance)
    return table


def test_unexpected_nan_values_are_named_before_an_analysis():
    with pytest.warns(UserWarning, match=r"2 of 12 values are NaN and the table has no provenance"):
        assoc.analyze("effect_size", _nan_table(None), by="target_group", n_resamples=100, seed=0)
    with pytest.warns(UserWarning, match=r"the scorer run behind the table reported 1"):
        assoc.analyze(
            "effect_size",
            _nan_table({"kind": "score", "run": {"nan_values": 1}}),
            by="target_group",
            n_resamples=100,
            seed=0,
        )


def test_nan_values_the_scorer_counted_pass_quietly():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assoc.analyze(
            "effect_size",
            _nan_table({"kind": "score", "run": {"nan_values": 2}}),
            by="target_group",
            n_resamples=100,
            seed=0,
        )
    assert not [w for w in caught if "NaN" in str(w.message)]


def test_a_score_table_counts_its_nan_values_in_the_run_report():
    stimuli = {"target": {"T": ["rose", "tulip", "qqqzzzx"]}, "attribute": {"A": ["love"]}}
    with pytest.warns(UserWarning, match="out-of-vocabulary"):
        table = assoc.score("weat", stimuli, max_missing=0.5)
    assert table["value"].isna().sum() == 1
    assert table.attrs["assoc"]["run"]["nan_values"] == 1


def _broken_copy(source: Path, destination: Path) -> Path:
    """A copy of a tiny masked LM whose output layer's bias is NaN (as corrupt or overflowed weights give)."""
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    shutil.copytree(source, destination)
    weights = load_file(destination / "model.safetensors")
    bias = next(name for name in weights if name.endswith("predictions.bias") or name.endswith("decoder.bias"))
    weights[bias] = torch.full_like(weights[bias], float("nan"))
    save_file(weights, destination / "model.safetensors", metadata={"format": "pt"})
    return destination


@pytest.fixture(scope="module")
def nan_model(tmp_path_factory):
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    root = tmp_path_factory.mktemp("nan")
    return _broken_copy(build_bert_wordpiece(root / "bert"), root / "nan-bert")


@pytest.mark.parametrize("scorer", ["fmat", "pll"])
@pytest.mark.slow
def test_a_model_with_nan_output_stops_naming_model_and_query(nan_model, tmp_path, scorer):
    from assoc.errors import AssocError

    stimuli = tmp_path / "q.yaml"
    stimuli.write_text('queries: ["[MASK] is here."]\nmask: {M: [he, she]}\n')
    with pytest.raises(AssocError, match=r"model '.*nan-bert' returned NaN or infinite logits.*is here"):
        assoc.score(scorer, str(stimuli), [str(nan_model)], cache=False)
    result = _cli("score", "-s", scorer, "-i", str(stimuli), "-m", str(nan_model), "-o", "cache=false")
    assert result.exit_code == 2 and "NaN or infinite logits" in result.stderr and "Traceback" not in result.output


def test_a_sentence_model_with_nan_output_stops_at_the_first_batch(monkeypatch):
    import torch
    from assoc_sbert_topwords.encoding import open_encoder

    from assoc.errors import ModelError

    encoder = open_encoder(
        "all-MiniLM-L6-v2", device="cpu", dtype="float32", revision=None, batch_size=8, normalize=False
    )
    weights = next(p for name, p in encoder.model.named_parameters() if name.endswith("word_embeddings.weight"))
    saved = weights.data.clone()
    try:
        with torch.no_grad():
            weights.data[:] = float("nan")
        with pytest.raises(ModelError, match=r"returned NaN or infinite embeddings for 2 of 2 text\(s\).*first 'rose'"):
            encoder.encode(["rose", "tulip"])
    finally:
        weights.data.copy_(saved)
    assert encoder.n_encoded == 0


# -- 7. limits with a clear word -----------------------------------------------------------------------


def test_resampling_that_would_run_for_hours_is_refused_with_the_largest_size():
    # 1e8 resamples of 60 values: 6e9 values, accepted before (limit 1e10) and hours of work for a few groups
    rows = [
        {"target_group": g, "target": f"{g}{i}", "attribute": "a", "value": float(i % 7)}
        for g in ("X", "Y")
        for i in range(30)
    ]
    table = from_records(rows, scorer="s", measure="m")
    with pytest.raises(assoc.errors.OptionError, match=r"n_resamples=100,000,000 .*at most n_resamples=16,666,666"):
        assoc.analyze("effect_size", table, by="target_group", n_resamples=10**8)


def test_a_bootstrap_that_cannot_be_held_in_memory_is_refused(monkeypatch):
    from assoc.stats.effect_size import bootstrap_interval, standardized_mean_difference_rows

    monkeypatch.setenv("ASSOC_WORK_MEMORY", "8000")  # 8 kB: room for 1,000 float64 statistics
    x, y = np.arange(5.0), np.arange(5.0) + 1
    with pytest.raises(
        assoc.errors.OptionError, match=r"n_bootstrap=2,000 needs .*memory budget.*at most n_bootstrap=1,000"
    ):
        bootstrap_interval(x, y, standardized_mean_difference_rows, n_resamples=2_000, option="n_bootstrap")
    assert bootstrap_interval(x, y, standardized_mean_difference_rows, n_resamples=1_000, seed=0).n_resamples == 1_000


def test_long_resampling_runs_show_progress_with_an_eta(monkeypatch, capsys):
    from assoc.infra import progress
    from assoc.stats import budget
    from assoc.stats.permutation import two_sample_permutation_test

    monkeypatch.setattr(budget, "PROGRESS_AFTER_VALUES", 1_000)
    rng = np.random.default_rng(0)
    # piped (capsys is not a terminal): the size first, a line at the end
    two_sample_permutation_test(rng.normal(size=10), rng.normal(size=10), exact_limit=0, n_resamples=5_000, seed=0)
    shown = capsys.readouterr().err.splitlines()
    assert shown[0] == "permutation test (sampled): 5000 resamples to do"
    assert shown[-1].startswith("permutation test (sampled): done, 5000 resamples in ")
    monkeypatch.setattr(progress, "on_terminal", lambda: True)  # a terminal: tqdm's bar
    two_sample_permutation_test(rng.normal(size=10), rng.normal(size=10), exact_limit=0, n_resamples=5_000, seed=0)
    shown = capsys.readouterr().err
    assert "permutation test (sampled)" in shown and "/5000" in shown and "<" in shown  # tqdm: elapsed<remaining
    monkeypatch.setattr(budget, "PROGRESS_AFTER_VALUES", 10**9)
    two_sample_permutation_test(rng.normal(size=10), rng.normal(size=10), exact_limit=0, n_resamples=5_000, seed=0)
    assert capsys.readouterr().err == ""  # a short run shows nothing


def test_sbert_topwords_top_k_is_capped_by_the_memory_budget(monkeypatch, tmp_path):
    vocabulary = tmp_path / "v.txt"
    vocabulary.write_text("\n".join(f"word{i}" for i in range(100)) + "\n")
    monkeypatch.setenv("ASSOC_WORK_MEMORY", str(50 * 1_000 * 2))  # 2 terms x 50 rows of 1,000 bytes
    stimuli = {"target": {"T": ["rose", "tulip"]}}
    with pytest.raises(assoc.errors.OptionError, match=r"top_k=1,000,000,000,000 needs .*at most top_k=50\b"):
        assoc.score("sbert_topwords", stimuli, vocabulary=str(vocabulary), top_k=10**12, cache=False)


# -- 8. Ray addresses ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address, fragment",
    [
        ("foo:bar", "Ray address 'foo:bar': the port 'bar' is not a number"),
        ("127.0.0.1", "has no port"),
        ("127.0.0.1:1", "cannot reach the Ray cluster at '127.0.0.1:1'"),
        ("http://127.0.0.1:1", "expected HOST:PORT, ray://HOST:PORT or auto"),
    ],
)
def test_a_bad_ray_address_is_one_line_at_once(address, fragment):
    import time

    started = time.monotonic()
    result = _cli("score", "-s", "char_ngram", "-i", "caliskan:weat1", "-x", "ray", "--ray-address", address)
    assert result.exit_code == 2 and fragment in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert time.monotonic() - started < 20


def test_a_port_that_does_not_answer_like_ray_times_out_as_set(monkeypatch):
    import socket
    import time

    from assoc.executors.ray import RayExecutor

    with socket.socket() as listener:  # accepts connections and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(assoc.errors.OptionError, match=r"no answer like a Ray cluster's \(waited up to 0.5 s"):
            RayExecutor(address, connect_timeout=0.5)
        assert time.monotonic() - started < 20  # not the default 30 s (a tighter bound fails on a busy machine)
        monkeypatch.setenv("ASSOC_RAY_CONNECT_TIMEOUT", "0.3")
        result = _cli("score", "-s", "char_ngram", "-i", "caliskan:weat1", "-x", "ray", "--ray-address", address)
        assert result.exit_code == 2 and "waited up to 0.3 s" in result.stderr
    with pytest.raises(assoc.errors.OptionError, match="connect_timeout must be a positive number"):
        RayExecutor(address, connect_timeout=0)

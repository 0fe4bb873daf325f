"""The bugs confirmed in review (issue 16, item 8): one test per bug, each failing before its fix."""

from __future__ import annotations

import json
import os
import stat
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc.components.options import Option, validate_options
from assoc.errors import TableError
from assoc.stats.effect_size import standardized_mean_difference, standardized_mean_difference_rows
from assoc.stats.standardize import zscore, zscore_within
from assoc.table.files import read_table, sidecar_path, write_table
from assoc.table.provenance import set_provenance
from assoc.table.schema import from_records

# -- zero spread up to rounding -------------------------------------------------------------------------


def test_zscore_of_constant_data_is_nan_like_scipy():
    from scipy import stats

    for values in ([0.1] * 3, [1 / 3] * 7, [1e300] * 4, [5.0] * 4):
        assert np.isnan(zscore(np.array(values))).all(), values
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert np.isnan(stats.zscore(values, ddof=1)).all()  # scipy >= 1.15: std <= eps * |mean| is zero
    # scipy's tolerance (eps * |mean|) misses this one (it gives -0.99 for all 50); ours
    # (n * eps * max|x|, the rounding bound of the mean) does not
    assert np.isnan(zscore(np.array([-2.7] * 50))).all()


def test_zscore_keeps_tiny_but_real_spread():
    from scipy import stats

    x = np.array([1.0, 1.0 + 1e-9, 1.0 + 2e-9])
    np.testing.assert_allclose(zscore(x), stats.zscore(x, ddof=1), rtol=1e-6)
    y = np.array([0.0, 1e-150, 2e-150])  # tiny in absolute terms, large relative to its scale
    np.testing.assert_allclose(zscore(y), [-1.0, 0.0, 1.0])


def test_zscore_within_constant_group_is_nan():
    frame = pd.DataFrame({"g": ["a"] * 3 + ["b"] * 3, "value": [0.1] * 3 + [1.0, 2.0, 3.0]})
    z = zscore_within(frame, within=["g"])
    assert z[:3].isna().all()
    np.testing.assert_allclose(z[3:], [-1.0, 0.0, 1.0])


def test_cohens_d_of_two_constant_groups_is_nan():
    assert np.isnan(standardized_mean_difference([0.1] * 3, [0.1] * 3))
    assert np.isnan(standardized_mean_difference([0.1] * 3, [0.1] * 3, sd="all"))
    assert np.isnan(standardized_mean_difference([0.1] * 3, [0.3] * 3))
    rows = standardized_mean_difference_rows(np.full((2, 3), 0.1), np.full((2, 3), 0.1))
    assert np.isnan(rows).all()
    # a real difference with real spread is untouched (by hand: d = -1 / 1 = -1)
    assert standardized_mean_difference([1.0, 2.0, 3.0], [2.0, 3.0, 4.0]) == pytest.approx(-1.0)


def test_lpr_standardize_z_of_constant_lprs_is_nan(tmp_path):
    rows = []
    for target in ("nurse", "engineer", "doctor"):
        # log P(he) - log P(she) = 0.1 for every target: constant LPRs within the query, whose
        # pandas SD is 1.7e-17, not 0
        for group, word, lp in (("male", "he", 0.1), ("female", "she", 0.0)):
            rows.append(
                {
                    "model": "m",
                    "context": "[MASK] is a {TARGET}.",
                    "target_group": "Job",
                    "target": target,
                    "attribute_group": group,
                    "attribute": word,
                    "value": lp,
                    "design": "d",
                    "mask_group": group,
                    "mask": word,
                }
            )
    table = from_records(rows, scorer="fmat", measure="log_prob", extra_columns=["design", "mask_group", "mask"])
    out = assoc.analyze("lpr", table, standardize="z", target_pair=False, attrib_pair=False)
    assert out["value"].isna().all()


# -- seeds -------------------------------------------------------------------------------------------------


def test_weat_bootstrap_accepts_a_generator_seed():
    from assoc.stats.association_tests import weat

    rng = np.random.default_rng(1)
    sims = [rng.normal(size=(4, 3)) for _ in range(4)]
    result = weat(*sims, seed=np.random.default_rng(0), n_bootstrap=10)
    assert result.ci is not None and result.ci.n_resamples == 10
    again = weat(*sims, seed=np.random.default_rng(0), n_bootstrap=10)
    assert (result.ci.low, result.ci.high) == (again.ci.low, again.ci.high)  # reproducible from the seed


# -- file modes -------------------------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_atomic_writes_get_the_umask_mode(tmp_path):
    from assoc.infra.io import atomic_path, atomic_write

    old = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "a.txt") as handle:
            handle.write("x")
        with atomic_path(tmp_path / "b.bin") as path:
            path.write_bytes(b"x")
        table = from_records([{"model": "m", "target": "t", "attribute": "a", "value": 1.0}], scorer="s", measure="m")
        write_table(table, tmp_path / "t.csv")
        os.umask(0o077)
        with atomic_write(tmp_path / "private.txt") as handle:
            handle.write("x")
    finally:
        os.umask(old)
    for name in ("a.txt", "b.bin", "t.csv"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    assert stat.S_IMODE((tmp_path / "private.txt").stat().st_mode) == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# -- provenance sidecars ----------------------------------------------------------------------------------


def _table(value: float = 1.0) -> pd.DataFrame:
    return from_records([{"model": "m", "target": "t", "attribute": "a", "value": value}], scorer="s", measure="m")


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json"])
def test_a_table_without_provenance_does_not_inherit_an_old_sidecar(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    old = set_provenance(_table(1.0), {"scorer": "old", "models": ["old-model"]})
    write_table(old, path)
    assert sidecar_path(path).is_file()
    new = _table(2.0)
    new.attrs.clear()
    write_table(new, path)
    back = read_table(path)
    assert back["value"].tolist() == [2.0]
    assert back.attrs.get("assoc", {}) == {}
    assert not sidecar_path(path).exists()


# -- plotting ---------------------------------------------------------------------------------------------


def test_plotting_leaves_the_users_backend_alone(tmp_path):
    pytest.importorskip("matplotlib")
    import subprocess

    script = (
        "import matplotlib\n"
        "matplotlib.use('svg')\n"  # a non-interactive backend other than Agg, as a user might choose
        "import assoc\n"
        "from assoc.plotting import plot_scores, save_figure\n"
        "from assoc.table.schema import from_records\n"
        "t = from_records([{'model': 'm', 'target_group': 'X', 'target': 'x', 'attribute_group': 'A',\n"
        "                  'attribute': 'a', 'value': 1.0}], scorer='s', measure='m')\n"
        "fig = plot_scores(t)\n"
        "save_figure(fig, r'" + str(tmp_path / "f.png") + "')\n"
        "import matplotlib.pyplot as plt\n"
        "print(matplotlib.get_backend(), len(plt.get_fignums()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env={**os.environ, "MPLBACKEND": ""}
    )
    assert out.stdout.split() == ["svg", "0"]
    assert (tmp_path / "f.png").stat().st_size > 0


# -- options ----------------------------------------------------------------------------------------------


def test_integer_options_are_exact():
    spec = [Option("seed", int, 0)]
    big = 2**53 + 1
    assert validate_options(spec, {"seed": big}, "x")["seed"] == big
    assert validate_options(spec, {"seed": str(big)}, "x")["seed"] == big
    assert validate_options(spec, {"seed": np.int64(2**62 + 1)}, "x")["seed"] == 2**62 + 1
    assert validate_options(spec, {"seed": 3.0}, "x")["seed"] == 3
    assert validate_options(spec, {"seed": "1e3"}, "x")["seed"] == 1000
    for bad in (2.5, "2.5", "x", True, float("inf")):
        with pytest.raises(assoc.errors.OptionError, match="integer"):
            validate_options(spec, {"seed": bad}, "x")


def test_repr_of_a_component_with_a_dataframe_option():
    frame = pd.DataFrame({"word": ["a", "b"], "value": [1.0, 2.0]})
    from assoc.plugins.manager import get_analysis

    analysis = get_analysis("correlate")(criterion=frame)
    text = repr(analysis)
    assert text.startswith(type(analysis).__name__ + "(") and "criterion=<DataFrame 2x2>" in text
    assert "\n" not in text


def test_list_defaults_are_not_shared_between_instances():
    spec = [Option("within", list, ["model"]), Option("names", dict, {"a": ["x"]})]
    first = validate_options(spec, {}, "x")
    first["within"].append("design")
    first["names"]["a"].append("y")
    second = validate_options(spec, {}, "x")
    assert second == {"within": ["model"], "names": {"a": ["x"]}}
    assert spec[0].default == ["model"]


# -- .json tables -----------------------------------------------------------------------------------------


def test_json_tables_are_json_arrays(tmp_path):
    table = set_provenance(_table(0.1 + 0.2), {"scorer": "s"})
    path = write_table(table, tmp_path / "t.json")
    records = json.loads(path.read_text(encoding="utf-8"))  # one JSON document, not JSON Lines
    assert isinstance(records, list) and records[0]["value"] == 0.1 + 0.2
    back = read_table(path)
    pd.testing.assert_frame_equal(back, table, check_dtype=False)
    assert back.attrs["assoc"] == {"scorer": "s"}


def test_json_lines_named_json_is_refused_clearly(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"model": "m", "value": 1}\n{"model": "m", "value": 2}\n', encoding="utf-8")
    with pytest.raises(TableError, match=r"\.jsonl"):
        read_table(path)


def test_json_data_files_are_json_arrays(tmp_path):
    from assoc.table.files import read_data_file

    path = tmp_path / "criterion.json"
    path.write_text(json.dumps([{"target": "a", "criterion": 1.5}, {"target": "b", "criterion": 2.5}]))
    frame = read_data_file(path, what="criterion")
    assert frame.to_dict("records") == [{"target": "a", "criterion": 1.5}, {"target": "b", "criterion": 2.5}]


# -- cache compaction -------------------------------------------------------------------------------------


def _fill(namespace, n_packs: int) -> dict:
    values = {}
    for i in range(n_packs):
        namespace.put_many({f"k{i}": [float(i)]})
        values[f"k{i}"] = [float(i)]
    return values


def test_concurrent_compaction_is_not_reported_as_corruption(tmp_path, monkeypatch):
    from pathlib import Path

    from assoc.infra import cache as cache_module
    from assoc.infra.cache import CacheWarning, ResultCache

    monkeypatch.setattr(cache_module, "COMPACT_AFTER", 4)
    expected = _fill(ResultCache(tmp_path).namespace(kind="t"), 6)
    reader = ResultCache(tmp_path).namespace(kind="t")
    real_read = Path.read_text
    compacted = []

    def read_while_another_process_compacts(self, *args, **kwargs):
        if self.name.startswith("pack-") and not compacted:
            compacted.append(True)
            ResultCache(tmp_path).namespace(kind="t")._load()  # "another process" merges every pack now
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_while_another_process_compacts)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        assert reader.get_many(expected) == expected
    assert compacted
    monkeypatch.setattr(Path, "read_text", real_read)
    assert ResultCache(tmp_path).namespace(kind="t").get_many(expected) == expected
    assert len(list(reader.directory.glob("pack-*.json"))) == 1


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_compaction_is_locked(tmp_path, monkeypatch):
    import fcntl

    from assoc.infra import cache as cache_module
    from assoc.infra.cache import ResultCache

    monkeypatch.setattr(cache_module, "COMPACT_AFTER", 4)
    namespace = ResultCache(tmp_path).namespace(kind="t")
    expected = _fill(namespace, 6)
    with open(namespace.directory / ".compact.lock", "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # another process is compacting
        assert ResultCache(tmp_path).namespace(kind="t").get_many(expected) == expected
        assert len(list(namespace.directory.glob("pack-*.json"))) == 6  # left to the lock holder
    assert ResultCache(tmp_path).namespace(kind="t").get_many(expected) == expected
    assert len(list(namespace.directory.glob("pack-*.json"))) == 1

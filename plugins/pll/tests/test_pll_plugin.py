"""The plugin through the public API: registration, conformance, bundled Watson et al. stimuli,
and the replication pipeline (pll -> posterior -> loglik) on a tiny model."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pandas as pd
import pytest
import yaml

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from assoc import api  # noqa: E402
from assoc.stimuli import Stimuli  # noqa: E402
from assoc.testing import check_analysis, check_scorer  # noqa: E402


def source_data() -> dict:
    """The project's extraction of the paper (the package ships a copy of it)."""
    from importlib import resources

    text = resources.files("assoc_pll").joinpath("data", "watson2023_gender_attitudes.yaml").read_text("utf-8")
    return yaml.safe_load(text)


def test_plugin_registers_scorer_analyses_and_stimuli():
    assert "pll" in api.scorers()
    assert {"posterior", "loglik"} <= set(api.analyses())
    assert {"watson2023", "watson2023_they"} <= set(api.stimuli_sets())


def test_plugin_module_does_not_import_torch():
    code = (
        "import sys, assoc_pll.plugin, assoc_pll.scorer, assoc_pll.analyses, assoc_pll.bundled;"
        "heavy = [m for m in ('torch', 'transformers', 'wordfreq') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_watson2023_designs_follow_the_paper():
    data = source_data()["part1_role_nouns"]
    stimuli = Stimuli.load("watson2023")
    assert len(stimuli) == 20
    three = [d for d in stimuli if set(d.mask) == {"FEM", "MASC", "NEUT"}]
    two = [d for d in stimuli if set(d.mask) == {"FEM", "MASC_or_NEUT"}]
    assert len(three) == 14 and len(two) == 6
    printed = {
        tuple(sorted(s["as_printed"])) for kind in ("three_way", "two_way") for s in data["role_noun_sets"][kind]
    }
    assert {tuple(sorted(w for ws in d.mask.values() for w in ws)) for d in stimuli} == printed
    for design in stimuli:
        assert design.target == {"male": tuple(data["names"]["male"]), "female": tuple(data["names"]["female"])}
        assert len(design.attribute["state"]) == 50
        (query,) = design.queries
        article = query.split()[2]
        assert query == f"{{TARGET}} is {article} [MASK] from {{ATTRIB}}"  # no period, as the authors' code
        # the article agrees with the variants' first sound, as in the paper's examples
        assert article == ("an" if design.name in {"anchor", "actor", "heir"} else "a")
    police = Stimuli.load("watson2023:police_officer").designs[0]
    assert police.mask == {"FEM": ("policewoman",), "MASC": ("policeman",), "NEUT": ("police officer",)}
    assert "Kalya" in police.target["female"]


def test_watson2023_they_uses_printed_examples():
    design = Stimuli.load("watson2023_they").designs[0]
    printed = {row["example"] for row in source_data()["part2_singular_they"]["antecedent_types_table3"]}
    assert set(w for ws in design.target.values() for w in ws) == printed - {"The cup"}
    assert design.mask == {"they": ("they",)}


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    torch = pytest.importorskip("torch")
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    torch.set_num_threads(1)  # a tiny model: threads only add overhead

    return str(build_bert_wordpiece(tmp_path_factory.mktemp("pll_plugin") / "bert"))


SMALL = {
    "designs": [
        {
            "name": "firefighter",
            "queries": ["{TARGET} is a [MASK] from {ATTRIB}."],
            "mask": {"FEM": ["firewoman"], "MASC": ["fireman"], "NEUT": ["firefighter"]},
            "target": {"female": ["Emily"], "male": ["John"]},
            "attribute": {"state": ["Utah", "New York"]},
        }
    ]
}


def test_scorer_conforms(bert_dir):
    table = check_scorer("pll", SMALL, [bert_dir], {"tokens_scored": "context"}, expect_rows=2 * 2 * 3)
    assert set(table["measure"]) == {"pll"}


def test_replication_pipeline_on_a_tiny_model(bert_dir, tmp_path):
    table = api.score("pll", SMALL, [bert_dir], progress=False, tokens_scored="context")
    assert "Salazar, J., Liang, D." in str(table.assoc.cite())
    counts = {"firewoman": 1, "fireman": 10, "firefighter": 5}
    posterior = check_analysis("posterior", table, {"prior": "counts", "counts": counts, "average_over": ["attribute"]})
    assert len(posterior) == 2 * 3
    # recompute P(V|C) from the table's PLLs by hand, state by state, then average
    for name in ("Emily", "John"):
        per_state = []
        for state in ("Utah", "New York"):
            rows = table[(table["target"] == name) & (table["attribute"] == state)]
            joint = {v: math.exp(x) * counts[v] / 16 for v, x in zip(rows["mask"], rows["value"])}
            per_state.append({v: j / sum(joint.values()) for v, j in joint.items()})
        got = posterior[posterior["target"] == name].set_index("mask")["posterior"]
        for variant in counts:
            assert got[variant] == pytest.approx((per_state[0][variant] + per_state[1][variant]) / 2, rel=1e-9)
    choices = pd.DataFrame(
        [{"design": "firefighter", "target": "Emily", "group": "prog", "mask": "firefighter", "count": 2}]
    )
    path = tmp_path / "choices.csv"
    choices.to_csv(path, index=False)
    fit = check_analysis(
        "loglik", table, {"prior": "counts", "counts": counts, "average_over": ["attribute"], "choices": str(path)}
    )
    model_row = fit[(fit["predictor"] == "model")].iloc[0]
    emily = posterior[posterior["target"] == "Emily"].set_index("mask")["posterior"]
    assert model_row["mean_loglik"] == pytest.approx(math.log(emily["firefighter"]), rel=1e-9)

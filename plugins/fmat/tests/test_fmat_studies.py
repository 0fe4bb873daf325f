"""The bundled Bao (2024) designs against the shared extraction of the paper."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import assoc
from assoc.errors import StimuliError

# the shared extraction of the papers' stimuli: ../shared/stimuli beside the repository (parents[3] is its root)
SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "stimuli" / "bao2024_fmat.yaml"
PACKAGED = Path(__file__).resolve().parents[1] / "src" / "assoc_fmat" / "data" / "bao2024_fmat.yaml"


def test_packaged_copy_is_the_shared_file():
    if not SHARED.is_file():
        pytest.skip("the shared stimuli folder (../shared beside the repository) is not on this machine")
    assert SHARED.read_bytes() == PACKAGED.read_bytes()


def test_designs_follow_the_paper():
    raw = yaml.safe_load(PACKAGED.read_text(encoding="utf-8"))
    studies = {s["id"]: s for s in raw["studies"]}
    stimuli = assoc.Stimuli.load("bao2024")
    names = [d.name for d in stimuli.designs]
    assert names[:2] == ["2A-Q1", "2A-Q2"] and "4A-Q3" in names and not any(n.startswith("1") for n in names)
    d = {x.name: x for x in stimuli.designs}
    assert d["2A-Q2"].queries == ("Most people [MASK] {TARGET}.",)
    assert d["2A-Q1"].mask == {"positive": ("like", "notice"), "negative": ("dislike", "ignore")}
    assert (
        list(d["2C-Q1"].target["African American names"]) == studies["2C"]["targets"]["African American names"]["items"]
    )
    assert d["3A-Q1"].attribute["Career"] == tuple(studies["3A"]["attrib"]["Career"])
    years = d["4C-Q1"].mask["Year"]
    assert len(years) == 220 and years[0] == "1800" and years[-1] == "2019"
    assert d["4B-Q1"].target == {"White": ("White people",), "Asian": ("Asian people",)}


def test_selection_by_study_and_missing_items():
    assert [x.name for x in assoc.Stimuli.load("bao2024:4A").designs] == ["4A-Q1", "4A-Q2", "4A-Q3"]
    for study in ("1A", "1B-Q2", "1C"):
        with pytest.raises(StimuliError, match="not (listed|printed)"):
            assoc.Stimuli.load(f"bao2024:{study}")


def test_bundled_study_runs_through_fmat_and_lpr(tiny_models):
    table = assoc.score("fmat", "bao2024:3D", models=[tiny_models["bert"]], cache=False)
    assert len(table) == 2 * 5 * 2 and set(table["target"]) == {"Black", "Asian"}
    out = assoc.analyze("lpr", table, standardize="sigma")
    assert len(out) == 5 and set(out["attribute_group"]) == {"Masculine - Feminine"}

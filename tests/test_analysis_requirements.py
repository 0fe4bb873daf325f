"""Every analysis declares what tables it reads and refuses any other, in one line, before it runs.

The parametrised tests go over every registered analysis: a table that breaks the analysis'
declared requirement is refused by ``assoc.analyze`` with one line (what it needs, what the
table holds), and the requirement is not a blanket refusal (a table that meets it passes the
check). The named cases of issue 24 (an ICC of one model, ``stereotype`` on WEAT and FMAT
tables, ``lpr`` on a WEAT table) run on real tables.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc import plugins
from assoc.analysis import Requirement, check_requirement
from assoc.errors import TableError
from assoc.table import normalise

REAL_ANALYSES = sorted(name for name, entry in plugins.registry().analyses.items() if not entry.obj.example)


def base_table() -> pd.DataFrame:
    """A table from a scorer no plugin registers: 2 models, 2 designs x 2 queries, 2 x 2 targets, 2 x 2 attributes."""
    rows = []
    rng = np.random.default_rng(0)
    for model in ("m1", "m2"):
        for design in ("d1", "d2"):
            for query in ("q1", "q2"):
                for tg, targets in (("X", ("x1", "x2")), ("Y", ("y1", "y2"))):
                    for target in targets:
                        for ag, attributes in (("A", ("a1", "a2")), ("B", ("b1", "b2"))):
                            for attribute in attributes:
                                rows.append(
                                    {
                                        "scorer": "handmade",
                                        "model": model,
                                        "context": f"{design}-{query}",
                                        "design": design,
                                        "target_group": tg,
                                        "target": target,
                                        "attribute_group": ag,
                                        "attribute": attribute,
                                        "mask_group": ag,
                                        "mask": attribute,
                                        "measure": "m",
                                        "value": float(rng.normal()),
                                    }
                                )
    return normalise(pd.DataFrame(rows))


def meeting(cls: type, table: pd.DataFrame) -> pd.DataFrame:
    """``table`` adjusted to meet ``cls.requires``: its scorer and measure, where it names them."""
    req = cls.requires
    out = table.copy()
    if req.scorers is not None:
        out["scorer"] = req.scorers[0]
    if req.measures is not None:
        out["measure"] = req.measures[0]
    for column in req.columns:
        if column not in out.columns:
            out[column] = ""
    return out


def breaking(cls: type, analysis: assoc.Analysis, table: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """A table that breaks ``cls.requires`` in the first way it can be broken, and the word the refusal names."""
    req = cls.requires
    installed = sorted(plugins.registry().scorers)
    if req.scorers is not None:
        other = next(s for s in installed if s not in req.scorers)
        return table.assign(scorer=other), other
    if req.measures is not None:
        return table.assign(measure="some_other_measure"), "some_other_measure"
    for key, n in (req.at_least or {}).items():
        chosen = analysis.params.get(key, key)
        columns = [chosen] if isinstance(chosen, str) else list(chosen)
        first = table[columns].iloc[0]
        keep = np.logical_and.reduce([table[c] == first[c] for c in columns])
        assert n > 1 or len(columns) == 1
        if n == 1:  # at least one value: break it by removing the column
            return table.drop(columns=columns), columns[0]
        return table[keep].reset_index(drop=True), key
    # No declared need beyond the association-table contract: a table without values breaks that.
    return table.drop(columns=["value"]), "value"


def required_options(cls: type) -> dict:
    """Values for required options, enough to construct the analysis (the check runs before run)."""
    values = {
        "criterion": {"x1": 1.0, "x2": 2.0, "y1": 3.0, "y2": 4.0},
        "formula": "value ~ target_group",
        "dictionary": {"Warmth": {"a1": 1.0}},
        "outcome": "value",
        "valence": "value",
        "second": pd.DataFrame({"target": ["x1", "x2", "y1"], "v": [1.0, 2.0, 3.0]}),
        "choices": pd.DataFrame({"design": ["d1"], "mask": ["a1"], "count": [1]}),
        "norms": "warriner",
    }
    return {o.name: values[o.name] for o in cls.options if o.required}


@pytest.mark.parametrize("name", REAL_ANALYSES)
def test_every_analysis_declares_what_it_reads(name):
    cls = assoc.get_analysis(name)
    assert isinstance(cls.requires, Requirement)
    assert cls.requires.needs, f"{name} says in words what tables it reads"
    assert cls.requires.describe()


@pytest.mark.parametrize("name", REAL_ANALYSES)
def test_every_analysis_refuses_a_table_it_cannot_read_in_one_line(name):
    cls = assoc.get_analysis(name)
    try:
        analysis = cls(**required_options(cls))
    except Exception as exc:  # pragma: no cover - a new required option: extend required_options
        pytest.fail(f"cannot construct {name}: {exc}")
    good = meeting(cls, base_table())
    # Not a blanket refusal: the same table, meeting the requirement, passes the check.
    check_requirement(analysis, good, installed_scorers=set(plugins.registry().scorers))
    bad, named = breaking(cls, analysis, good)
    with pytest.raises(TableError) as caught:
        assoc.analyze(name, bad, **required_options(cls))
    message = str(caught.value)
    assert "\n" not in message
    # the declared requirement's line, or the table contract's for a required column
    assert message.startswith(f"analysis {name!r} needs ") or message.startswith(f"input of analysis {name!r} lacks")
    assert named in message


def test_the_check_runs_before_the_analysis(monkeypatch):
    ran = []
    cls = assoc.get_analysis("icc")
    monkeypatch.setattr(cls, "run", lambda self, table: ran.append(1))
    with pytest.raises(TableError, match="at least 2 are needed"):
        assoc.analyze("icc", base_table().query("model == 'm1'"))
    assert ran == []


def test_a_handmade_table_is_judged_by_its_columns_not_its_scorer():
    # stereotype reads chat_listing/sbert_topwords tables; a hand-made table of responses passes
    table = base_table().query("model == 'm1'")
    result = assoc.analyze("stereotype", table, dictionary={"Warmth": {"a1": 1.0, "b1": -1.0}})
    assert set(result["measure"]) == {"representativeness", "direction"}


def test_the_requirement_follows_the_options():
    # icc counts the raters the user chose: one model with two designs as raters is enough
    one_model = base_table().query("model == 'm1'")
    with pytest.raises(TableError, match=r"1 raters \(model\): m1"):
        assoc.analyze("icc", one_model)
    result = assoc.analyze("icc", one_model, raters=["context"], items=["target", "attribute"])
    assert len(result) and result["n_raters"].eq(4).all()


# -- the cases of issue 24, on real tables ----------------------------------------------------------


@pytest.fixture(scope="module")
def weat_table():
    return assoc.score("weat", "caliskan:weat1")


def test_stereotype_refuses_a_weat_table(weat_table):
    with pytest.raises(TableError) as caught:
        assoc.analyze("stereotype", weat_table, dictionary={"Warmth": {"caress": 1.0}})
    message = str(caught.value)
    assert "comes from scorer weat" in message and "chat_listing or sbert_topwords" in message
    fmat_like = base_table().assign(scorer="fmat", measure="log_prob")  # an FMAT table's shape and scorer
    with pytest.raises(TableError, match="comes from scorer fmat; score with chat_listing"):
        assoc.analyze("stereotype", fmat_like, dictionary={"Warmth": {"a1": 1.0}})


def test_lpr_and_posterior_refuse_a_weat_table(weat_table):
    with pytest.raises(TableError, match="needs an fmat table.*comes from scorer weat; score with fmat"):
        assoc.analyze("lpr", weat_table)
    with pytest.raises(TableError, match="needs a pll table.*comes from scorer weat"):
        assoc.analyze("posterior", weat_table)


def test_icc_of_one_model_says_to_score_a_second(weat_table):
    with pytest.raises(TableError) as caught:
        assoc.analyze("icc", weat_table)
    message = str(caught.value)
    assert "1 raters (model): glove-6b-50d" in message and "score a second model" in message


def test_effect_size_defaults_on_a_raw_weat_table_warn(weat_table):
    with pytest.warns(UserWarning) as record:
        assoc.analyze("effect_size", weat_table, n_bootstrap=0, exact_limit=0, n_resamples=99)
    messages = [str(w.message) for w in record]
    pooled = [m for m in messages if "pools the rows of 2 attribute_groups" in m]
    independent = [m for m in messages if "independent observation" in m and "unit=target" in m]
    assert pooled and independent
    # The WEAT contrast kept apart and words as units: no such warning.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assoc.analyze(
            "effect_size",
            weat_table,
            within=["measure", "model", "attribute_group"],
            unit=["target"],
            n_bootstrap=0,
        )
    assert not [w for w in caught if "pools" in str(w.message) or "independent observation" in str(w.message)]


def test_differentiability_with_one_term_per_category_warns_not_identified():
    rng = np.random.default_rng(3)
    n = 24
    wide = pd.DataFrame(
        {
            "scorer": "chat_listing",
            "model": "chat",
            "target_group": [f"category {i}" for i in range(n)],  # one term per category
            "target": [f"term {i}" for i in range(n)],
            "warmth_direction": rng.uniform(-1, 1, n),
            "warmth_representativeness": rng.uniform(0, 1, n),
        }
    )
    with pytest.warns(UserWarning, match="not identified"):
        result = assoc.analyze("differentiability", wide)
    assert not result["identified"].any()
    assert "random=[]" in result["warnings"].iloc[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ols = assoc.analyze("differentiability", wide, random=[])
    assert ols["identified"].all() and not [w for w in caught if "identified" in str(w.message)]
    # two terms per category: identified
    paired = wide.assign(target_group=[f"category {i // 2}" for i in range(n)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mixed = assoc.analyze("differentiability", paired)
    assert mixed["identified"].all() and not [w for w in caught if "not identified" in str(w.message)]


def test_an_analysis_that_picks_its_rows_reads_a_compare_table():
    cls = assoc.get_analysis("word_association")
    assert cls.requires.among_others
    analysis = cls()
    installed = set(plugins.registry().scorers)
    mixed = meeting(cls, base_table())
    mixed.loc[mixed.index[: len(mixed) // 2], "scorer"] = "weat"  # an assoc.compare table: weat rows beside
    check_requirement(analysis, mixed, installed_scorers=installed)
    with pytest.raises(TableError, match="has no row of scorer chat_word_association"):
        check_requirement(analysis, mixed.assign(scorer="weat"), installed_scorers=installed)
    # stereotype does not pick rows: a weat row among listed words is refused
    listing = base_table().assign(scorer="chat_listing")
    listing.loc[listing.index[0], "scorer"] = "weat"
    with pytest.raises(TableError, match="comes from scorer weat"):
        check_requirement(
            assoc.get_analysis("stereotype")(dictionary={"W": {"a1": 1.0}}), listing, installed_scorers=installed
        )

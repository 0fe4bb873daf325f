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
    """``table`` adjusted to meet ``cls.requires``: its scorer and measure, where it names them.

    A required column the table lacks is added empty, or numbered row by row when it is one of the
    columns that identify a row (`Requirement.keys`), so that no two rows share a key.
    """
    req = cls.requires
    out = table.copy()
    if req.scorers is not None:
        out["scorer"] = req.scorers[0]
    if req.measures is not None:
        out["measure"] = req.measures[0]
    for column in req.columns:
        if column not in out.columns:
            out[column] = [str(i) for i in range(len(out))] if column in req.keys else ""
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


# -- one guard for every analysis: repeated rows, codes and conventions (issue 46 item 2) --------------

ALL_ANALYSES = sorted(plugins.registry().analyses)  # the example plugin's too: every analysis passes the guard


def _checked(name: str) -> tuple[type, assoc.Analysis, pd.DataFrame]:
    """The class, an instance and a table that meets its requirement (checked: the guard is no blanket refusal)."""
    cls = assoc.get_analysis(name)
    analysis = cls(**required_options(cls))
    good = meeting(cls, base_table())
    check_requirement(analysis, good, installed_scorers=set(plugins.registry().scorers))
    return cls, analysis, good


#: Analyses whose rows need not be unique, and why: their estimates do not move when every row repeats.
REPEATS_ARE_DATA = {
    "stereotype": "a response repeated is data: SADCAT counts each; the option deduplicate removes them"
}


@pytest.mark.parametrize("name", ALL_ANALYSES)
def test_every_analysis_refuses_a_table_concatenated_with_itself(name):
    cls, _, good = _checked(name)
    if not cls.requires.keys:
        assert name in REPEATS_ARE_DATA, f"{name} says which columns identify a row, or why rows may repeat"
        once = assoc.analyze(name, good, **required_options(cls))
        twice = assoc.analyze(name, pd.concat([good, good]), **required_options(cls))
        assert np.allclose(once["value"], twice["value"], equal_nan=True)  # shares and means: the same estimates
        return
    with pytest.raises(TableError) as caught:
        assoc.analyze(name, pd.concat([good, good]), **required_options(cls))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"analysis {name!r} needs one row per ")
    assert f"{len(good):,} of {2 * len(good):,} rows that repeat another row's" in message


@pytest.mark.parametrize("name", ALL_ANALYSES)
def test_every_analysis_refuses_a_table_of_a_measure_it_cannot_mean_anything_on(name):
    cls, _, good = _checked(name)
    req = cls.requires
    assert req.measures is not None or req.not_measures, f"{name} declares the measures it reads or refuses"
    wrong = "some_other_measure" if req.measures is not None else req.not_measures[0]
    with pytest.raises(TableError) as caught:
        assoc.analyze(name, good.assign(measure=wrong), **required_options(cls))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"analysis {name!r} needs ")
    assert f"holds measure {wrong}" in message


CONVENTIONAL = sorted(name for name in ALL_ANALYSES if assoc.get_analysis(name).requires.conventions)


def test_the_analyses_of_sums_of_log_probabilities_declare_the_reduction():
    assert {"crows_pairs", "lpr", "posterior", "loglik", "matched_guise"} <= set(CONVENTIONAL)


@pytest.mark.parametrize("name", CONVENTIONAL)
def test_every_analysis_refuses_a_table_made_under_another_convention(name):
    from assoc.table import make_provenance, set_provenance

    cls, _, good = _checked(name)
    setting, allowed = next(iter(cls.requires.conventions.items()))
    run = make_provenance(kind="score", scorer=str(good["scorer"].iloc[0]), options={setting: "something_else"})
    with pytest.raises(TableError, match=f"was made with {setting}=something_else .scorer .*'s option"):
        assoc.analyze(name, set_provenance(good.copy(), run), **required_options(cls))
    # the same setting as a column, and inside a concatenation's and an analysis' records of their inputs
    with pytest.raises(TableError, match=f"was made with {setting}=something_else .column {setting}."):
        assoc.analyze(name, good.assign(**{setting: "something_else"}), **required_options(cls))
    nested = {"kind": "analysis", "input": {"kind": "combined", "runs": [run]}}
    with pytest.raises(TableError, match=f"{setting}=something_else"):
        assoc.analyze(name, set_provenance(good.copy(), nested), **required_options(cls))
    fine = make_provenance(kind="score", scorer=str(good["scorer"].iloc[0]), options={setting: allowed[0]})
    check_requirement(cls(**required_options(cls)), set_provenance(good.copy(), fine), installed_scorers=set())


def test_rows_that_differ_in_a_column_are_not_repeats_and_nan_keys_are_alike():
    table = base_table()
    analysis = assoc.get_analysis("icc")()
    check_requirement(analysis, table)  # the values differ, the keys do not repeat
    two_runs = pd.concat([table, table.assign(model=table["model"] + "-b")], ignore_index=True)
    check_requirement(analysis, two_runs)
    # a repeated key with NaN in an extra column is a repeat (NaN is alike NaN here, as in pandas' duplicated)
    with_nan = table.assign(extra=np.nan)
    with pytest.raises(TableError, match="1 of 129 rows"):
        check_requirement(analysis, pd.concat([with_nan, with_nan.iloc[:1].assign(value=9.0)]))


def test_case_1_bbq_counts_a_duplicated_table_twice_today_and_is_refused():
    """Issue 46 case 1: ``assoc.analyze("bbq", pd.concat([t, t]))``."""
    bbq = assoc.get_analysis("bbq")
    rng = np.random.default_rng(0)
    rows = []
    for n in range(40):
        label, target, chosen = (int(v) for v in rng.integers(0, 3, 3))
        rows.append({
            "model": "m", "category": "Age", "example_id": n, "context_condition": "disambig",
            "question_polarity": "neg", "label": label, "label_type": "label", "target_loc": target % 2,
            "chosen": chosen, "chosen_group": "unknown" if chosen == 2 else "g", "unknown_loc": 2, "status": "ok",
            "measure": "correct", "value": float(chosen == label), "target_group": "Age", "target": str(n),
        })  # fmt: skip
    table = assoc.from_records(rows, scorer="chat_bbq")
    once = bbq(n_bootstrap=0).run(table)
    # Today's behaviour, without the guard: every count doubles (the examples are counted twice)
    twice = bbq(n_bootstrap=0).run(pd.concat([table, table]))
    assert once["n_examples"].item() == 40 and twice["n_examples"].item() == 80
    assert twice["neg_target"].item() == 2 * once["neg_target"].item()
    with pytest.raises(TableError) as caught:
        assoc.analyze("bbq", pd.concat([table, table]), n_bootstrap=0)
    assert "40 of 80 rows that repeat another row's key (e.g. 2 rows with model='m', example_id=0" in str(caught.value)


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    pytest.importorskip("transformers")
    from assoc.testing.tiny_clm import build_gpt2_bpe

    return build_gpt2_bpe(tmp_path_factory.mktemp("guard-clm") / "gpt2", seed=0, positions=256)


def test_case_2_a_clm_table_of_mean_log_probabilities_is_not_read_as_sentence_log_probabilities(tiny_gpt2):
    """Issue 46 case 2: a ``clm`` table made with ``reduction=mean`` passed ``crows_pairs``."""
    stimuli = assoc.Stimuli.load("crows_pairs").select(["pair0", "pair100", "pair200", "pair300"])
    summed = assoc.score("clm", stimuli, [str(tiny_gpt2)], measure="sentence", cache=False, progress=False)
    mean = assoc.score(
        "clm", stimuli, [str(tiny_gpt2)], measure="sentence", reduction="mean", cache=False, progress=False
    )
    # the mean per token is the sum divided by the tokens scored (by hand): another number than log P(sentence)
    per_token = summed["value"] / summed["n_tokens"]
    assert np.allclose(mean["value"], per_token) and not np.allclose(mean["value"], summed["value"])
    # Today's behaviour, without the guard: the analysis reads it as sentence log probabilities
    crows = assoc.get_analysis("crows_pairs")
    silent = crows(by_bias_type=False).run(mean)
    assert silent["crows_metric"].item() == "clm:sentence"
    with pytest.raises(TableError) as caught:
        assoc.analyze("crows_pairs", mean)
    message = str(caught.value)
    assert "was made with reduction=mean (scorer clm's option, in the provenance)" in message
    assert "reads reduction sum" in message and "\n" not in message
    assert len(assoc.analyze("crows_pairs", summed, by_bias_type=False)) == 1


def test_a_column_computed_from_codes_is_an_outcome_though_the_rows_hold_a_code_measure():
    # stereotype's shape="responses" keeps each listed word's row (measure listed) with its codes as
    # columns: emmeans reads such a column; `value` of the same rows (1 marks a listed word) is refused
    rows = pd.DataFrame(
        {
            "scorer": "chat_listing",
            "model": "m",
            "measure": "listed",
            "target": ["men"] * 3 + ["women"] * 3,
            "value": 1.0,
            "warmth_direction": [0.1, 0.4, 0.3, 0.9, 0.7, 0.8],
        }
    )
    result = assoc.analyze("emmeans", rows, outcome="warmth_direction", factor="target")
    contrast = result[result["kind"] == "contrast"].iloc[0]
    # by hand: means 0.8/3 and 2.4/3, difference 0.5333...
    assert abs(abs(contrast["estimate"]) - (2.4 - 0.8) / 3) < 1e-12
    with pytest.raises(TableError, match="holds measure listed"):
        assoc.analyze("emmeans", rows, outcome="value", factor="target")

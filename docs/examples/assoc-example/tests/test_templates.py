import pytest

import assoc
from assoc.testing import check_analysis, check_executor

STIMULI = {"target": {"T": ["ant", "bee"]}, "attribute": {"A": ["antler", "rose"], "B": ["beet"]}}


def test_cell_means_by_hand():
    table = assoc.score("char_ngram", STIMULI)
    result = check_analysis("cell_means", table)
    by_hand = table.groupby("attribute_group")["value"].mean()  # one model, one target group
    assert result["estimate"].tolist() == pytest.approx([by_hand["A"], by_hand["B"]])
    assert result["n_values"].tolist() == [4, 2]


class LengthUnits(assoc.Scorer):
    """len(target) - len(attribute), one work unit per target word: any scorer with units will do."""

    name = "length_units_example"
    description = "Length differences, one unit per target (for testing executors)."
    measure = "length_difference"
    requires_models = False
    default_models = ("len",)

    def plan(self, stimuli, models):
        pairs = [pair for design in stimuli for pair in design.word_pairs()]
        targets = sorted({t for _, t, _, _ in pairs})
        return [assoc.WorkUnit(f"{m}|{t}", m, [p for p in pairs if p[1] == t]) for m in models for t in targets]

    def load_worker(self, model):
        return model

    def run_unit(self, state, unit):
        return [
            dict(model=state, target_group=tg, target=t, attribute_group=ag, attribute=a, value=len(t) - len(a))
            for tg, t, ag, a in unit.payload
        ]


class UnitsPlugin:
    @assoc.hookimpl
    def register_scorers(self, register):
        register(LengthUnits)


@pytest.fixture
def units_scorer():
    assoc.plugins.register(UnitsPlugin(), name="length-units-example")
    yield
    assoc.plugins.unregister("length-units-example")


@pytest.mark.parametrize("workers", [1, 3])
def test_threadpool_executor_conforms(units_scorer, workers):
    table = check_executor("threadpool", "length_units_example", STIMULI, executor_options={"workers": workers})
    # by hand: ant-antler -3, ant-rose -1, ant-beet -1, bee-antler -3, bee-rose -1, bee-beet -1
    assert sorted(table["value"].tolist()) == [-3, -3, -1, -1, -1, -1]
    assert table.attrs["assoc"]["executor"]["workers"] == workers

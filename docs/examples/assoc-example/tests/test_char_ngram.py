import pytest

import assoc
from assoc.testing import check_plugin_imports, check_scorer


def test_conforms_to_the_table_contract():
    check_scorer("char_ngram", {"target": {"T": ["ant"]}, "attribute": {"A": ["antler", "rose"]}}, expect_rows=2)


def test_value_by_hand():
    # " an","ant","nt " vs " an","ant","ntl","tle","ler","er ": 2 shared trigrams, norms sqrt(3) and sqrt(6)
    table = assoc.score("char_ngram", {"target": {"T": ["ant"]}, "attribute": {"A": ["antler"]}})
    assert table["value"].item() == pytest.approx(2 / 18**0.5)


def test_start_up_stays_cheap():
    check_plugin_imports("example")

"""Text embedding files with a malformed line are refused, never silently broadcast by gensim."""

import numpy as np
import pytest
from assoc_weat.embeddings import load_file

from assoc.errors import ModelError

WORDS = ["the", "paris", "new", "york"]
MATRIX = np.arange(12, dtype=np.float32).reshape(4, 3) / 4 + 0.1


def _lines(bad_word: str, bad_line: str) -> str:
    return "".join(bad_line if w == bad_word else f"{w} {' '.join(map(str, row))}\n" for w, row in zip(WORDS, MATRIX))


@pytest.mark.parametrize("header", ["", "4 3\n"])
def test_a_line_with_a_single_number_is_refused(tmp_path, header):
    path = tmp_path / "vectors.txt"
    path.write_text(header + _lines("new", "new 0.5\n"), encoding="utf-8")
    with pytest.raises(ModelError, match=r"vectors\.txt.*line \d+.*'new' has 1 number.*3"):
        load_file(path)


def test_a_genuine_constant_vector_is_kept(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_text(_lines("new", "new 0 0 0\n"), encoding="utf-8")
    vectors = load_file(path)
    assert vectors["new"].tolist() == [0.0, 0.0, 0.0]

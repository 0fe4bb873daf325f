"""The examples of docs/pll.md and docs/replication/watson2023.md run as written.

Every ```python block of a page runs in order in one namespace, and every ``assoc``
command of its ```bash blocks runs through the CLI, in a temporary directory, with two
substitutions only: ``bert-base-uncased`` becomes a tiny local BERT (offline), and the
bundled ``watson2023`` stimuli keep all 20 role-noun sets but only 2 + 2 of the names and
2 of the 50 states (so the whole recipe takes seconds). Files the pages ask the reader
to provide are written from the pages' own examples (the choices CSV) or with equal
counts for every variant (the prior counts, which the paper does not print).
"""

from __future__ import annotations

import copy
import os
import re
import shlex
import warnings
from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks, record_run

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytest.importorskip("torch")
pytest.importorskip("transformers")

DOCS = Path(__file__).resolve().parents[3] / "docs"
PAGES = [
    pytest.param("pll.md", marks=[pytest.mark.docs("docs/pll.md", "bash"), pytest.mark.docs("docs/pll.md", "python")]),
    pytest.param(
        "replication/watson2023.md",
        marks=[
            pytest.mark.docs("docs/replication/watson2023.md", "bash"),
            pytest.mark.docs("docs/replication/watson2023.md", "python"),
        ],
    ),
]
MODEL = "bert-base-uncased"


def blocks(page: str, language: str) -> list[str]:
    return code_blocks(DOCS / page, language)


def shell_steps(block: str) -> list[tuple[str, ...]]:
    """The steps of a bash block: ("file", name, text) for a heredoc, ("var", name, value),
    ("assoc", command line) for an assoc command."""
    lines = block.replace("\\\n", " ").splitlines()
    steps: list[tuple[str, ...]] = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        heredoc = re.match(r"cat > (\S+) <<'EOF'$", line)
        if heredoc:
            body = []
            i += 1
            while lines[i].strip() != "EOF":
                body.append(lines[i])
                i += 1
            steps.append(("file", heredoc.group(1), "\n".join(body) + "\n"))
        elif re.match(r"^[A-Z_]+=\S+$", line):
            steps.append(("var", *line.split("=", 1)))
        elif line.startswith("assoc "):
            steps.append(("assoc", line.split("#")[0]))
        elif line:
            raise AssertionError(f"unexpected shell line in the docs: {line!r}")
        i += 1
    return steps


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    import torch

    from assoc.testing.tiny_mlm import build_bert_wordpiece

    torch.set_num_threads(1)
    return str(build_bert_wordpiece(tmp_path_factory.mktemp("pll_docs") / "bert"))


@pytest.fixture
def small_watson(monkeypatch):
    """watson2023 with all 20 sets, names Emily, Sarah / John, David and the first two states."""
    from assoc_pll import bundled as watson

    data = copy.deepcopy(watson.watson2023_data())
    part = data["part1_role_nouns"]
    assert {"Emily", "Sarah"} <= set(part["names"]["female"]) and {"John", "David"} <= set(part["names"]["male"])
    part["names"]["female"], part["names"]["male"] = ["Emily", "Sarah"], ["John", "David"]
    part["states"]["items"] = part["states"]["items"][:2]
    monkeypatch.setattr(watson, "watson2023_data", lambda: data)
    return data


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.slow
def test_page_examples_run_as_written(page, tiny_bert, small_watson, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from assoc.cli import cli
    from assoc.stimuli import Stimuli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    assert len(Stimuli.load("watson2023")) == 20
    assert len(Stimuli.load("watson2023:firefighter").designs[0].attribute["state"]) == 2  # the cut-down copy

    # the reader's files: the choices CSV printed on the page, equal prior counts
    (choices,) = [b for b in blocks(page, "text") if b.startswith("design,")]
    (tmp_path / "choices.csv").write_text(choices, encoding="utf-8")
    variants = sorted({w for d in Stimuli.load("watson2023") for ws in d.mask.values() for w in ws})
    (tmp_path / "role_noun_counts.csv").write_text(
        "variant,count\n" + "".join(f"{v},1\n" for v in variants), encoding="utf-8"
    )

    variables: dict[str, str] = {}
    ran = 0
    for block in blocks(page, "bash"):
        for step in shell_steps(block):
            if step[0] == "file":
                (tmp_path / step[1]).write_text(step[2], encoding="utf-8")
            elif step[0] == "var":
                variables[step[1]] = step[2]
            else:
                line = re.sub(r"\$(\w+)", lambda m: variables[m.group(1)], step[1])
                args = [tiny_bert if a == MODEL else a for a in shlex.split(line)[1:]]
                result = CliRunner().invoke(cli, args, catch_exceptions=False)
                assert result.exit_code == 0, f"{page}: `{line}` failed:\n{result.output}"
                ran += 1
        record_run([block])  # every step ran, bert-base-uncased replaced by the tiny model (the page says so)
    assert ran >= 2

    namespace: dict = {"__name__": f"docs_{page}"}
    python = blocks(page, "python")
    assert python
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for number, block in enumerate(python, 1):
            assert f'"{MODEL}"' in block or "assoc.analyze" in block
            code = block.replace(f'"{MODEL}"', repr(tiny_bert))
            exec(compile(code, f"{page} example {number}", "exec"), namespace)  # noqa: S102
            record_run([block])

    # the surprisal recipe: -log P(they | context), one row per printed antecedent
    table = namespace["table"]
    assert set(table["scorer"]) == {"fmat"} and set(table["mask"]) == {"they"}
    assert (table["surprisal"] == -table["value"]).all() and (table["surprisal"] > 0).all()

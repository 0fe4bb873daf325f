"""The front page and the documentation site: the README's quick start runs as printed, and every
installed scorer and analysis is documented in the README, ``docs/cli.md`` and the API reference."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from assoc import plugins
from assoc.reference import ANALYSES_PAGE, SCORERS_PAGE, reference_pages
from assoc.testing.docs import code_blocks, run_blocks

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def installed(kind: str) -> list[str]:
    reg = plugins.registry()
    entries = reg.scorers if kind == "scorers" else reg.analyses
    return sorted(name for name, entry in entries.items() if not entry.obj.example)


def quick_start_commands() -> list[str]:
    """The ``assoc`` lines of the README's offline quick-start block, exactly as printed."""
    blocks = code_blocks(README, "bash", section="## Quick start")
    offline = [b for b in blocks if "assoc models tiny" in b and "assoc analyze icc" in b]
    assert len(offline) == 1, "the README's quick start has one offline block ending in an ICC"
    return [line for line in offline[0].splitlines() if line.startswith("assoc ")]


@pytest.mark.slow
def test_readme_quick_start_runs_as_printed(tmp_path, monkeypatch):
    """A new user's path: a fresh directory, the README's commands, an FMAT result with an ICC across two models.

    Each line runs as printed (split as a shell splits it, comments dropped) through the ``assoc``
    command's own entry point, in this process: the same code path as the console script, without
    paying for a new interpreter (and its torch import) per line.
    """
    from click.testing import CliRunner

    from assoc.cli import build_cli

    commands = quick_start_commands()
    assert any(c.startswith("assoc models tiny") for c in commands)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    outputs = {}
    for command in commands:
        argv = shlex.split(command, comments=True)
        assert argv[0] == "assoc"
        result = CliRunner().invoke(build_cli(), argv[1:], prog_name="assoc")
        assert result.exit_code == 0, f"README command failed: {command}\n{result.output}"
        outputs[command] = result.output
    assert commands[-1].startswith("assoc analyze icc")
    assert "ICC(A,1)" in outputs[commands[-1]]
    from assoc.table import read_table

    table = read_table(tmp_path / "fmat.parquet")
    assert table["model"].nunique() == 2 and set(table["measure"]) == {"log_prob"}
    # The README's Python block runs too, in the same place (it reads the tiny models the commands built).
    namespace = run_blocks(code_blocks(README, "python"), name="README.md")
    assert namespace["icc"]["n_raters"].eq(2).all()


def test_readme_console_script_runs(tmp_path):
    """The installed ``assoc`` console script itself (one line of the quick start, in a new process)."""
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run(
        ["bash", "-c", "assoc scorers"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "fmat" in done.stdout and "examples (" in done.stdout


def readme_scorer_table() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("| scorer | method | models |")
    return text[start : text.index("\n\n", start)]


@pytest.mark.parametrize("name", installed("scorers"))
def test_every_scorer_is_documented(name):
    assert f"`{name}`" in readme_scorer_table(), f"README's scorer table lacks {name}"
    assert f"`{name}`" in (DOCS / "cli.md").read_text(encoding="utf-8"), f"docs/cli.md lacks {name}"
    page = reference_pages()[SCORERS_PAGE]
    assert f"## `{name}`" in page


@pytest.mark.parametrize("name", installed("analyses"))
def test_every_analysis_is_documented(name):
    assert f"`{name}`" in README.read_text(encoding="utf-8"), f"README lacks analysis {name}"
    assert f"`{name}`" in (DOCS / "cli.md").read_text(encoding="utf-8"), f"docs/cli.md lacks {name}"
    page = reference_pages()[ANALYSES_PAGE]
    section = page.split(f"## `{name}`", 1)[1].split("\n## ", 1)[0]
    cls = plugins.get_analysis(name)
    for option in cls.options:  # every option with its default, as the class declares it
        row = next(line for line in section.splitlines() if line.startswith(f"| `{option.name}` |"))
        if not option.required:
            assert f"`{option.default!r}`" in row or (option.default in ([], ()) and "`[]`" in row)
    assert "*Reads:*" in section


def test_example_plugins_are_left_out_of_the_lists():
    example = [n for n, e in plugins.registry().scorers.items() if e.obj.example]
    assert "char_ngram" in example  # installed by `make setup` for the plugin guide's tests
    assert "char_ngram" not in readme_scorer_table()


def test_site_configuration_names_every_page():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(nav):
        for item in nav:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            if isinstance(value, list):
                yield from pages(value)
            else:
                yield value

    listed = set(pages(config["nav"]))
    # folders mkdocs.yml excludes from the site (the example plugin; the generated benchmark tables,
    # which pages include) are not pages
    excluded = {line.strip().rstrip("/") for line in config.get("exclude_docs", "").splitlines() if line.strip()}
    on_disk = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if p.relative_to(DOCS).parts[0] not in excluded}
    assert on_disk <= listed, f"pages not in the site's navigation: {sorted(on_disk - listed)}"
    assert {SCORERS_PAGE, ANALYSES_PAGE} <= listed
    api_pages = [p for p in listed if p.startswith("reference/") and (DOCS / p).is_file()]
    assert len(api_pages) >= 4
    for page in api_pages:  # every ::: identifier names a public module path that imports
        for identifier in re.findall(r"^::: ([\w.]+)", (DOCS / page).read_text(encoding="utf-8"), flags=re.M):
            module = identifier
            while module:
                try:
                    __import__(module)
                    break
                except ImportError:
                    module = module.rpartition(".")[0]
            assert module, f"{page}: {identifier} does not import"

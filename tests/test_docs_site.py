"""The front page and the documentation site: the README's quick start runs as printed, and every
installed scorer and analysis is documented in the README, ``docs/cli.md`` and the API reference."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from assoc import plugins
from assoc.devtools.reference import ANALYSES_PAGE, SCORERS_PAGE, reference_pages
from assoc.testing.docs import code_blocks, run_blocks, run_commands

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
@pytest.mark.docs("README.md", "bash", section="## Quick start")
@pytest.mark.docs("README.md", "python")
def test_readme_quick_start_runs_as_printed(tmp_path, monkeypatch):
    """A new user's path: a fresh directory, the README's commands, an FMAT result with an ICC across two models.

    Each line runs as printed (split as a shell splits it, comments dropped) through the ``assoc``
    command's own entry point, in this process: the same code path as the console script, without
    paying for a new interpreter (and its torch import) per line.
    """
    commands = quick_start_commands()
    assert any(c.startswith("assoc models tiny") for c in commands)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    blocks = [b for b in code_blocks(README, "bash", section="## Quick start") if b.not_run is None]
    (output,) = run_commands(blocks, cwd=tmp_path, name="README.md")
    assert commands[-1].startswith("assoc analyze icc")
    assert "ICC(A,1)" in output.rsplit("\n\n", 1)[-1] or "ICC(A,1)" in output
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
    assert "fmat" in done.stdout


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


@pytest.mark.usefixtures("example_plugin")
def test_example_plugins_are_left_out_of_the_lists():
    example = [n for n, e in plugins.registry().scorers.items() if e.obj.example]
    assert "char_ngram" in example  # the example plugin, installed for the session (tests/conftest.py)
    assert "char_ngram" not in readme_scorer_table()


def site_config() -> dict:
    """mkdocs.yml, its ``!!python/name:`` tags (the Mermaid fence's formatter) read as their names."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: suffix)
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)  # noqa: S506 (a SafeLoader)


def test_site_configuration_names_every_page():
    config = site_config()

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


# -- the built site -------------------------------------------------------------------------------------

#: A Sphinx role left raw in a rendered docstring (``:class:`X```): the API reference would show it as text,
#: ``:class:<code>X</code>`` once Markdown has read it, or with its backtick in a code listing
#: (write ``[`X`][assoc.X]``; ``python scripts/docs_roles.py`` after ``make docs`` converts what is left).
RAW_ROLE = re.compile(r":(?:py:)?(?:class|mod|meth|func|data|attr|exc|obj|const):(?:`|<code>)")


class _Page(HTMLParser):
    """The ids a page defines and the URLs it points at (``href``/``src``), with what points at them."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.urls: list[tuple[str, str]] = []  # (tag, url)
        self.mermaid = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(found["id"])
        for key in ("href", "src"):
            if found.get(key) is not None:
                self.urls.append((tag, found[key]))
        if tag in ("pre", "div") and "mermaid" in (found.get("class") or "").split():
            self.mermaid += 1


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as ``make docs`` builds it (``--strict``: any warning fails), into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _pages(site: Path) -> dict[Path, _Page]:
    parsed = {}
    for path in sorted(site.rglob("*.html")):
        page = _Page()
        page.feed(path.read_text(encoding="utf-8"))
        parsed[path] = page
    return parsed


@pytest.mark.slow  # the site fixture builds the whole site (mkdocs, about 25 s)
def test_every_internal_link_of_the_built_site_opens_a_file(site):
    """Opened from disk (file://), every link and asset of every page is a file, and every #anchor exists there."""
    pages = _pages(site)
    broken = []
    for path, page in pages.items():
        if (
            path.name == "404.html"
        ):  # a web server's page for a missing URL (root-relative links); never opened from disk
            continue
        for tag, url in page.urls:
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or url.startswith(("mailto:", "data:", "javascript:")):
                continue  # another site, not a file of this one
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            where = f"{path.relative_to(site)}: <{tag}> {url}"
            if not target.is_file():  # a folder would show a directory listing from disk
                broken.append(f"{where} -> no file {target}")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in pages[target].ids:
                broken.append(f"{where} -> no id {parts.fragment!r}")
    assert len(pages) >= 30
    assert not broken, f"{len(broken)} broken internal link(s):\n" + "\n".join(broken[:30])


@pytest.mark.slow  # the site fixture builds the whole site (mkdocs, about 25 s)
def test_the_built_site_works_offline_from_disk(site):
    """No script or stylesheet comes from the network; search runs from file:// (the offline plugin's inlined
    index and iframe worker); the architecture page's Mermaid diagram is a diagram, with Mermaid bundled."""
    pages = _pages(site)
    for path, page in pages.items():
        remote = [
            url for tag, url in page.urls if tag in ("script", "link") and urlsplit(url).scheme in ("http", "https")
        ]
        # <link> to another site is allowed only for what is not loaded (none is expected at all)
        assert not remote, f"{path.relative_to(site)} loads {remote} from the network"
    index = pages[site / "index.html"]
    scripts = [url for tag, url in index.urls if tag == "script"]
    assert "assets/iframe-worker/shim.js" in scripts and "assets/mermaid/mermaid.min.js" in scripts
    assert (site / "search" / "search_index.js").is_file()  # the offline plugin's index, loaded without fetch()
    assert pages[site / "architecture.html"].mermaid == 1
    assert "```mermaid" not in (site / "architecture.html").read_text(encoding="utf-8")
    assert "word-break: normal" in (site / "assets" / "extra.css").read_text(encoding="utf-8")


@pytest.mark.slow  # the site fixture builds the whole site (mkdocs, about 25 s)
def test_the_api_reference_shows_no_raw_sphinx_roles_and_every_error(site):
    raw = {
        str(path.relative_to(site)): len(RAW_ROLE.findall(path.read_text(encoding="utf-8")))
        for path in site.rglob("*.html")
    }
    assert not {page: n for page, n in raw.items() if n}, "raw Sphinx roles in the built site"
    import inspect

    import assoc.errors

    api = _pages(site)[site / "reference" / "api.html"].ids
    errors = [
        f"assoc.errors.{name}"
        for name, cls in inspect.getmembers(assoc.errors, inspect.isclass)
        if issubclass(cls, Warning | Exception) and cls.__module__ == "assoc.errors"
    ]
    assert len(errors) >= 15
    missing = [name for name in [*errors, "assoc.scoring.units.UnitError"] if name not in api]
    assert not missing, f"the error list of the API reference lacks {missing}"

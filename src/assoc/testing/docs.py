"""Run the code examples of a Markdown page as a reader would paste them (for tests of docs).

``code_blocks`` pulls the fenced blocks of one language (optionally from one ``## ``
section only); ``run_blocks`` runs Python blocks in order in one namespace and fails with
the page, the example's number and the error; ``run_commands`` runs shell blocks (``assoc``
command lines, or whole scripts through ``bash``) in one directory. Fragments fenced as ```py
(not ```python) are illustrations: ``code_blocks(page, "python")`` leaves them out.

Every block that ``code_blocks`` returns knows where it comes from ([`Block`][assoc.testing.docs.Block]: the page and
the line of its fence), and the runners record each block they run ([`ran_blocks`][assoc.testing.docs.ran_blocks]). A
test claims a page's blocks with the marker ``@pytest.mark.docs(page, language, section=...)``; the pytest plugin
`assoc.devtools.docs_blocks` fails the test when it passes without having run every claimed block, and
``tests/test_docs_blocks.py`` fails when a block of the docs is neither claimed by such a marker nor tagged ``<!-- not
run: reason -->`` on the line before its fence.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import subprocess
import sys
import traceback
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: The fence languages of blocks a reader runs: each one is run by a docs test or tagged not run.
RUN_LANGUAGES = ("python", "bash", "console", "sh", "shell")
#: The tag, on the line(s) right before a block's fence, that says why the docs tests do not run it.
NOT_RUN = re.compile(r"<!--\s*not run:(.*?)-->\s*$", flags=re.S)

_RAN: set[tuple[str, int]] = set()


class Block(str):
    """One fenced block's text, with where it comes from.

    Attributes
    ----------
    page : Path
        The Markdown page (resolved).
    line : int
        The line of its opening fence (from 1).
    language : str
        The fence's language (``python``, ``bash``, ...).
    not_run : str or None
        The reason of its ``<!-- not run: reason -->`` tag; None when it has none.
    """

    page: Path
    line: int
    language: str
    not_run: str | None

    def __new__(cls, text: str, page: Path, line: int, language: str, not_run: str | None = None) -> Block:
        """A block of ``text`` at ``line`` of ``page``."""
        block = super().__new__(cls, text)
        block.page, block.line, block.language, block.not_run = page, line, language, not_run
        return block

    @property
    def key(self) -> tuple[str, int]:
        """``(page, line)``: what the runners record."""
        return (str(self.page), self.line)

    def edited(self, text: str) -> Block:
        """The same block (same page, line and tag) with the text a test runs instead.

        For a documented substitution (a smaller vocabulary, a local path for a hub model):
        the block still counts as run ([`ran_blocks`][assoc.testing.docs.ran_blocks]).
        """
        return Block(text, self.page, self.line, self.language, self.not_run)

    def where(self, root: str | Path | None = None) -> str:
        """``page:line``, the page relative to ``root`` when it is under it."""
        page = self.page
        if root is not None:
            with contextlib.suppress(ValueError):
                page = page.relative_to(Path(root).resolve())
        return f"{page}:{self.line}"


def _tag(before: str) -> str | None:
    """The reason of a ``not run`` tag ending the text ``before`` a fence (the line right before it)."""
    match = NOT_RUN.search(before.rstrip("\n").rsplit("\n\n", 1)[-1])
    return None if match is None else match.group(1).strip()


def code_blocks(page: str | Path, language: str = "python", section: str | None = None) -> list[Block]:
    """The ```<language> blocks of ``page`` in order; with ``section``, only those under that heading.

    Parameters
    ----------
    page : str or Path
        The Markdown page.
    language : str
        The fence's language, exactly (``"python"`` leaves out ```py fragments).
    section : str, optional
        A heading line as written (e.g. ``"## Loaded models stay loaded"``); the section ends at
        the next ``## `` heading.

    Returns
    -------
    list of Block
        Each block's text (a ``str``), with its page, fence line and ``not run`` tag.
    """
    path = Path(page).resolve()
    text = path.read_text(encoding="utf-8")
    start, end = 0, len(text)
    if section is not None:
        if section not in text:
            raise ValueError(f"{path.name} has no section {section!r}")
        start = text.index(section) + len(section)
        following = text.find("\n## ", start)
        end = len(text) if following < 0 else following
    blocks = []
    for match in re.finditer(rf"```{re.escape(language)}\n(.*?)```", text[start:end], flags=re.S):
        at = start + match.start()
        line = text.count("\n", 0, at) + 1
        before = text[: text.rfind("\n", 0, at) + 1]
        blocks.append(Block(match.group(1), path, line, language, _tag(before)))
    return blocks


def page_blocks(page: str | Path, languages: Iterable[str] = RUN_LANGUAGES) -> list[Block]:
    """Every block of ``page`` in one of ``languages`` (default: those a reader runs), in page order.

    Parameters
    ----------
    page : str or Path
        The Markdown page.
    languages : iterable of str
        The fence languages.

    Returns
    -------
    list of Block
        The blocks, ordered by line.
    """
    return sorted((b for language in languages for b in code_blocks(page, language)), key=lambda b: b.line)


def record_run(blocks: Iterable[str]) -> None:
    """Record ``blocks`` as run, for a runner other than `run_blocks` and `run_commands`.

    Only a runner calls it, for each block that it ran to its end without an error (the suite's
    ``run_in_fresh_interpreters`` does, for each example that exited 0). Strings that are not
    [`Block`][assoc.testing.docs.Block] are ignored.

    Parameters
    ----------
    blocks : iterable of str
        The blocks that ran.
    """
    for block in blocks:
        if isinstance(block, Block):
            _RAN.add(block.key)


def ran_blocks() -> frozenset[tuple[str, int]]:
    """The ``(page, line)`` of every [`Block`][assoc.testing.docs.Block] that a runner of this process has run."""
    return frozenset(_RAN)


def run_blocks(blocks: Sequence[str], *, name: str, namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run Python ``blocks`` in order in one namespace (warnings silenced) and return the namespace.

    A failing block raises AssertionError naming ``name``, the example's number (from 1),
    the error and the block, so a test says which example of which page broke. Each block that
    ran to its end is recorded ([`ran_blocks`][assoc.testing.docs.ran_blocks]).

    Parameters
    ----------
    blocks : sequence of str
        The blocks (from [`code_blocks`][assoc.testing.docs.code_blocks]).
    name : str
        The page's name in error messages.
    namespace : dict, optional
        The namespace to run in (a fresh one by default).

    Returns
    -------
    dict
        The namespace after the last block.
    """
    namespace = {"__name__": "docs_example"} if namespace is None else namespace
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for number, block in enumerate(blocks, 1):
            try:
                exec(compile(block, f"{name} example {number}", "exec"), namespace)
            except Exception as exc:
                raise AssertionError(f"{name}, example {number} fails: {type(exc).__name__}: {exc}\n{block}") from exc
            record_run([block])
    return namespace


def command_lines(block: str) -> list[str] | None:
    r"""The command lines of a shell block when every one is an ``assoc`` command; None otherwise.

    Comments and blank lines are dropped and lines ending in ``\\`` are joined. A block written as a
    terminal session (lines ``$ command`` followed by their output) gives its ``$`` lines. None
    means the block needs a shell (``export``, ``cat <<EOF``, pipes, another program).

    Parameters
    ----------
    block : str
        The shell block's text.

    Returns
    -------
    list of str or None
        The ``assoc ...`` lines, or None.
    """
    text = re.sub(r"\\\n\s*", " ", block)
    lines = [line.strip() for line in text.splitlines()]
    if any(line.startswith("$ ") for line in lines):
        lines = [line[2:].strip() for line in lines if line.startswith("$ ")]
    lines = [line for line in lines if line and not line.startswith("#")]
    if not lines or any(not line.startswith("assoc ") and line != "assoc" for line in lines):
        return None
    if any(char in line for line in lines for char in "|;&<>`$"):
        return None
    return lines


def run_commands(
    blocks: Sequence[str],
    *,
    cwd: str | Path,
    env: Mapping[str, str] | None = None,
    name: str = "page",
    timeout: float = 300,
) -> list[str]:
    """Run shell ``blocks`` in order in ``cwd``, as a reader would paste them, and return each block's output.

    A block of ``assoc`` command lines only ([`command_lines`][assoc.testing.docs.command_lines]) runs in this process
    through the ``assoc`` command's entry point (the console script's code path, without a new interpreter and its torch
    import per line), each line split as a shell splits it. Any other block runs as one ``bash -euo pipefail`` script,
    with this interpreter's ``bin`` directory (where the ``assoc`` console script is installed) first on ``PATH``,
    bounded by ``timeout`` seconds. A failing command raises AssertionError naming ``name``, the block's number and the
    output. Each block that ran to its end is recorded ([`ran_blocks`][assoc.testing.docs.ran_blocks]).

    Parameters
    ----------
    blocks : sequence of str
        The blocks (from [`code_blocks`][assoc.testing.docs.code_blocks]).
    cwd : str or Path
        The directory the commands run in (all blocks share it).
    env : mapping, optional
        Variables set on top of this process's environment.
    name : str
        The page's name in error messages.
    timeout : float
        Seconds a ``bash`` block may take.

    Returns
    -------
    list of str
        Each block's output (stdout, then stderr for ``bash`` blocks).
    """
    from click.testing import CliRunner

    from assoc.cli import build_cli

    extra = dict(env or {})
    outputs = []
    for number, block in enumerate(blocks, 1):
        lines = command_lines(block)
        if lines is not None:
            out = []
            with contextlib.chdir(cwd):
                for line in lines:
                    argv = shlex.split(line, comments=True)
                    result = CliRunner().invoke(build_cli(), argv[1:], prog_name="assoc", env=extra)
                    if result.exit_code != 0:
                        failed = result.exception
                        detail = (
                            ""
                            if failed is None or isinstance(failed, SystemExit)
                            else "".join(traceback.format_exception(failed))
                        )
                        raise AssertionError(
                            f"{name}, command block {number} fails (exit {result.exit_code}): {line}\n"
                            f"{result.output}{detail}"
                        )
                    out.append(result.output)
            outputs.append("".join(out))
        else:
            environ = {**os.environ, **extra}
            environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + environ.get("PATH", "")
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", block],
                cwd=cwd,
                env=environ,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
            if done.returncode != 0:
                raise AssertionError(
                    f"{name}, command block {number} fails (exit {done.returncode}):\n{block}\n"
                    f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
                )
            outputs.append(done.stdout + done.stderr)
        record_run([block])
    return outputs

"""Turn Sphinx roles in the docstrings the API reference renders into mkdocstrings cross-references.

``python scripts/docs_roles.py`` (from the repository root, after ``make docs``) rewrites, in every
docstring of an object the built site renders (``site/objects.inv``), ``:class:`~a.b.C``` and the
like into ``[`C`][id]`` when the target is rendered too (``id``: its most public name in the site),
else into ``` `C` ```. The site's test (tests/test_docs_site.py) fails on any raw role left; run
this, then ``make docs`` again and ``ruff check`` (long lines are re-wrapped; on a summary line that
links would push past the line width, the roles become code).
"""

from __future__ import annotations

import re
import sys
import textwrap
from collections import defaultdict
from pathlib import Path
from typing import Any

import griffe
import yaml
from mkdocstrings import Inventory

ROLE = re.compile(r":(?:py:)?(class|mod|meth|func|data|attr|exc|obj|const):`(~?)([^`<]*?)(?:\s*<([^`>]+)>)?`")
WIDTH = 120


def _handler_paths(root: Path) -> list[str]:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: suffix)
    config = yaml.load((root / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)  # noqa: S506
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            return [str(root / p) for p in plugin["mkdocstrings"]["handlers"]["python"]["paths"]]
    raise SystemExit("mkdocs.yml has no mkdocstrings python handler")


def main(root: Path) -> None:
    """Rewrite the roles under ``root``; print how many were turned into links and into code."""
    with open(root / "site" / "objects.inv", "rb") as handle:
        inventory = Inventory.parse_sphinx(handle)
    by_uri: dict[str, list[str]] = defaultdict(list)
    for name, item in inventory.items():
        by_uri[item.uri].append(name)
    public = {n: min(group, key=lambda x: (x.count("."), len(x))) for group in by_uri.values() for n in group}
    paths = _handler_paths(root)
    loader = griffe.GriffeLoader(search_paths=paths)
    packages = {
        p.name: loader.load(p.name) for path in paths for p in Path(path).iterdir() if (p / "__init__.py").is_file()
    }
    loader.resolve_aliases(implicit=True, external=False)

    def get(path: str) -> Any:
        top, _, rest = path.partition(".")
        try:
            obj = packages[top] if not rest else packages[top].get_member(rest)
            return obj.final_target if obj.is_alias else obj
        except Exception:  # not a name griffe knows: written as code
            return None

    canonical: dict[str, str] = {}
    for name in inventory:
        obj = get(name)
        if obj is not None and (obj.path not in canonical or public[name].count(".") < canonical[obj.path].count(".")):
            canonical[obj.path] = public[name]

    def resolve(target: str, context: Any) -> str | None:
        target = target.strip().lstrip(".").removesuffix("()")
        candidates = [target]
        while context is not None:
            candidates.append(f"{context.path}.{target}")
            context = context.parent
        for candidate in candidates:
            if candidate in public:
                return public[candidate]
            obj = get(candidate)
            if obj is not None and obj.path in canonical:
                return canonical[obj.path]
        return None

    spans: dict[Path, list[tuple[int, int, Any]]] = defaultdict(list)
    for name in inventory:
        obj = get(name)
        if obj is None:
            continue
        for item in [obj, obj.members.get("__init__") if obj.is_class else None]:
            if item is not None and item.docstring is not None and item.filepath is not None:
                spans[Path(item.filepath)].append((item.docstring.lineno, item.docstring.endlineno, item))
    counts = {"link": 0, "code": 0}
    for path, found in spans.items():
        lines = path.read_text(encoding="utf-8").split("\n")
        changed: set[int] = set()
        for start, end, obj in found:
            for i in range(start - 1, end):
                made: list[str] = []  # "link" or "code", per role of this line

                def rewrite(match: re.Match[str], obj: Any = obj, links: bool = True, made: list[str] = made) -> str:
                    _, tilde, text, explicit = match.groups()
                    target = (explicit or text).strip()
                    shown = text.strip() if explicit else (target.split(".")[-1] if tilde else target.lstrip("."))
                    ident = resolve(target, obj) if links else None
                    made.append("link" if ident else "code")
                    return f"[`{shown}`][{ident}]" if ident else f"`{shown}`"

                new = ROLE.sub(rewrite, lines[i])
                if '"""' in new and len(new) > WIDTH:  # a summary line the links would push past the width: code
                    made.clear()
                    new = ROLE.sub(lambda match, obj=obj: rewrite(match, obj, links=False), lines[i])
                for kind in made:
                    counts[kind] += 1
                if new != lines[i]:
                    lines[i] = new
                    changed.add(i)
        for i in sorted(changed, reverse=True):  # re-wrap a paragraph line the links made too long
            if len(lines[i]) <= WIDTH or '"""' in lines[i]:
                continue
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            j = i + 1
            while (
                j < len(lines)
                and '"""' not in lines[j - 1]
                and lines[j].strip()
                and not re.match(r"\s*(-{3,}$|[*\-|>`]|\d+\.\s|\"\"\")", lines[j])
                and lines[j][: len(indent)] == indent
                and not lines[j][len(indent) :].startswith(" ")
                and not (j + 1 < len(lines) and re.match(r"\s*-{3,}$", lines[j + 1]))
            ):
                j += 1
            text = " ".join(line.strip() for line in lines[i:j])
            lines[i:j] = textwrap.wrap(
                text,
                WIDTH,
                initial_indent=indent,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
        path.write_text("\n".join(lines), encoding="utf-8")
    print(f"{counts['link']} role(s) became links, {counts['code']} code", file=sys.stderr)


if __name__ == "__main__":
    main(Path.cwd())

"""Reading the text files users write (stimuli YAML/JSON): encodings, duplicate keys and parse errors.

Every problem is one line that names the file and, where there is one, the line: a file that is
not UTF-8 says which encoding it looks like; a YAML mapping with a repeated key is refused (the
last one would silently win, so a group of words would vanish); parse errors keep the
parser's reason and location but not its multi-line excerpt.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

ErrorFactory = Callable[[str], Exception]


def read_text(path: Path, *, what: str, error: ErrorFactory) -> str:
    """The text of ``path`` decoded as UTF-8 (a UTF-8 byte-order mark is dropped).

    A file in another encoding raises ``error(message)`` naming the file and the encoding it
    looks like (UTF-16/32 by its byte-order mark, binary when it holds NUL bytes, else an
    8-bit encoding such as Latin-1 or Windows-1252).
    """
    raw = path.read_bytes()
    for bom, name in (
        (codecs.BOM_UTF32_LE, "UTF-32"),
        (codecs.BOM_UTF32_BE, "UTF-32"),
        (codecs.BOM_UTF16_LE, "UTF-16"),
        (codecs.BOM_UTF16_BE, "UTF-16"),
    ):
        if raw.startswith(bom):
            raise error(f"{what} {path} is encoded as {name}; save it as UTF-8")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if b"\x00" in raw:
            raise error(f"{what} {path} is binary, not a text file (it contains NUL bytes)") from None
        line = raw[: exc.start].count(b"\n") + 1
        raise error(
            f"{what} {path} is not UTF-8 (byte 0x{raw[exc.start]:02x} on line {line}; the file looks "
            "like Latin-1 or Windows-1252): save it as UTF-8"
        ) from None


def parse_json(text: str, path: Path, *, error: ErrorFactory) -> Any:
    """``json.loads`` with an error that names the file, line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"cannot parse {path}: line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


def parse_yaml(text: str, path: Path, *, error: ErrorFactory) -> Any:
    """``yaml.safe_load`` that refuses repeated mapping keys; errors are one line with the location."""
    import yaml

    try:
        return yaml.load(text, Loader=_unique_key_loader())  # noqa: S506 - a SafeLoader subclass
    except _RepeatedKey as exc:
        raise error(
            f"cannot read {path}: line {exc.line}: key {exc.key!r} appears twice in one mapping "
            f"(first on line {exc.first_line}); the second would silently replace the first"
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        reason = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise error(f"cannot parse {path}: {where}{reason}") from None
    except yaml.YAMLError as exc:
        raise error(f"cannot parse {path}: {' '.join(str(exc).split())}") from None


class _RepeatedKey(Exception):
    def __init__(self, key: Any, line: int, first_line: int) -> None:
        super().__init__(key)
        self.key, self.line, self.first_line = key, line, first_line


@lru_cache(maxsize=1)
def _unique_key_loader() -> type:
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        """A SafeLoader that refuses a key repeated within one mapping."""

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, int] = {}
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=True)
                    try:
                        if key in seen:
                            raise _RepeatedKey(key, key_node.start_mark.line + 1, seen[key])
                        seen[key] = key_node.start_mark.line + 1
                    except TypeError:  # an unhashable key: SafeLoader reports it itself
                        continue
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader

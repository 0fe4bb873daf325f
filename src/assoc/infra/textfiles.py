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


class TypedText(str):
    """A scalar as the user typed it, with the value a parser would have made of it.

    ``yes``, ``010``, ``1.10`` and ``.nan`` in YAML, or ``1.10`` and ``NaN`` in JSON, are read by
    the parsers as ``True``, ``8``, ``1.1`` and ``nan``: a word would be rewritten. With
    ``keep_text=True`` the parsers below return such scalars as :class:`TypedText`: the text as
    written (it *is* a ``str``), with :attr:`value` holding the parser's reading for the places
    that want a number (a ``range``) or ``null`` (an empty entry).
    """

    value: Any
    line: int | None

    def __new__(cls, text: str, value: Any, line: int | None = None) -> TypedText:
        """The text ``text`` that a parser read as ``value`` (on ``line``, when known)."""
        made = super().__new__(cls, text)
        made.value, made.line = value, line
        return made


def typed_value(value: Any) -> Any:
    """``value`` with every :class:`TypedText` in it (keys included) replaced by the parser's reading."""
    if isinstance(value, TypedText):
        return value.value
    if isinstance(value, dict):
        return {typed_value(k): typed_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed_value(v) for v in value]
    return value


def as_written(value: Any) -> Any:
    """``value`` with each :class:`TypedText` as plain text, unless the parser's number says the same.

    ``[1, 5]`` stays two integers and ``0.5`` a float (their text is the number's own spelling),
    while ``010``, ``1.10``, ``1e3``, ``no``, ``null`` and ``.nan`` inside a list or mapping stay
    the text that was typed: a word or a column name is never rewritten.
    """
    if isinstance(value, TypedText):
        typed = value.value
        if isinstance(typed, (int, float)) and not isinstance(typed, bool) and str(typed) == str(value):
            return typed
        return str(value)
    if isinstance(value, dict):
        return {as_written(k): as_written(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_written(v) for v in value]
    return value


def load_yaml_text(text: str, *, keep_text: bool = False) -> Any:
    """Parse YAML ``text`` (raises :class:`yaml.YAMLError`; a repeated key is one too)."""
    import yaml

    try:
        return yaml.load(text, Loader=_unique_key_loader(keep_text))  # noqa: S506 - a SafeLoader subclass
    except _RepeatedKey as exc:
        raise yaml.YAMLError(f"key {exc.key!r} appears twice (lines {exc.first_line} and {exc.line})") from None


def parse_json(text: str, path: Path, *, error: ErrorFactory, keep_text: bool = False) -> Any:
    """``json.loads`` with an error that names the file, line and column.

    A key repeated within one object is refused with its line (``json`` would keep the last
    one silently). With ``keep_text`` numbers and the non-standard ``NaN``/``Infinity`` are
    :class:`TypedText` (see there).
    """
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen and not repeated:
                repeated.append(key)
            seen[key] = value
        return seen

    hooks: dict[str, Any] = {}
    if keep_text:
        hooks = {
            "parse_int": lambda s: TypedText(s, int(s)),
            "parse_float": lambda s: TypedText(s, float(s)),
            "parse_constant": lambda s: TypedText(s, float(s)),
        }
    try:
        data = json.loads(text, object_pairs_hook=pairs, **hooks)
    except json.JSONDecodeError as exc:
        raise error(f"cannot parse {path}: line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if repeated:
        line, first = _json_repeated_key_lines(text, repeated[0])
        raise error(
            f"cannot read {path}: line {line}: key {repeated[0]!r} appears twice in one object "
            f"(first on line {first}); the second would silently replace the first"
        )
    return data


def _json_repeated_key_lines(text: str, wanted: str) -> tuple[int, int]:
    """The lines of the second and first occurrence of ``wanted`` as a key of one JSON object.

    Runs only on text ``json`` has parsed already, so a small scanner of strings, brackets
    and colons suffices.
    """
    stack: list[dict[str, int] | None] = []  # one entry per open bracket: keys seen (None in an array)
    i, line, n = 0, 1, len(text)
    while i < n:
        char = text[i]
        if char == "\n":
            line += 1
        elif char in "{[":
            stack.append({} if char == "{" else None)
        elif char in "}]":
            stack.pop()
        elif char == '"':
            end = i + 1
            while text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            token = json.loads(text[i : end + 1])
            after = end + 1
            while after < n and text[after] in " \t\r\n":
                after += 1
            keys = stack[-1] if stack else None
            if keys is not None and after < n and text[after] == ":" and token == wanted:
                if token in keys:
                    return line, keys[token]
                keys[token] = line
            line += text.count("\n", i, end)
            i = end
        i += 1
    return 0, 0  # pragma: no cover - only called after json reported the repeat


def parse_yaml(text: str, path: Path, *, error: ErrorFactory, keep_text: bool = False) -> Any:
    """``yaml.safe_load`` that refuses repeated mapping keys; errors are one line with the location.

    With ``keep_text`` every scalar that YAML 1.1 would turn into a number, a boolean, a date
    or null (``010``, ``1.10``, ``.nan``, ``no``, ``on``, ``null``, ``2024-01-01``) is a
    :class:`TypedText`: the text as written, with the parser's reading in ``.value``.
    """
    import yaml

    try:
        return yaml.load(text, Loader=_unique_key_loader(keep_text))  # noqa: S506 - a SafeLoader subclass
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


@lru_cache(maxsize=2)
def _unique_key_loader(keep_text: bool = False) -> type:
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

    if not keep_text:
        return UniqueKeyLoader

    class TextKeepingLoader(UniqueKeyLoader):
        """Scalars YAML 1.1 would retype keep their text (:class:`TypedText`)."""

    def keep(construct: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        def construct_as_written(loader: Any, node: Any) -> Any:
            return TypedText(node.value, construct(loader, node), node.start_mark.line + 1)

        return construct_as_written

    for tag, construct in (
        ("bool", yaml.SafeLoader.construct_yaml_bool),
        ("int", yaml.SafeLoader.construct_yaml_int),
        ("float", yaml.SafeLoader.construct_yaml_float),
        ("null", yaml.SafeLoader.construct_yaml_null),
        ("timestamp", yaml.SafeLoader.construct_yaml_timestamp),
    ):
        TextKeepingLoader.add_constructor(f"tag:yaml.org,2002:{tag}", keep(construct))
    return TextKeepingLoader

r"""BibTeX entries derived from the citation texts that scorers, analyses and stimuli record.

A citation text is APA-like: ``Authors (Year). Title. Venue, volume(issue), pages. doi:...``; one text
may hold several works separated by ``; `` (an analysis citing the papers of its formulas). Each work
becomes one ``@misc`` entry with only the fields the text gives:

* ``author``: the names before ``(Year)``, ``Surname, I.`` pairs joined by ``and`` (``et al.``:
  ``and others``); a list that does not parse is kept whole, braced, as one name;
* ``year``;
* ``title``: the first sentence after the year, when more text follows it; when only a DOI, an arXiv
  id or a web address follows, the sentence is a title unless it reads as a venue (a volume(issue)
  or a page range: ``Science, 356(6334), 183-186``); a text with one sentence after the year has no
  title (nothing is guessed);
* ``doi`` (a ``doi:10.x/...`` or ``https://doi.org/10.x/...``), ``eprint`` with
  ``archiveprefix = {arXiv}`` (``arXiv:NNNN.NNNNN``), ``url`` (another web address);
* ``note``: the rest of the text as written (venue, volume, pages, remarks), without the identifiers.

The entry type is ``@misc`` throughout: the texts do not say reliably whether a venue is a journal,
a proceedings volume or a software release. Keys are the first author's surname, the year and the
first word of the title (``nangia2020crows``), made unique with a letter.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

_YEAR = re.compile(r"^(?P<authors>.+?)\s*\((?P<year>\d{4})[a-z]?\)\.?\s*(?P<rest>.*)$", re.S)
#: The start of a further work in a citation text: "; " then names and a "(Year)".
_NEXT_WORK = re.compile(r";\s+(?=[^;()]{1,300}?\(\d{4}[a-z]?\))")
_DOI = re.compile(r"(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?\b(10\.\d{4,9}/[^\s,;]+)", re.I)
_ARXIV = re.compile(r"\barXiv:\s*(\d{4}\.\d{4,5}(?:v\d+)?)", re.I)
_URL = re.compile(r"https?://[^\s,;]+")
_INITIALS = re.compile(r"^(?:[A-Z][a-z]?\.(?:\s*-?\s*)?)+$")
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Za-z0-9])")
#: A volume(issue) or a page range: the sentence is a venue, not a title.
_VENUE = re.compile(r"\d+\s*\(\d+\)|\b\d+\s*[-–]\s*\d+\b")
_STOP_WORDS = {"a", "an", "the", "on", "of", "in", "for", "and", "to", "with", "from"}


@dataclass
class BibEntry:
    """One work: its key and fields (in BibTeX's order), and the citation text it came from."""

    key: str
    fields: dict[str, str] = field(default_factory=dict)
    text: str = ""

    def bibtex(self) -> str:
        """The entry as BibTeX text."""
        lines = [f"@misc{{{self.key},"]
        for name, value in self.fields.items():
            shown = value if name in ("doi", "url", "eprint") else _escape(value)
            lines.append(f"  {name} = {{{shown}}},")
        lines.append("}")
        return "\n".join(lines)


def split_works(text: str) -> list[str]:
    """The works of one citation text (``A (2020). X; B (2021). Y`` -> two texts)."""
    return [part.strip() for part in _NEXT_WORK.split(text.strip()) if part.strip()]


def parse_authors(text: str) -> str:
    """APA names (``Nangia, N., Vania, C., & Bowman, S. R.``) as BibTeX's ``Nangia, N. and Vania, C. and ...``.

    A list that does not read as surname-initials pairs is returned braced (``{Text as written}``),
    which BibTeX keeps as one name.
    """
    text = text.strip().rstrip(",")
    others = bool(re.search(r",?\s*et al\.?$", text))
    text = re.sub(r",?\s*et al\.?$", "", text)
    tokens = [t.strip() for t in re.split(r",\s*|\s+&\s+|^&\s*", text.replace(", &", ",")) if t.strip()]
    tokens = [t[2:].strip() if t.startswith("& ") else t for t in tokens]
    names: list[str] = []
    i = 0
    while i < len(tokens):
        surname = tokens[i]
        if i + 1 < len(tokens) and _INITIALS.match(tokens[i + 1]):
            names.append(f"{surname}, {tokens[i + 1]}")
            i += 2
        else:
            return "{" + text.strip() + "}" + (" and others" if others else "")
    if not names:
        return "{" + text.strip() + "}"
    return " and ".join(names + (["others"] if others else []))


def entry_from_text(text: str) -> BibEntry:
    """One work's citation text as a `BibEntry` (key not yet unique)."""
    fields: dict[str, str] = {}
    rest = text.strip()
    doi = _DOI.search(rest)
    arxiv = _ARXIV.search(rest)
    found = _YEAR.match(rest)
    title = ""
    if found is not None:
        fields["author"] = parse_authors(found.group("authors"))
        fields["year"] = found.group("year")
        rest = found.group("rest").strip()
        sentences = _SENTENCE_END.split(rest, maxsplit=1)
        if len(sentences) == 2 and (not _only_identifiers(sentences[1]) or not _VENUE.search(sentences[0])):
            title = sentences[0].rstrip(".").strip()
            fields["title"] = title
            rest = sentences[1]
    note = rest
    if doi is not None:
        note = note.replace(doi.group(0), "")
        fields["doi"] = doi.group(1).rstrip(".,;)]")
    if arxiv is not None:
        note = note.replace(arxiv.group(0), "")
        fields["eprint"] = arxiv.group(1)
        fields["archiveprefix"] = "arXiv"
    url = _URL.search(note)
    if url is not None:
        note = note.replace(url.group(0), "")
        fields["url"] = url.group(0).rstrip(".,;)]")
    note = re.sub(r"\(\s*\)", "", note)
    note = re.sub(r"\s+", " ", note).strip().strip(",;").strip()
    note = re.sub(r"\s+([.,;])", r"\1", note).rstrip(".,; ").strip()
    if note:
        fields["note"] = note
    if not fields.get("author"):
        fields = {"note": text.strip(), **{k: v for k, v in fields.items() if k != "note"}}
    return BibEntry(_key(fields, title, text), fields, text.strip())


def _only_identifiers(text: str) -> bool:
    """Whether ``text`` holds nothing but a DOI, an arXiv id or a web address (and punctuation)."""
    for pattern in (_DOI, _ARXIV, _URL):
        text = pattern.sub("", text)
    return not re.sub(r"[\s.,;()]", "", text)


def _key(fields: dict[str, str], title: str, text: str) -> str:
    author = fields.get("author", "")
    surname = author.split(",")[0] if author and not author.startswith("{") else (author.strip("{}") or text)
    surname = _ascii(surname.split()[0] if surname.split() else "ref").lower()
    words = [w for w in re.findall(r"[A-Za-z]+", _ascii(title)) if w.lower() not in _STOP_WORDS]
    return f"{surname or 'ref'}{fields.get('year', '')}{words[0].lower() if words else ''}"


def _ascii(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9 ]", "", unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode())


def _escape(value: str) -> str:
    """BibTeX's special characters in a field (``&``, ``%``, ``_``, ``#``, ``$``) escaped; braces of names kept."""
    return re.sub(r"(?<!\\)([&%_#$])", r"\\\1", value)


def bibliography(citations: list[str]) -> list[BibEntry]:
    """Entries for every work of ``citations`` (texts), in order, each work once, keys unique."""
    from assoc.table.accessor import citation_key

    entries: list[BibEntry] = []
    seen: set[str] = set()
    keys: dict[str, int] = {}
    for text in citations:
        for work in split_works(text):
            identity = citation_key(work)
            if identity in seen:
                continue
            seen.add(identity)
            entry = entry_from_text(work)
            count = keys.get(entry.key, 0)
            keys[entry.key] = count + 1
            if count:
                entry.key += chr(ord("a") + count)
            entries.append(entry)
    return entries

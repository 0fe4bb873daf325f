"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks:``).

``on_files`` adds the options reference pages generated from the installed scorers and analyses
(:mod:`assoc.devtools.reference`), so they are rebuilt from the code at every ``make docs``.
"""

from __future__ import annotations

from typing import Any


def on_files(files: Any, config: Any) -> Any:
    """Add the generated reference pages to the site's files."""
    from mkdocs.structure.files import File

    from assoc.devtools.reference import reference_pages

    for path, text in reference_pages().items():
        files.append(File.generated(config, path, content=text))
    return files

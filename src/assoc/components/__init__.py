"""What scorers and analyses share: declared options and the component base class.

* :mod:`assoc.components.options`: :class:`~assoc.components.options.Option`, ``REQUIRED``, the
  validators (``positive``, ``non_negative``, ``confidence_level``, ``column_list``), and the
  checks of given values (``validate_options``, ``parse_cli_options``).
* :mod:`assoc.components.base`: :class:`~assoc.components.base.Component`, the base of
  :class:`~assoc.Scorer` and :class:`~assoc.Analysis` (options validated on construction,
  ``self.params``, a signature and docstring built from the options).

It sits below both ``assoc.scoring`` and ``assoc.analysis``, so neither imports the other.
"""

from __future__ import annotations

from assoc.components.base import Component, options_docstring, options_signature
from assoc.components.options import (
    CACHE_OPTIONS,
    REQUIRED,
    Option,
    column_list,
    confidence_level,
    non_negative,
    parse_cli_options,
    positive,
    validate_options,
)

__all__ = [
    "CACHE_OPTIONS",
    "REQUIRED",
    "Component",
    "Option",
    "column_list",
    "confidence_level",
    "non_negative",
    "options_docstring",
    "options_signature",
    "parse_cli_options",
    "positive",
    "validate_options",
]

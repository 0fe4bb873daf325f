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

from assoc.components.base import Component as Component
from assoc.components.base import options_docstring as options_docstring
from assoc.components.base import options_signature as options_signature
from assoc.components.options import CACHE_OPTIONS as CACHE_OPTIONS
from assoc.components.options import REQUIRED as REQUIRED
from assoc.components.options import Option as Option
from assoc.components.options import column_list as column_list
from assoc.components.options import confidence_level as confidence_level
from assoc.components.options import non_negative as non_negative
from assoc.components.options import parse_cli_options as parse_cli_options
from assoc.components.options import positive as positive
from assoc.components.options import validate_options as validate_options
from assoc.infra.importhooks import public_face as _public_face

__getattr__, __dir__ = _public_face(globals())

"""Study reports: one self-contained HTML file per study (``assoc report``, :func:`assoc.report`) and its bias card.

* :mod:`assoc.reporting.study`: [`report`][assoc.reporting.study.report], the `Report` it returns and the
  `Study` behind it (inputs read, convergence run where several methods meet);
* :mod:`assoc.reporting.headlines`: each result's headline numbers, read through its analysis's declarations
  (``Analysis.headline``, :mod:`assoc.analysis.headline`);
* :mod:`assoc.reporting.page`, :mod:`assoc.reporting.svg`, :mod:`assoc.reporting.assets`: the page, its figures
  (SVG written by hand), its style sheet and script;
* :mod:`assoc.reporting.card`: the Markdown bias card; :mod:`assoc.reporting.bibtex`: BibTeX from citation texts.
"""

from __future__ import annotations

from assoc.infra.importhooks import public_face as _public_face
from assoc.reporting.study import Report as Report
from assoc.reporting.study import Study as Study
from assoc.reporting.study import report as report

__getattr__, __dir__ = _public_face(globals())

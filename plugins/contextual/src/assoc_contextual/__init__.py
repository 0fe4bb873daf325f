"""assoc-contextual: contextual embedding association tests, SEAT and CEAT, on any encoder or decoder.

Scorers ``seat`` (May et al., 2019) and ``ceat`` (Guo & Caliskan, 2021), analyses ``seat`` and ``ceat``,
stimuli ``seat:<path>`` (May et al.'s test files, read from your copy) and ``guo2021`` (CEAT's
intersectional tests I1-I4). :func:`template_corpus` makes a seeded corpus of plain sentences for
CEAT (docs/contextual.md).
"""

from assoc_contextual.templates import template_corpus as template_corpus
from assoc_contextual.templates import write_template_corpus as write_template_corpus

__all__ = ["template_corpus", "write_template_corpus"]

"""The masked-LM engine and the ``masked`` model kind (plugins reach them through :mod:`assoc.lm`).

A sibling of :mod:`assoc.lm.causal`: both build on the shared pieces of :mod:`assoc.lm` (batching,
the model cache, the cached log-probability loop, the one loader, device and fingerprints) and
never import each other. ``engine`` (:class:`MaskedLM`), ``loading`` (:func:`cached_masked_lm`: a
model once per process, keyed by model, revision, device and dtype; :func:`release_masked_lms`),
``pll`` (pseudo-log-likelihoods), ``kind`` (the ``masked`` kind), ``words`` (word pieces), ``onnx``
and ``torch_free`` (the ONNX Runtime backends). Importing this package is cheap: torch and
transformers are imported only when a model is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.infra.importhooks import public_face as _public_face
from assoc.lm.masked.requests import MaskRequest as MaskRequest

# The public names, each declared once by its import, imported on first use (assoc.infra.importhooks.public_face).
if TYPE_CHECKING:  # pragma: no cover
    from assoc.lm.masked.engine import MaskedLM as MaskedLM
    from assoc.lm.masked.loading import cached_masked_lm as cached_masked_lm
    from assoc.lm.masked.loading import load_masked_lm as load_masked_lm
    from assoc.lm.masked.loading import loaded_masked_lms as loaded_masked_lms
    from assoc.lm.masked.loading import release_masked_lms as release_masked_lms
    from assoc.lm.masked.words import WordTokens as WordTokens
    from assoc.lm.masked.words import fill_mask_token as fill_mask_token
    from assoc.lm.masked.words import word_tokens as word_tokens

__getattr__, __dir__ = _public_face(globals())

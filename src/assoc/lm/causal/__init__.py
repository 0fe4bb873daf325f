"""The causal-LM engine and the ``causal`` model kind: log probabilities under GPT-style models.

Plugins reach it through :mod:`assoc.lm` (``from assoc.lm import CausalRequest, cached_causal_lm``),
never through this package, which may move. Importing this package is cheap: torch and
transformers are imported only when a model is loaded. A sibling of the masked-LM engine
(:mod:`assoc.lm.masked`), never importing it: both stand on the shared pieces of :mod:`assoc.lm`
(the batch planner :mod:`assoc.lm.batching`, the result-cache loop :mod:`assoc.lm.compute`, the
fingerprints :mod:`assoc.lm.identity`, the one loader :mod:`assoc.lm.loading` and the per-process
model cache :mod:`assoc.lm.model_cache`); :mod:`assoc.lm.causal.text` turns sentences into requests
under an explicit BOS policy, and :mod:`assoc.lm.causal.kind` is the ``causal`` kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.infra.importhooks import public_face as _public_face
from assoc.lm.causal.requests import CausalRequest as CausalRequest

# The public names, each declared once by its import, imported on first use (assoc.infra.importhooks.public_face).
if TYPE_CHECKING:  # pragma: no cover
    from assoc.lm.causal.engine import CausalLM as CausalLM
    from assoc.lm.causal.loading import cached_causal_lm as cached_causal_lm
    from assoc.lm.causal.loading import load_causal_lm as load_causal_lm
    from assoc.lm.causal.loading import release_causal_lms as release_causal_lms
    from assoc.lm.causal.text import BOS_POLICIES as BOS_POLICIES
    from assoc.lm.causal.text import SentencePlan as SentencePlan
    from assoc.lm.causal.text import plan_sentence as plan_sentence
    from assoc.lm.causal.text import special_tokens as special_tokens

__getattr__, __dir__ = _public_face(globals())

"""The Bias Benchmark for QA (Parrish et al., 2022) on every model kind that serves ``choice``.

* :mod:`.items`: the ``bbq`` stimuli (the authors' JSONL files of the eleven categories as
  :class:`assoc.ChoiceItem` items, every field kept; ``target_loc`` and ``label_type`` from their metadata
  file or derived as their ``BBQ_results_metadata.R`` derives them: :mod:`.metadata`);
* :mod:`.prompts`, :mod:`.matching`: the prompt, the option order and letters, and reading a
  reply as an option (assoc's rules or the authors' R rules);
* :mod:`.scorer`: the ``bbq`` scorer (chat models, causal LMs, masked LMs) and its deprecated names
  ``chat_bbq`` and ``clm_bbq``; :mod:`.analysis`: the ``bbq`` analysis (accuracy, s_DIS, s_AMB as the
  authors' ``BBQ_calculate_bias_score.R`` computes them, or lm-eval's way, with bootstrap intervals);
* :mod:`.compare`: the bias scores per stereotyped group as association-table rows that
  ``convergence`` reads (BBQ beside the word-association test, FMAT, clm);
* :mod:`.testing`: answers to BBQ prompts for the local test server (a stand-in model with
  planted stereotypes among them).

See ``docs/bbq.md``.
"""

from __future__ import annotations

from .items import load_bbq as load_bbq
from .items import load_directory as load_directory
from .scorer import replay_rows as replay_rows

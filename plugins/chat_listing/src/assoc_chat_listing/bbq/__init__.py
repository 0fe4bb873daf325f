"""The Bias Benchmark for QA (Parrish et al., 2022) for chat models and local causal LMs.

* :mod:`.items`: the ``bbq`` stimuli (the authors' JSONL files, every field kept; ``target_loc``
  from their metadata file or derived);
* :mod:`.prompts`, :mod:`.matching`: the prompt, the option order and letters, and reading a
  reply as an option (assoc's rules or the authors' R rules);
* :mod:`.scorer`: the ``chat_bbq`` scorer; :mod:`.analysis`: the ``bbq`` analysis (accuracy,
  s_DIS, s_AMB as the authors' ``BBQ_calculate_bias_score.R`` computes them, or lm-eval's way,
  with bootstrap intervals);
* :mod:`.compare`: the bias scores per stereotyped group as association-table rows that
  ``convergence`` reads (BBQ beside the word-association test, FMAT, clm);
* :mod:`.testing`: answers to BBQ prompts for the local test server (a stand-in model with
  planted stereotypes among them).

See ``docs/bbq.md``.
"""

"""assoc-clm: causal-LM sentence and option log probabilities (the ``clm`` scorer)."""

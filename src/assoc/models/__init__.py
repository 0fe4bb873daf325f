"""How models are named, below every layer that runs them: ``[LABEL=]SPEC`` and models held in memory.

* :mod:`assoc.models.names`: the one spelling of a model, used by every scorer, the command line and
  Python: ``[LABEL=]SPEC``, where SPEC is a local folder, a Hub id, ``chat:<model>`` or
  ``server:<model>`` (a prefix registered by a model kind), and LABEL the short name tables, plots and
  reports show.
* :mod:`assoc.models.memory`: models given as objects already in memory (a ``(model, tokenizer)`` pair,
  a sentence-transformers model, gensim ``KeyedVectors``), registered under the name tables record, and
  the SHA-256 fingerprint of their weights.

Nothing here imports a model library; the kinds that load models are in :mod:`assoc.lm`.
"""

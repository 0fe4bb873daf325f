"""Winogender schemas (Rudinger et al., 2018): the items (``items``) and the ``winogender`` analyses (``analysis``).

The scorer that sends each item's requests to a model comes with the language-model layer's benchmark work; the
table it writes is :mod:`assoc_bias_benchmarks.choice_table`'s.
"""

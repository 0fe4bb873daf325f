"""The LLM Word Association Test (Bai, Wang, Sucholutsky & Griffiths, 2025) for chat models.

* :mod:`.scorer`: the ``chat_word_association`` scorer (prompts, randomisation, parsed pairings);
* :mod:`.analysis`: the ``word_association`` analysis (D per reply, means, t-tests; two modes);
* :mod:`.parsing`: the project's reply parser and the authors' rules;
* :mod:`.bundled`: the ``bai2025`` and ``bai2025_synonym`` stimuli, the authors' committed label
  file and their 4,200 recorded GPT-4o replies;
* :mod:`.testing`: answers to word-association prompts for the local test server.

See ``docs/word-association.md`` and ``docs/replication/bai2025.md``.
"""

"""The chat model kind (``chat:<model>``): :class:`~.model.ChatModel` serves ``generate`` and ``choice`` requests.

* :mod:`.options`: the kind's options (``provider``, the endpoint's, sampling, the local runtime's, the
  response cache);
* :mod:`.runtime`: the runtimes (``openai``: any OpenAI-compatible endpoint; ``transformers``: a local
  chat model, :mod:`.local`) and the one way requests get their replies (stored, else sent);
* :mod:`.replies`: stored responses as replies, and what a run sent (for its report);
* :mod:`.choice`: a reply read as one of a question's options (assoc's rules, the BBQ authors' rules);
* :mod:`.patterns`: the refusal patterns every chat reply reader shares.

Plugins import these names from :mod:`assoc.lm`.
"""

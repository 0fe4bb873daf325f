"""The ``server`` model kind: causal LMs behind an inference server, scored through ``/completions`` log-probabilities.

* :mod:`.protocol`: the completions request with the prompt's log-probabilities (token ids sent;
  vLLM's ``prompt_logprobs`` or the echoed prompt), its route on the remote engine, and how a reply is
  read and refused when the server's tokens are not the ones sent;
* :mod:`.engine`: :class:`~.engine.ServedLM`, the causal engine's shape over the server (one prompt per
  sentence serves every measure of it; prompts grouped per request; every answer stored on arrival);
* :mod:`.kind`: :class:`~.kind.ServerLanguageModel`, the kind (``server:<model>``): what the server
  serves, the tokenizer and its check, provenance;
* :mod:`.options`: :data:`~.options.SERVER_OPTIONS`.

Plugins import these names from :mod:`assoc.lm`. Nothing here imports ``openai`` or transformers until a
model opens.
"""

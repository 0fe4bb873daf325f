"""The engine of requests to a model behind an HTTP endpoint, shared by every remote model kind.

* :mod:`.urls`: endpoints and their credentials (what a cache key, a report and an error may show;
  keys read from the environment only; the checks before any request);
* :mod:`.engine`: :func:`~.engine.run_requests`, bounded concurrency, rate limits, retries with
  backoff, timeouts, redaction; a :class:`~.engine.Route` says what is sent where and how an answer
  is read;
* :mod:`.store`: the response store (a journal written on arrival, checksummed packs; a resumed run
  sends nothing it has);
* :mod:`.chat_completions`: the chat-completions protocol (:class:`~.chat_completions.ChatRequest`,
  its route and readers); a completions protocol with echoed log-probabilities fits beside it;
* :mod:`.options`: :data:`~.options.ENDPOINT_OPTIONS`.

Nothing here imports ``openai`` (or its HTTP client) until requests are sent. Plugins import these
names from :mod:`assoc.lm`.
"""

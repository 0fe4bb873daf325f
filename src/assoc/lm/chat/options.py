"""The options of the chat model kind: which runtime answers (``provider``), how it is reached, how replies are made.

:data:`PROVIDER_OPTION` chooses the runtime: ``openai`` (the OpenAI API or any OpenAI-compatible
server, reached with :data:`~assoc.lm.remote.options.ENDPOINT_OPTIONS`) or ``transformers`` (a
local Hugging Face chat model, with :data:`LOCAL_OPTIONS`). It was the chat scorers' ``backend``
option, renamed (``backend`` now means torch/ONNX only); the old spelling still works with a
deprecation warning. :data:`GENERATION_OPTIONS` are the sampling parameters sent with every request
the kind makes itself (a ``choice`` request; a ``generate`` request carries its own);
:data:`RESPONSE_CACHE_OPTIONS` say where raw responses are stored.
"""

from __future__ import annotations

from assoc.components.options import Option, non_negative, positive
from assoc.lm.chat.patterns import check_patterns
from assoc.lm.chat.top_logprobs import CHOICE_MEASURES
from assoc.lm.identity import DTYPES
from assoc.lm.remote.options import ENDPOINT_OPTIONS

#: The runtimes of the chat kind.
PROVIDERS = ("openai", "transformers")

PROVIDER_OPTION = Option(
    "provider",
    str,
    "openai",
    "openai: the OpenAI API or any compatible server; transformers: a local "
    "Hugging Face chat model (the model is a Hub id or directory)",
    choices=PROVIDERS,
    renamed_from=("backend",),
)

GENERATION_OPTIONS: tuple[Option, ...] = (
    Option("temperature", float, 0.0, "sampling temperature (the paper: 0)", check=non_negative),
    Option("seed", int, None, "the API's seed parameter (sample i sends seed + i); none is sent when empty"),
    Option("max_tokens", int, None, "cap on the reply's tokens (none sent when empty)", check=positive),
)

#: How the kind reads a reply as an option (``choice`` requests): its refusal patterns, or the top
#: log-probabilities of the reply's first token (:mod:`assoc.lm.chat.top_logprobs`).
CHOICE_OPTIONS: tuple[Option, ...] = (
    Option(
        "refusal_patterns",
        list,
        None,
        "regular expressions that mark a reply naming no option as a refusal (default: assoc.lm.REFUSAL_PATTERNS)",
        check=check_patterns,
    ),
    Option(
        "choice_measure",
        str,
        "reply",
        "how a chat model's choice is read: 'reply' (the reply as written) or 'top_logprobs' (the option whose "
        "label is the most likely first reply token, from the endpoint's top log-probabilities; refused where "
        "the endpoint gives none, never read from the reply instead); see docs/servers.md",
        choices=CHOICE_MEASURES,
    ),
    Option(
        "top_logprobs",
        int,
        20,
        "choice_measure=top_logprobs: how many most likely first tokens the endpoint returns (OpenAI: at most 20)",
        check=positive,
    ),
)

LOCAL_OPTIONS: tuple[Option, ...] = (
    Option("batch_size", int, 8, "transformers provider: requests generated together", check=positive),
    Option("device", str, "auto", "transformers provider: cpu, cuda, cuda:N, mps or auto"),
    Option(
        "dtype",
        str,
        "float32",
        "transformers provider: the weights' precision (a dtype other than float32 is part of the cache key)",
        choices=DTYPES,
    ),
    Option(
        "revision", str, None, "transformers provider: Hugging Face revision (branch, tag or commit) of a Hub model"
    ),
)

RESPONSE_CACHE_OPTIONS: tuple[Option, ...] = (
    Option("cache", bool, True, "store raw responses on disk and reuse them (resume; offline re-runs)"),
    Option("cache_dir", str, None, "cache root (default: $ASSOC_CACHE_DIR or the user cache directory)"),
)

#: Every option of the chat kind (what a scorer that accepts chat models declares).
CHAT_OPTIONS: tuple[Option, ...] = (
    PROVIDER_OPTION,
    *ENDPOINT_OPTIONS,
    *GENERATION_OPTIONS,
    *CHOICE_OPTIONS,
    *LOCAL_OPTIONS,
    *RESPONSE_CACHE_OPTIONS,
)

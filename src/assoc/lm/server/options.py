"""The options of the ``server`` kind: the endpoint (:data:`~assoc.lm.remote.options.ENDPOINT_OPTIONS`) and its own.

Every scorer that accepts the kind declares them (:func:`assoc.lm.options_for`). The BOS policy is the
causal kind's ``bos`` option, so a served model and the same model in-process score the same tokens.
"""

from __future__ import annotations

from assoc.components.options import Option, positive
from assoc.lm.causal.kind import BOS_OPTION
from assoc.lm.remote.options import ENDPOINT_OPTIONS

#: How the kind asks for the prompt's log-probabilities: ``auto`` picks vLLM's ``prompt_logprobs`` when
#: ``/v1/models`` says the server is vLLM, else the echoed prompt.
LOGPROBS_FORMS = ("auto", "prompt_logprobs", "echo")

SERVER_OPTIONS: tuple[Option, ...] = (
    *ENDPOINT_OPTIONS,
    Option(
        "tokenizer",
        str,
        None,
        "server models: the served model's tokenizer (a folder or Hub id), used to choose the token ids sent; "
        "default: the folder the server reports it was started on (/v1/models 'root'), else the model's name; "
        "checked against the server's /tokenize where it has one",
    ),
    Option(
        "logprobs_form",
        str,
        "auto",
        "server models: how the prompt's log-probabilities are asked for: 'prompt_logprobs' (vLLM), 'echo' "
        "(echo + logprobs, any server that echoes) or 'auto' (prompt_logprobs on vLLM, else echo)",
        choices=LOGPROBS_FORMS,
    ),
    Option(
        "echo_max_tokens",
        int,
        0,
        "server models, logprobs_form echo: max_tokens sent with the echoed prompt: 0 (nothing generated; a server "
        "that refuses 0 with a 400 naming max_tokens is asked again with 1), or 1 (the generated token is ignored)",
        choices=(0, 1),
    ),
    Option(
        "prompts_per_request",
        int,
        64,
        "server models: prompts sent in one /completions request (the server answers a list with one choice "
        "per prompt); 1 for a server that takes one prompt at a time",
        check=positive,
    ),
    Option(
        "max_model_len",
        int,
        None,
        "server models: the longest sequence the server takes (default: what /v1/models reports)",
        check=positive,
    ),
    BOS_OPTION,
)

"""The options of every model kind reached over HTTP (:data:`ENDPOINT_OPTIONS`), and the engine settings they make.

A scorer that accepts a remote kind declares these options (the chat scorers do); the kind reads
them when it opens a model. Keys are never an option value: ``api_key_env`` names the environment
variable that holds one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assoc.components.options import Option, non_negative, positive
from assoc.lm.remote.engine import EngineSettings
from assoc.lm.remote.urls import check_base_url

ENDPOINT_OPTIONS: tuple[Option, ...] = (
    Option(
        "base_url",
        str,
        None,
        "OpenAI-compatible endpoint (default $OPENAI_BASE_URL; then, for chat models, the OpenAI API; a server: "
        "model needs one)",
        check=check_base_url,
    ),
    Option(
        "api_key_env",
        str,
        "OPENAI_API_KEY",
        "environment variable holding the API key (never an option value: keys are read from the environment only)",
    ),
    Option("concurrency", int, 16, "most requests in flight at once", check=positive),
    Option(
        "timeout",
        float,
        60.0,
        "seconds to wait for a reply once the request is sent (the read timeout; a chat completion is "
        "generated before its first byte)",
        check=positive,
    ),
    Option("connect_timeout", float, 10.0, "seconds to wait for a connection to the server", check=positive),
    Option(
        "max_retries",
        int,
        6,
        "retries of a request after 429, 408, 409, 5xx or dropped connections (and the most attempts of any "
        "request, less one)",
        check=non_negative,
    ),
    Option(
        "timeout_retries",
        int,
        1,
        "retries of a request that timed out; one more timeout stops the run (a server that never answers)",
        check=non_negative,
    ),
    Option(
        "reply_retries",
        int,
        2,
        "retries of a request whose 200 reply is not an answer (empty, an HTML page, a JSON error); "
        "then that request is recorded as failed",
        check=non_negative,
    ),
    Option(
        "backoff_base",
        float,
        1.0,
        "first backoff in seconds (doubles per retry, with jitter) when the server sends no Retry-After",
        check=positive,
    ),
    Option("backoff_max", float, 60.0, "longest backoff in seconds", check=positive),
    Option("requests_per_minute", float, None, "rate limit on requests (none when empty)", check=positive),
    Option("tokens_per_minute", float, None, "rate limit on estimated tokens (none when empty)", check=positive),
    Option("offline", bool, False, "use stored responses only; a request that is not stored is an error"),
)

#: Names of :data:`ENDPOINT_OPTIONS`.
ENDPOINT_OPTION_NAMES = tuple(option.name for option in ENDPOINT_OPTIONS)
_DEFAULTS = {option.name: option.default for option in ENDPOINT_OPTIONS}


def endpoint_settings(options: Mapping[str, Any], base_url: str, api_key: str) -> EngineSettings:
    """The engine's settings from option values (missing ones take their defaults) for ``base_url`` and ``api_key``."""

    def value(name: str) -> Any:
        return options.get(name, _DEFAULTS[name])

    return EngineSettings(
        base_url=base_url,
        api_key=api_key,
        concurrency=value("concurrency"),
        timeout=value("timeout"),
        connect_timeout=value("connect_timeout"),
        max_retries=value("max_retries"),
        timeout_retries=value("timeout_retries"),
        reply_retries=value("reply_retries"),
        requests_per_minute=value("requests_per_minute"),
        tokens_per_minute=value("tokens_per_minute"),
        backoff_base=value("backoff_base"),
        backoff_max=value("backoff_max"),
    )

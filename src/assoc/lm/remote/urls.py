"""Endpoints and their credentials: what is sent, what may be stored or printed, and the checks before a request.

A base URL may hold credentials (``https://user:password@host/v1?api-key=...``). They are sent
(user info as HTTP basic auth, the query with every request: :func:`client_url`) and never kept:
:func:`public_endpoint` is the URL a cache key holds, :func:`safe_url` the URL a report or an error
shows, and :func:`redact` scrubs free text of the key, of the URL's credentials and of anything
shaped like a key. API keys are read from the environment only (:func:`read_api_key`).
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from assoc.errors import ModelError, OptionError

#: The OpenAI API: the base URL when neither the option nor ``$OPENAI_BASE_URL`` names one.
DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Hosts of local servers (vLLM, llama.cpp, Ollama): they need no API key.
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
#: Query parameters whose name contains one of these words hold credentials (``api-key=``, ``key=``,
#: ``token=``, ``access_token=``, ``sig=``, ...): never stored or printed.
SECRET_QUERY = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session", re.IGNORECASE)
_KEY_LIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-*]{6,}|Bearer\s+\S+|Basic\s+[A-Za-z0-9+/=]{8,})")


def _host(parts: Any) -> str:
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port is not None else host


def public_endpoint(base_url: str) -> str:
    """``base_url`` without user info, query or fragment (these may hold credentials); the cache key's endpoint."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, _host(parts), parts.path.rstrip("/"), "", ""))


def safe_url(url: str) -> str:
    """``url`` as it may be stored or printed: without user info, key-like query parameters or fragment.

    Other query parameters (``api-version=2024-06-01``) are kept: they say what was called.
    """
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not SECRET_QUERY.search(k)]
    return urlunsplit((parts.scheme, _host(parts), parts.path, urlencode(query), ""))


def url_secrets(url: str) -> list[str]:
    """The credentials written into ``url``, raw and decoded, longest first, to scrub from free text.

    The password and ``user:password`` as written (or the user name alone when there is no password:
    ``https://TOKEN@host`` puts a token there), and the values of key-like query parameters.
    """
    parts = urlsplit(url)
    found = [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if SECRET_QUERY.search(k)]
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        found += [userinfo, parts.password or ""] if parts.password is not None else [userinfo]
    out: list[str] = []
    for value in found:
        for form in (value, unquote(value)):
            if len(form) >= 3 and form not in out:  # shorter values are too common to scrub from text
                out.append(form)
    return sorted(out, key=len, reverse=True)


def redact(text: str, secrets: str | Sequence[str] | None) -> str:
    """``text`` with each secret, and anything shaped like an API key or auth header, replaced by ``***``."""
    if isinstance(secrets, str):
        secrets = [secrets]
    for secret in sorted((s for s in secrets or () if s), key=len, reverse=True):
        text = text.replace(secret, "***")
    return _KEY_LIKE.sub("***", text)


def client_url(base_url: str) -> tuple[str, dict[str, str], dict[str, str]]:
    """The base URL split for the client: URL without user info or query, headers, query parameters.

    User info becomes HTTP basic auth, as an HTTP client does with such a URL (it replaces the
    bearer key, which such servers do not read); the query is sent with every request (the
    client would otherwise glue the request path after it).
    """
    import base64

    parts = urlsplit(base_url)
    host = parts.netloc.rpartition("@")[2]
    url = urlunsplit((parts.scheme, host, parts.path, "", ""))
    headers: dict[str, str] = {}
    if "@" in parts.netloc:
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        headers["Authorization"] = f"Basic {token}"
    return url, headers, dict(parse_qsl(parts.query, keep_blank_values=True))


def check_base_url(value: str) -> str:
    """An http(s) URL with a host and a valid port (the ``base_url`` option's check); ``ValueError`` otherwise."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be an http(s) URL such as http://127.0.0.1:8000/v1, got {safe_url(value)!r}")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ValueError(f"has a bad port: {safe_url(value)!r}") from None
    return value


def resolve_base_url(option: str | None) -> str:
    """The base URL requests go to: the option, else ``$OPENAI_BASE_URL``, else the OpenAI API (credentials kept)."""
    url = option or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    try:
        return check_base_url(url)
    except ValueError as exc:
        raise OptionError(f"OPENAI_BASE_URL {exc}") from None


def read_api_key(base_url: str, variable: str) -> str:
    """The API key in the environment variable ``variable``; one clear error for a remote endpoint without one.

    Local servers (:data:`LOCAL_HOSTS`) accept any key: ``"EMPTY"`` is sent when none is set.
    """
    key = os.environ.get(variable, "").strip()
    if key:
        return key
    if (urlsplit(base_url).hostname or "") in LOCAL_HOSTS:
        return "EMPTY"  # local servers (vLLM, llama.cpp, Ollama) accept any key
    raise OptionError(
        f"no API key for {public_endpoint(base_url)}: set the environment variable {variable} "
        f"(keys are read from the environment only; api_key_env names another variable)"
    )


def check_reachable(base_url: str, connect_timeout: float, error: type[ModelError] = ModelError) -> None:
    """Open (and close) a TCP connection to the endpoint: an unreachable base_url fails before any request."""
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=connect_timeout):
            pass
    except OSError as exc:
        raise error(
            f"cannot reach base_url {public_endpoint(base_url)} ({exc.strerror or exc}); is the "
            f"server running? (set base_url=... or OPENAI_BASE_URL)"
        ) from None

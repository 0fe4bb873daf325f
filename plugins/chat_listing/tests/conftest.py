"""Fixtures of the chat_listing tests: a local OpenAI-compatible server, an isolated environment."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assoc.testing.openai_server import ChatServer


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch) -> None:
    """No key or base URL from the developer's environment; the cache in a temporary directory."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as running:
        yield running

"""The test server's built-in replies name one option for every BBQ prompt template (issue 47, item 4)."""

from __future__ import annotations

import warnings

import pytest

import assoc
from assoc.testing.openai_server import FAST_RETRIES, ChatServer


@pytest.fixture(scope="module")
def server():
    with ChatServer() as running:
        yield running


@pytest.mark.parametrize("template", ["assoc", "options_text", "lmeval"])
def test_every_bbq_template_gets_a_reply_read_as_one_option(server, template):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = assoc.score(
            "bbq", "bbq", "chat:test-model", base_url=server.url, progress=False, prompt=template, limit=2,
            cache=False, **FAST_RETRIES,
        )  # fmt: skip
    # two examples of each of the eleven categories, each reply read as one of its three options
    assert len(table) == 22
    assert table.attrs["assoc"]["run"]["replies"] == {"ok": 22}
    assert set(table["chosen"]) <= {0, 1, 2}

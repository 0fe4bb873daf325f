"""Entry point of the ``chat_listing`` plugin.

Registers the scorer and the ``assoc chat`` commands. Imports nothing heavy (openai and
transformers are loaded only when requests are sent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import hookimpl

if TYPE_CHECKING:
    import click

    from assoc.plugins.hookspecs import RegisterScorer


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register the ``chat_listing`` scorer."""
    from .scorer import ChatListingScorer

    register(ChatListingScorer)


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Add ``assoc chat ...`` (export raw responses, run the test server)."""
    from .cli import chat_group

    cli.add_command(chat_group)

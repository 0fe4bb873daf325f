"""Entry point of the ``chat_listing`` plugin.

Registers the scorer and the ``assoc chat`` commands. Imports nothing heavy (openai and
transformers are loaded only when requests are sent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import hookimpl

if TYPE_CHECKING:
    import click

    from assoc import RegisterAnalysis, RegisterScorer, RegisterStimuli


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register the ``chat_listing`` and ``chat_word_association`` scorers."""
    from .scorer import ChatListingScorer

    register(ChatListingScorer)
    from .word_association.scorer import ChatWordAssociationScorer

    register(ChatWordAssociationScorer)


@hookimpl
def register_analyses(register: RegisterAnalysis) -> None:
    """Register the ``word_association`` (LLM Word Association Test) analysis."""
    from .word_association.analyses import WordAssociationAnalysis

    register(WordAssociationAnalysis)


@hookimpl
def register_stimuli(register: RegisterStimuli) -> None:
    """Register the Bai et al. (2025) stimuli (``bai2025``, ``bai2025_synonym``)."""
    from .word_association.bundled import load_bai2025, load_bai2025_synonym

    register("bai2025", load_bai2025, "Bai et al. (2025) LLM Word Association Test: 21 stereotypes")
    register("bai2025_synonym", load_bai2025_synonym, "Bai et al. (2025): the synonym variant's words and labels")


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Add ``assoc chat ...`` (export raw responses, run the test server)."""
    from .cli import chat_group

    cli.add_command(chat_group)

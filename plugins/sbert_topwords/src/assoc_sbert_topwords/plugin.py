"""Entry point of the ``sbert_topwords`` plugin.

Registers the scorers ``sbert_topwords``, ``sbert_cosine`` and ``sbert_valence``, the model kind
``sentence`` (sentence-transformers models, for every scorer that sends ``embedding`` requests), the
bundled stimuli ``nicolas2024`` and the ``assoc sbert`` commands. Imports nothing heavy (sentence-transformers is
loaded only when a model is).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import hookimpl

if TYPE_CHECKING:
    import click

    from assoc import RegisterModelKind, RegisterScorer, RegisterStimuli


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register the ``sbert_topwords``, ``sbert_cosine`` and ``sbert_valence`` scorers."""
    from .scorer import SBERTCosineScorer, SBERTTopWordsScorer, SBERTValenceScorer

    register(SBERTTopWordsScorer)
    register(SBERTCosineScorer)
    register(SBERTValenceScorer)


@hookimpl
def register_model_kinds(register: RegisterModelKind) -> None:
    """Register the ``sentence`` model kind (:class:`~assoc_sbert_topwords.kind.SentenceTransformerModel`)."""
    from .kind import SentenceTransformerModel

    register(SentenceTransformerModel)


@hookimpl
def register_stimuli(register: RegisterStimuli) -> None:
    """Register the ``nicolas2024`` stimuli."""
    from .bundled import load_nicolas2024

    register(
        "nicolas2024",
        load_nicolas2024,
        "Nicolas & Caliskan (2024): the social-category terms the paper names (the full 1,366-term list is "
        "only in its Supplement)",
    )


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Add the ``assoc sbert`` commands."""
    from .cli import sbert_group

    cli.add_command(sbert_group)

"""Hook implementations of assoc-fmat. Imports nothing heavy (``assoc --help`` loads it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import hookimpl

if TYPE_CHECKING:
    import click

    from assoc import RegisterAnalysis, RegisterScorer, RegisterStimuli


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register the ``fmat`` scorer."""
    from .scorer import FMATScorer

    register(FMATScorer)


@hookimpl
def register_analyses(register: RegisterAnalysis) -> None:
    """Register the ``lpr`` analysis."""
    from .analyses import LPRAnalysis

    register(LPRAnalysis)


@hookimpl
def register_stimuli(register: RegisterStimuli) -> None:
    """Register the bundled Bao (2024) studies."""
    from .bundled import load_bao2024

    register("bao2024", load_bao2024, "Bao (2024) FMAT studies 1A-4D (designs '2A-Q1', '3A', '4C', ...)")


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Add the ``assoc fmat`` commands."""
    from .cli import fmat_group

    cli.add_command(fmat_group)

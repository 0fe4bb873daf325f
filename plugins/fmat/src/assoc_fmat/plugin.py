"""Hook implementations of assoc-fmat. Imports nothing heavy (``assoc --help`` loads it)."""

from __future__ import annotations

from assoc import hookimpl


@hookimpl
def register_scorers(register):
    from .scorer import FMATScorer

    register(FMATScorer)


@hookimpl
def register_analyses(register):
    from .lpr import LPRAnalysis

    register(LPRAnalysis)


@hookimpl
def register_stimuli(register):
    from .studies import load_bao2024

    register("bao2024", load_bao2024, "Bao (2024) FMAT studies 1A-4D (designs '2A-Q1', '3A', '4C', ...)")


@hookimpl
def register_commands(cli):
    from .cli import fmat_group

    cli.add_command(fmat_group)

"""Entry point of the ``weat`` plugin.

Registers the scorer, the analyses, the bundled stimuli and the ``assoc weat``
commands. Imports nothing heavy (gensim is loaded only when embeddings are).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import hookimpl

if TYPE_CHECKING:
    import click

    from assoc import RegisterAnalysis, RegisterScorer, RegisterStimuli


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register the ``weat`` scorer."""
    from .scorer import WEATScorer

    register(WEATScorer)


@hookimpl
def register_analyses(register: RegisterAnalysis) -> None:
    """Register ``weat``, ``wefat``, ``valnorm`` and the WEFE/sweater metrics (``mac`` ... ``nas``)."""
    from .analyses import ValNormAnalysis, WEATAnalysis, WEFATAnalysis
    from .metric_analyses import (
        ECTAnalysis,
        MACAnalysis,
        NASAnalysis,
        RIPAAnalysis,
        RNDAnalysis,
        RNSBAnalysis,
        SemAxisAnalysis,
    )

    for analysis in (
        WEATAnalysis,
        WEFATAnalysis,
        ValNormAnalysis,
        MACAnalysis,
        RNDAnalysis,
        ECTAnalysis,
        SemAxisAnalysis,
        RIPAAnalysis,
        RNSBAnalysis,
        NASAnalysis,
    ):
        register(analysis)


@hookimpl
def register_stimuli(register: RegisterStimuli) -> None:
    """Register the bundled Caliskan et al. (2017) and ValNorm stimuli."""
    from .bundled import load_caliskan, load_valnorm

    register("caliskan", load_caliskan, "Caliskan, Bryson & Narayanan (2017): the 10 WEAT tests, weat1..weat10")
    register(
        "valnorm",
        load_valnorm,
        "Toney & Caliskan (2021) ValNorm lists, 7 languages: <lang>-flowers-insects, <lang>-instruments-weapons",
    )


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Add the ``assoc weat`` commands."""
    from .cli import weat_group

    cli.add_command(weat_group)

"""Entry point of the ``weat`` plugin: registers the scorer, the analyses, the bundled
stimuli and the ``assoc weat`` commands. Imports nothing heavy (gensim is loaded
only when embeddings are)."""

from __future__ import annotations

from assoc import hookimpl


@hookimpl
def register_scorers(register):
    from .scorer import WEATScorer

    register(WEATScorer)


@hookimpl
def register_analyses(register):
    from .analyses import ValNormAnalysis, WEATAnalysis, WEFATAnalysis

    register(WEATAnalysis)
    register(WEFATAnalysis)
    register(ValNormAnalysis)


@hookimpl
def register_stimuli(register):
    from .bundled import load_caliskan, load_valnorm

    register("caliskan", load_caliskan, "Caliskan, Bryson & Narayanan (2017): the 10 WEAT tests, weat1..weat10")
    register("valnorm", load_valnorm,
             "Toney & Caliskan (2021) ValNorm lists, 7 languages: <lang>-flowers-insects, <lang>-instruments-weapons")


@hookimpl
def register_commands(cli):
    from .cli import weat_group

    cli.add_command(weat_group)

"""DiscrimEval (Tamkin et al., 2023), explicit set: prompts, lm-eval's requests, per-prompt values, the scores.

:mod:`.items` reads the prompts and holds what a scorer sends (lm-eval's context and continuations, the chat
prompt) and reads back (:func:`.items.logit_yes`, :func:`.items.read_reply`); :mod:`.analysis` is the
``discrim_eval`` analysis (with the table shape it reads).
"""

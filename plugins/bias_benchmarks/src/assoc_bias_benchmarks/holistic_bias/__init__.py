"""HolisticBias (Smith et al., 2022): the sentences of the authors' generator and the Likelihood Bias.

:mod:`.sentences` generates the dataset's sentences as the authors' generator does, :mod:`.stimuli` offers
them as benchmark items, :mod:`.likelihood_bias` computes the authors' Likelihood Bias and
:mod:`.analysis` is the ``holistic_bias`` analysis (with the table shape it reads).
"""

"""Bundled stimuli ``nicolas2024``: the social-category terms Nicolas & Caliskan (2024) name in their text.

The study's 87 categories / 1,366 terms are printed only in the paper's Supplement; they are not
reproduced and no term is invented. The paper's procedure parameters (top 50 words, ceiling 0.7,
27,075-word vocabulary) are the ``sbert_topwords`` scorer's defaults and are recorded in ``meta``.
"""

from __future__ import annotations

from importlib import resources

from assoc import Stimuli

FILE = "nicolas2024.yaml"


def load_nicolas2024() -> Stimuli:
    """One design, ``categories``: each named category is a target group holding its term as printed."""
    import yaml

    data = yaml.safe_load(resources.files(__package__).joinpath("data", FILE).read_text(encoding="utf-8"))
    return Stimuli.from_dict(data, name="nicolas2024")

"""Behaviour: a tiny masked LM trained on a planted association yields LPRs of the planted sign."""

from __future__ import annotations

import assoc


def test_planted_gender_occupation_association(tmp_path):
    from assoc.testing.tiny_mlm import train_planted_mlm

    model = str(train_planted_mlm(tmp_path / "planted"))
    stimuli = {
        "designs": [
            {
                "name": "planted",
                "queries": ["[MASK] works as a {TARGET} ."],
                "mask": {"male": ["he"], "female": ["she"]},
                "target": {"Engineering": ["engineer"], "Care": ["nurse"]},
            }
        ]
    }
    table = assoc.score("fmat", stimuli, models=[model], cache=False)
    assert not table["oov"].any()
    per_target = assoc.analyze("lpr", table, target_pair=False).set_index("target")["value"]
    # planted: P(he | engineer) = .9, P(he | nurse) = .1 -> log(.9/.1) = +2.2 and -2.2 if learned exactly
    assert per_target["engineer"] > 0.5
    assert per_target["nurse"] < -0.5
    contrast = assoc.analyze("lpr", table)["value"].iloc[0]
    assert contrast > 1.0

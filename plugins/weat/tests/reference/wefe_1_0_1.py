"""How the WEFE numbers frozen in ``test_weat_metrics.py`` were made (not run by the tests).

WEFE 1.0.1's own ``run_query`` on the ``test_model.kv`` it ships, once with the vectors as shipped
(float32) and once with a float64 copy (``python wefe_1_0_1.py 64``): so the float64 numbers are
WEFE's code in double precision. WEFE 1.0.1 needs ``semantic_version``, ``plotly`` and ``narwhals``
besides what assoc installs; they were put on ``PYTHONPATH`` for this run only. Prints JSON.
"""

import json
import pathlib
import sys

import numpy as np
import wefe
from gensim.models import KeyedVectors
from wefe.metrics import ECT, MAC, RIPA, RND, RNSB, WEAT
from wefe.query import Query
from wefe.word_embedding_model import WordEmbeddingModel

kv = pathlib.Path(wefe.__file__).parent / "datasets" / "data" / "test_model.kv"
vectors = KeyedVectors.load(str(kv))
if sys.argv[1:] == ["64"]:
    double = KeyedVectors(vector_size=vectors.vector_size, count=0, dtype=np.float64)
    double.add_vectors(list(vectors.index_to_key), vectors.vectors.astype(np.float64))
    vectors = double
model = WordEmbeddingModel(vectors, "test_model")
F = ["female", "woman", "girl", "sister", "she", "her", "hers", "daughter"]
M = ["male", "man", "boy", "brother", "he", "him", "his", "son"]
FAM = ["home", "parents", "children", "family", "cousins", "marriage", "wedding", "relatives"]
CAR = ["executive", "management", "professional", "corporation", "salary", "office", "business", "career"]
one_attribute = Query([F, M], [FAM], ["Female terms", "Male Terms"], ["Family"])  # WEFE's RND/ECT/RIPA shape
two_attributes = Query([F, M], [FAM, CAR], ["Female terms", "Male Terms"], ["Family", "Careers"])
out = {}
for norm in (False, True):
    r = RND().run_query(one_attribute, model, normalize=norm)
    out[f"rnd normalize={norm}"] = [
        repr(float(r["result"])),
        {k: repr(float(v)) for k, v in r["distance_by_word"].items()},
    ]
    out[f"rnd cos normalize={norm}"] = repr(
        float(RND().run_query(one_attribute, model, normalize=norm, distance="cos")["result"])
    )
    out[f"ect normalize={norm}"] = repr(float(ECT().run_query(one_attribute, model, normalize=norm)["result"]))
    r = RIPA().run_query(one_attribute, model, normalize=norm)
    out[f"ripa normalize={norm}"] = [
        repr(float(r["result"])),
        {k: [repr(float(x)) for x in v.values()] for k, v in r["word_values"].items()},
    ]
    out[f"rnsb holdout=False normalize={norm}"] = repr(
        float(RNSB().run_query(two_attributes, model, normalize=norm, holdout=False)["result"])
    )
    out[f"mac normalize={norm}"] = repr(float(MAC().run_query(two_attributes, model, normalize=norm)["result"]))
    out[f"weat es normalize={norm}"] = repr(
        float(WEAT().run_query(two_attributes, model, normalize=norm, return_effect_size=True)["result"])
    )
print(json.dumps(out, indent=1))

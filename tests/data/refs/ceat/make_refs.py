"""Freeze the CEAT authors' ``ceat_meta`` (its draws, per-sample effect sizes and internals) on seeded embeddings.

Run with a Python that has numpy, scipy and scikit-learn (``ceat.py`` imports them)::

    python make_refs.py CEAT_CHECKOUT [OUT_DIR]

``CEAT_CHECKOUT`` is a checkout of weiguowilliam/CEAT at commit
497e2958a152ad70004ef6f3b613b98efdd26389. Its ``code/ceat.py`` has no licence: it is imported from
the checkout, unchanged, and never copied here. ``ceat_meta(weat_groups, model, test, N)`` reads
``ceat_race_{model}_vector.pickle`` (word -> list of embeddings) from the working directory and
returns only the combined effect size and p; :func:`ceat_meta_with_internals` runs it unchanged
in a temporary directory and also keeps

* its locals at return: ``v`` (V), ``q`` (Q), ``tao_square`` (tau^2), ``df``, ``e_lst``, ``v_lst``
  (seen through ``sys.setprofile``);
* the context index of every draw (``np.random.randint`` wrapped by a recorder that returns what
  numpy returns, so the stream is untouched);
* the per-sample lists it pickles to a hard-coded ``/Users/ceatpro/...`` folder (``open`` in the
  module's globals sends that folder to the temporary directory).

Each case runs right after ``np.random.seed(seed)`` (``ceat.py`` never seeds). Written here:
``embeddings.npz`` (the inputs, float32 values read back as float64), ``ceat_outputs.npz`` (draws,
per-sample effect sizes and variances) and ``ceat.json`` (words, context counts, the combined
results, the internals, ``ceat.py``'s ``weat_groups`` and the versions that computed them).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import scipy
import sklearn

COMMIT = "497e2958a152ad70004ef6f3b613b98efdd26389"
HARD_CODED = "/Users/ceatpro/Desktop/wefat/data/meta_data/"


def ceat_meta_with_internals(ceat: Any, weat_groups: list, vectors: dict, test: int, n: int, seed: int) -> dict:
    """Run ``ceat.ceat_meta`` unchanged after ``np.random.seed(seed)``; return its result, internals and draws."""
    captured: dict[str, Any] = {}
    draws: list[int] = []
    original_randint = np.random.randint

    def recording_randint(*args: Any, **kwargs: Any) -> Any:
        value = original_randint(*args, **kwargs)
        draws.append(int(value))
        return value

    def profiler(frame: Any, event: str, arg: Any) -> None:
        if event == "return" and frame.f_code is ceat.ceat_meta.__code__:
            captured.update(frame.f_locals)

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "meta_data").mkdir()
        with open(work / "ceat_race_synthetic_vector.pickle", "wb") as fh:
            pickle.dump({word: list(rows) for word, rows in vectors.items()}, fh)

        def redirecting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            name = str(file)
            if name.startswith(HARD_CODED):
                name = str(work / "meta_data" / name[len(HARD_CODED) :])
            return open(name, *args, **kwargs)

        cwd = os.getcwd()
        ceat.open = redirecting_open
        np.random.randint = recording_randint
        printed = io.StringIO()
        try:
            os.chdir(work)
            np.random.seed(seed)  # noqa: NPY002 -- the global stream ceat.py draws from
            sys.setprofile(profiler)
            with contextlib.redirect_stdout(printed):
                pes, p_value = ceat.ceat_meta(weat_groups=weat_groups, model="synthetic", test=test, N=n)
        finally:
            sys.setprofile(None)
            np.random.randint = original_randint
            del ceat.open
            os.chdir(cwd)
        with open(work / "meta_data" / f"synthetic_{test}_es.pickle", "rb") as fh:
            dumped_es = pickle.load(fh)
        with open(work / "meta_data" / f"synthetic_{test}_v.pickle", "rb") as fh:
            dumped_v = pickle.load(fh)
    assert dumped_es == captured["e_lst"] and dumped_v == captured["v_lst"]
    return {
        "ces": float(pes),
        "p_value": float(p_value),
        "V": float(captured["v"]),
        "Q": float(captured["q"]),
        "tau_squared": float(captured["tao_square"]),
        "df": int(captured["df"]),
        "z": float(captured["z"]),
        "printed": printed.getvalue(),
        "effect_sizes": np.array(captured["e_lst"], dtype=np.float64),
        "variances": np.array(captured["v_lst"], dtype=np.float64),
        "draws": np.array(draws, dtype=np.int64).reshape(n, -1),
    }


def synthetic_contexts(seed: int, words: list[str], dims: int, counts: tuple[int, int], noise: float) -> dict:
    """Per word: a base vector (the first half of the words share one direction) plus noisy contexts."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=dims)
    out = {}
    for position, word in enumerate(words):
        base = rng.normal(size=dims) + (0.8 * direction if position % 2 == 0 else 0.0)
        n_contexts = int(rng.integers(counts[0], counts[1] + 1))
        out[word] = (base + noise * rng.normal(size=(n_contexts, dims))).astype(np.float32)
    return out


def main() -> None:
    checkout = Path(sys.argv[1]).resolve()
    out_dir = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else Path(__file__).resolve().parent
    sys.path.insert(0, str(checkout / "code"))
    import ceat  # the authors' code/ceat.py, unchanged

    synthetic = [
        [f"x{i}" for i in range(6)],
        [f"y{i}" for i in range(6)],
        [f"a{i}" for i in range(5)],
        [f"b{i}" for i in range(7)],
    ]
    groups_11_14 = ceat.weat_groups[10:14]
    intersectional_words = list(dict.fromkeys(w for group in groups_11_14 for words in group for w in words))
    c6_words = list(dict.fromkeys(w for words in ceat.weat_groups[5] for w in words))
    #: case -> (weat_groups passed, test, N, seed, data seed, words, dims, (min, max) contexts, noise)
    cases = {
        "heterogeneous": ([synthetic], 1, 300, 2021, 1, sum(synthetic, []), 10, (2, 9), 1.0),
        "homogeneous": ([synthetic], 1, 200, 2022, 2, sum(synthetic, []), 10, (2, 6), 0.01),
        "c6": (ceat.weat_groups, 6, 200, 6, 6, c6_words, 12, (3, 8), 0.7),
        "i1": (ceat.weat_groups, 11, 100, 11, 11, intersectional_words, 8, (3, 7), 0.7),
        "i2": (ceat.weat_groups, 12, 100, 12, 11, intersectional_words, 8, (3, 7), 0.7),
        "i3": (ceat.weat_groups, 13, 100, 13, 11, intersectional_words, 8, (3, 7), 0.7),
        "i4": (ceat.weat_groups, 14, 100, 14, 11, intersectional_words, 8, (3, 7), 0.7),
    }
    inputs: dict[str, np.ndarray] = {}
    outputs: dict[str, np.ndarray] = {}
    frozen: dict[str, Any] = {
        "source": f"weiguowilliam/CEAT {COMMIT}, code/ceat.py ceat_meta",
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__,
        },
        "weat_groups": ceat.weat_groups,
        "cases": {},
    }
    for case, (weat_groups, test, n, seed, data_seed, words, dims, counts, noise) in cases.items():
        data_key = f"data{data_seed}"
        if f"{data_key}_contexts" not in inputs:
            vectors = synthetic_contexts(data_seed, words, dims, counts, noise)
            inputs[f"{data_key}_contexts"] = np.concatenate([vectors[w] for w in words])
            inputs[f"{data_key}_counts"] = np.array([len(vectors[w]) for w in words], dtype=np.int64)
            frozen.setdefault("data", {})[data_key] = {"words": words, "dims": dims, "noise": noise}
        stacked = inputs[f"{data_key}_contexts"].astype(np.float64)
        bounds = np.cumsum([0, *inputs[f"{data_key}_counts"]])
        data_words = frozen["data"][data_key]["words"]
        vectors64 = {w: stacked[bounds[i] : bounds[i + 1]] for i, w in enumerate(data_words)}
        result = ceat_meta_with_internals(ceat, weat_groups, vectors64, test, n, seed)
        for key in ("effect_sizes", "variances", "draws"):
            outputs[f"{case}_{key}"] = result.pop(key)
        frozen["cases"][case] = {
            "data": data_key,
            "sets": weat_groups[test - 1],
            "test": test,
            "N": n,
            "seed": seed,
            **result,
        }
    np.savez_compressed(out_dir / "embeddings.npz", **inputs)
    np.savez_compressed(out_dir / "ceat_outputs.npz", **outputs)
    (out_dir / "ceat.json").write_text(json.dumps(frozen, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

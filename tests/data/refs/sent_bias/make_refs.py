"""Freeze sent-bias's SEAT effect sizes and p-values on seeded synthetic encodings.

Run with a Python whose numpy still has ``np.int`` (numpy < 1.24: sent-bias's ``weat.py`` uses it)
and scipy, from anywhere::

    python make_refs.py SENT_BIAS_CHECKOUT [OUT_DIR]

``SENT_BIAS_CHECKOUT`` is a checkout of W4ngatang/sent-bias at commit
e3559fb669ca4832743b42fee715994c15c7f1af (CC BY-NC 4.0; never copied into this repository).
Its ``sentbias/weat.py`` is imported unchanged and ``weat.run_test`` is called on the encodings in
``encodings.npz`` (written here first, float32 values read back as float64), each case right after
``np.random.seed(seed)`` as ``sentbias/main.py`` seeds its run. ``sent_bias.json`` gets the
effect sizes and p-values it returns, with the versions that computed them.
"""

from __future__ import annotations

import json
import logging
import platform
import sys
from pathlib import Path

import numpy as np
import scipy

COMMIT = "e3559fb669ca4832743b42fee715994c15c7f1af"

#: name -> (data seed, |X|, |Y|, |A|, |B|, dimensions, shift of X and A along one direction)
DATA = {
    "small": (101, 6, 6, 7, 5, 12, 2.5),
    "medium": (102, 14, 14, 9, 11, 16, 0.9),
    "seat_shaped": (103, 40, 40, 30, 35, 32, 1.5),
    "null": (104, 10, 10, 8, 8, 10, 0.0),
}
#: name -> (data, n_samples, seed, parametric): run_test(encs, n_samples, parametric) after np.random.seed(seed)
CASES = {
    "small_exact": ("small", 100_000, 1111, False),
    "medium_sampled": ("medium", 5_000, 1111, False),
    "medium_sampled_seed7": ("medium", 3_001, 7, False),
    "medium_parametric": ("medium", 5_000, 1111, True),
    "seat_shaped_sampled": ("seat_shaped", 2_000, 1111, False),
    "null_exact": ("null", 200_000, 1111, False),
    "null_sampled": ("null", 1_000, 5, False),
    "ties_exact": ("ties", 100_000, 1111, False),
}
#: data with repeated encodings: X and Y are drawn, with repetition, from four vectors (seed, |X| = |Y|, dims)
TIED = {"ties": (22, 5, 6)}


def make_encodings() -> dict[str, np.ndarray]:
    """Seeded encodings: standard normal rows, X and A shifted along one shared direction."""
    arrays = {}
    for name, (seed, n_x, n_y, n_a, n_b, dims, shift) in DATA.items():
        rng = np.random.default_rng(seed)
        direction = rng.normal(size=dims)
        direction /= np.linalg.norm(direction)
        sets = {
            "x": rng.normal(size=(n_x, dims)) + shift * direction,
            "y": rng.normal(size=(n_y, dims)),
            "a": rng.normal(size=(n_a, dims)) + shift * direction,
            "b": rng.normal(size=(n_b, dims)),
        }
        for key, values in sets.items():
            arrays[f"{name}_{key}"] = values.astype(np.float32)
    for name, (seed, n_target, dims) in TIED.items():
        rng = np.random.default_rng(seed)
        base = rng.normal(size=(4, dims))
        sets = {"x": base[rng.integers(0, 4, n_target)], "y": base[rng.integers(0, 4, n_target)]}
        sets.update(a=rng.normal(size=(4, dims)), b=rng.normal(size=(3, dims)))
        for key, values in sets.items():
            arrays[f"{name}_{key}"] = values.astype(np.float32)
    return arrays


def encs_of(arrays: dict[str, np.ndarray], name: str) -> dict:
    """The ``encs`` dict ``weat.run_test`` takes: targ1/targ2/attr1/attr2 -> category and {text: vector}."""
    out = {}
    for key, role in (("x", "targ1"), ("y", "targ2"), ("a", "attr1"), ("b", "attr2")):
        values = arrays[f"{name}_{key}"].astype(np.float64)
        out[role] = {"category": role, "encs": {f"{key}{i}": row for i, row in enumerate(values)}}
    return out


def main() -> None:
    checkout = Path(sys.argv[1]).resolve()
    out_dir = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).resolve().parent
    sys.path.insert(0, str(checkout / "sentbias"))
    import weat  # sent-bias's sentbias/weat.py, unchanged

    logging.disable(logging.CRITICAL)
    arrays = make_encodings()
    np.savez_compressed(out_dir / "encodings.npz", **arrays)
    arrays = dict(np.load(out_dir / "encodings.npz"))
    results = {}
    for case, (data, n_samples, seed, parametric) in CASES.items():
        np.random.seed(seed)  # noqa: NPY002 -- the global stream weat.py shuffles with, seeded as main.py does
        effect_size, p_value = weat.run_test(encs_of(arrays, data), n_samples=n_samples, parametric=parametric)
        results[case] = {
            "data": data,
            "n_samples": n_samples,
            "seed": seed,
            "parametric": parametric,
            "effect_size": float(effect_size),
            "p_value": float(p_value),
        }
    frozen = {
        "source": f"W4ngatang/sent-bias {COMMIT}, sentbias/weat.py run_test",
        "versions": {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__},
        "data": {
            **{name: dict(zip(("seed", "n_x", "n_y", "n_a", "n_b", "dims", "shift"), v)) for name, v in DATA.items()},
            **{name: dict(zip(("seed", "n_target", "dims"), v), repeated=True) for name, v in TIED.items()},
        },
        "cases": results,
    }
    (out_dir / "sent_bias.json").write_text(json.dumps(frozen, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""The seeded subset every benchmark's scorer offers: the options ``limit``, ``sample`` and ``sample_seed``.

A scorer that declares them takes a stated subset of its stimuli before any model loads: ``limit=N`` the first
N, ``sample=N`` N drawn without replacement with ``numpy.random.default_rng(sample_seed)``, each as the
benchmark defines a subset (:meth:`assoc.ItemStimuli.subset` per group for most: the options are
:data:`assoc_bias_benchmarks.choice_scorer.SUBSET_OPTIONS`; HolisticBias keeps whole cells). ``assoc benchmark
run --sample N`` passes them to every scorer that declares all three (``docs/benchmarks-run.md``). The seed is
``sample_seed``, not ``seed``: a chat model's ``seed`` is the API's sampling seed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def subset_of(params: Mapping[str, Any]) -> dict[str, Any]:
    """``limit``, ``sample`` and ``seed`` as a stimuli's ``subset`` takes them, from a scorer's options.

    ``{}`` when neither ``limit`` nor ``sample`` is given. Both at once is refused (one line).
    """
    from assoc import OptionError

    limit, sample = params.get("limit"), params.get("sample")
    if limit is not None and sample is not None:
        raise OptionError("give the option limit or sample, not both")
    if limit is None and sample is None:
        return {}
    return {"limit": limit, "sample": sample, "seed": int(params.get("sample_seed") or 0)}

"""clm's work units on the Ray executor give the local executor's table (two models, several units each)."""

from __future__ import annotations

import numpy as np
import pytest
import ray  # not importorskip: CI installs assoc[ray] (scripts/setup.sh), and a missing Ray must fail the run

import assoc


@pytest.fixture(scope="module")
def ray_session():
    if ray.is_initialized():
        ray.shutdown()
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
    yield
    ray.shutdown()


def test_ray_gives_the_local_table(ray_session, tiny_causal, edge_stimuli):
    models = [tiny_causal["gpt2"], tiny_causal["llama"]]
    options = {"unit_size": 2, "measure": "both", "cache": False}
    local = assoc.score("clm", edge_stimuli, models, **options)
    remote = assoc.score("clm", edge_stimuli, models, executor="ray", **options)
    assert remote.attrs["assoc"]["executor"]["units"] == 2 * 2  # 3 queries in units of 2, per model
    assert list(remote.columns) == list(local.columns)
    floats = [c for c in local.columns if local[c].dtype == float]
    assert remote.drop(columns=floats).equals(local.drop(columns=floats))
    for column in floats:
        np.testing.assert_allclose(remote[column], local[column], rtol=0, atol=1e-5)

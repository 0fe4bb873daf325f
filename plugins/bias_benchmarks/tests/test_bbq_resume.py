"""BBQ on a causal LM killed mid-way (SIGKILL) and run again: nothing it had computed is computed again, same table.

The child process scores 20 examples on a tiny GPT-2 in work units of 4 examples (12 option log-likelihoods),
with the causal kind's checkpoints every 5 log-likelihoods, and notes each engine call once it has returned; it
sleeps at the start of every call, after the previous call's results were checkpointed, and is killed there. The
run again computes exactly the log-likelihoods the killed one had not finished, and gives the table of a run that
was never interrupted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from assoc_bias_benchmarks.bbq.testing import example_directory

import assoc

pytestmark = pytest.mark.slow

CHILD = """
import os, sys, time
import assoc
import assoc.lm.causal.kind as kind
from assoc.lm.causal.engine import CausalLM

kind.CHUNK = 5  # a checkpoint every 5 log-likelihoods (inside a unit of 12)
real = CausalLM.log_probs
log = {log!r}


def noted(self, requests, **options):
    with open(log, "a") as handle:  # the previous call's results are checkpointed by now
        handle.write("start\\n")
    time.sleep(float(os.environ.get("BBQ_TEST_SLEEP", "0")))
    values = real(self, requests, **options)
    with open(log, "a") as handle:
        handle.write(f"{{len(requests)}}\\n")
    return values


CausalLM.log_probs = noted
assoc.score("bbq", {stimuli!r}, [{model!r}], cache_dir={cache!r}, unit_size=4, progress=False)
"""


def bbq_directory(folder: Path) -> Path:
    """A BBQ directory of 12 Age and 8 Religion examples (the first lines of the bundled files)."""
    return example_directory(folder, {"Age": 12, "Religion": 8})


def run_child(script: str, sleep: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "BBQ_TEST_SLEEP": str(sleep)})


def computed(log: Path) -> list[int]:
    """The sizes of the engine calls that returned."""
    return [int(line) for line in log.read_text().split() if line != "start"] if log.exists() else []


def started(log: Path) -> int:
    return log.read_text().split().count("start") if log.exists() else 0


def test_a_killed_bbq_run_on_a_causal_lm_recomputes_nothing_and_gives_the_same_table(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from assoc.testing.tiny_clm import build_gpt2_bpe

    model = str(build_gpt2_bpe(tmp_path / "gpt2", seed=0, positions=256))
    stimuli = f"bbq:{bbq_directory(tmp_path / 'bbq')}"
    cache, log = str(tmp_path / "cache"), tmp_path / "computed.txt"
    script = textwrap.dedent(CHILD).format(log=str(log), stimuli=stimuli, model=model, cache=cache)
    killed = run_child(script, sleep=0.4)
    deadline = time.monotonic() + 240
    try:  # one unit done (3 calls), two checkpoints of the next: killed asleep at the start of the 6th call
        while time.monotonic() < deadline and started(log) < 6 and killed.poll() is None:
            time.sleep(0.02)
    finally:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
    before = computed(log)
    assert len(before) == 5 and killed.returncode == -signal.SIGKILL, before  # stopped mid-way, inside a unit
    log.unlink()
    again = run_child(script, sleep=0.0)
    assert again.wait(timeout=240) == 0
    after = computed(log)
    assert sum(before) + sum(after) == 20 * 3  # every option's log-likelihood computed once over the two runs
    resumed = assoc.score("bbq", stimuli, [model], cache_dir=cache, unit_size=4, progress=False)  # all from the cache
    whole = assoc.score("bbq", stimuli, [model], cache=False, unit_size=4, progress=False)
    assert list(resumed.columns) == list(whole.columns)
    floats = [c for c in whole.columns if c.startswith(("ll_ans", "score_ans"))]
    pd.testing.assert_frame_equal(resumed.drop(columns=floats), whole.drop(columns=floats))
    # batches of other compositions (a resumed unit computes its last chunk alone): float32 noise at most
    assert np.max(np.abs(resumed[floats].to_numpy() - whole[floats].to_numpy())) < 1e-5

"""Long runs with standard error piped: the job's size, progress lines, and Ctrl-C (exit 130, resumable)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# every test runs the command line in another process, and Ctrl-C waits for units under way
pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
# 9 word pairs, one per unit: 9 units of 1 item
STIMULI = {
    "designs": [
        {"name": "d1", "target": {"X": ["aa", "bbbb", "c"]}, "attribute": {"A": ["dd", "eeeee"]}},
        {"name": "d2", "target": {"Y": ["ffffff"]}, "attribute": {"B": ["g", "hh", "iii"]}},
    ]
}
SCORE = "import sys; from assoc.cli import main; main(sys.argv[1:])"


@pytest.fixture
def piped_cli(fake_distribution, monkeypatch, tmp_path):
    """Run ``assoc score --scorer length_units`` in a subprocess whose standard error is a pipe, not a terminal."""
    monkeypatch.syspath_prepend(str(HERE))
    fake_distribution("units", "from unit_scorers import register_scorers  # noqa: F401\n")
    monkeypatch.setenv("PYTHONPATH", str(HERE) + ":" + os.environ["PYTHONPATH"])
    log = tmp_path / "calls.log"
    monkeypatch.setenv("ASSOC_TEST_UNIT_LOG", str(log))
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ASSOC_PROGRESS_INTERVAL", "0.2")
    stimuli = tmp_path / "stimuli.json"
    stimuli.write_text(json.dumps(STIMULI))
    out = tmp_path / "table.csv"

    def start(*extra: str, **env: str) -> subprocess.Popen[str]:
        args = ["score", "--scorer", "length_units", "--stimuli", str(stimuli), "-m", "m1", "-o", "per_unit=1"]
        return subprocess.Popen(
            [sys.executable, "-c", SCORE, *args, "--out", str(out), *extra],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def units_run() -> list[str]:
        return (
            [line.split()[1] for line in log.read_text().splitlines() if line.startswith("unit ")]
            if log.exists()
            else []
        )

    return start, units_run, log, out


def _interrupt_after(process: subprocess.Popen[str], units_run, count: int) -> float:
    """Send SIGINT once ``count`` units have started; return when it was sent."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(units_run()) < count and process.poll() is None:
        time.sleep(0.02)
    assert process.poll() is None, "the run ended before it could be interrupted"
    process.send_signal(signal.SIGINT)
    return time.monotonic()


def test_a_piped_run_shows_its_size_and_progress_and_ctrl_c_keeps_what_is_done(piped_cli):
    start, units_run, log, out = piped_cli
    process = start(ASSOC_TEST_UNIT_SLEEP="0.25")
    _interrupt_after(process, units_run, 5)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    lines = err.splitlines()
    # the size of the job before any work, then steady lines with done/total, rate and time left
    assert lines[0] == "length_units: 9 items to do (9 work units, 0 from the cache; 1 model)", err
    progress = [line for line in lines if re.fullmatch(r"length_units: \d/9 items \(\d+%\), .*", line)]
    assert progress and any(re.search(r"[\d.]+ item/s, about \d+s left", line) for line in progress), err
    assert "Aborted!" not in err and "Traceback" not in err
    done = int(re.search(r"^interrupted: length_units: (\d) of 9 items done, kept in the cache \(", lines[-1]).group(1))
    assert "run the same command again to resume" in lines[-1]
    started = units_run()
    assert done in (len(started) - 1, len(started))  # the unit under way when Ctrl-C came is not stored
    assert len(started) < 9  # the run stopped, not went on to its end (no clock: a busy machine is slow to exit)
    assert not out.exists()

    log.write_text("")
    process = start()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert (
        err.splitlines()[0]
        == f"length_units: 9 items to do, {done} done before (9 work units, {done} from the cache; 1 model)"
    )
    assert len(units_run()) == 9 - done  # only the rest is computed
    assert out.read_text().count("\n") == 10


def test_ctrl_c_during_a_step_python_cannot_interrupt_still_stops_the_run(piped_cli):
    start, units_run, _, _ = piped_cli
    process = start(ASSOC_TEST_UNIT_SLEEP="120", ASSOC_TEST_UNIT_STUCK="1")
    sent = _interrupt_after(process, units_run, 1)
    _, err = process.communicate(timeout=90)
    # the watchdog ends it after 1.5 s; the bound is the stuck step (120 s), not a clock a busy machine misses
    assert process.returncode == 130 and time.monotonic() - sent < 90, err
    assert err.splitlines()[-1].startswith("interrupted: length_units: 0 of 9 items done, kept in the cache")
    # the process ended without releasing its claim on the unit under way: a re-run takes it over at once
    process = start()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err


def test_no_progress_shows_nothing_but_ctrl_c_still_says_how_far_the_run_came(piped_cli):
    start, units_run, _, _ = piped_cli
    process = start("--no-progress", ASSOC_TEST_UNIT_SLEEP="0.25")
    _interrupt_after(process, units_run, 3)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert re.fullmatch(r"interrupted: length_units: \d of 9 items done, kept in the cache \(.*\n", err), err

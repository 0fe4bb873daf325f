"""The benchmark harness (``python -m benchmarks``): its cheap parts only, never a real benchmark.

Argument parsing, the machine block, the median/range/ratio arithmetic against numbers worked out by
hand, the alternating order, and the Markdown page (its header, the quick-run banner, the
"machine not quiet" line).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def harness():
    # the benchmarks are a top-level package of the repository, not of the installed distribution
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    spec = importlib.util.find_spec("benchmarks.harness")
    assert spec is not None and Path(spec.origin).is_relative_to(ROOT / "benchmarks")
    from benchmarks import harness

    return harness


def test_arguments(harness):
    args = harness.parse_args([])
    assert args.comparisons == ["fmat", "pll", "sbert", "weat", "chat", "clm", "crows", "ceat", "server"]
    assert (args.rounds, args.quick, args.device, args.threads) == (3, False, "auto", None)
    args = harness.parse_args(["pll", "fmat", "pll", "--rounds", "5", "--quick", "--device", "auto", "--threads", "1"])
    assert args.comparisons == ["pll", "fmat"]  # in the order given, once each
    assert (args.rounds, args.quick, args.device, args.threads) == (5, True, "auto", 1)
    for bad in (["nope"], ["--rounds", "0"], ["--threads", "0"], ["--device", "tpu"]):
        with pytest.raises(SystemExit):
            harness.parse_args(bad)


def test_only_a_group_of_sides(harness):
    assert harness.parse_args([]).only is None
    args = harness.parse_args(["fmat", "--only", "one-query"])
    assert (args.comparisons, args.only) == (["fmat"], "one-query")
    assert harness.parse_args(["pll", "--only", "one-sentence"]).only == "one-sentence"
    # a group the comparison lacks, and the default of all comparisons (not every one has the group)
    for bad in (["fmat", "--only", "nope"], ["pll", "--only", "one-query"], ["--only", "one-query"]):
        with pytest.raises(SystemExit):
            harness.parse_args(bad)
    # fmat's one-query group: its sides and the contests between two of them, under a name of its own
    full = harness.Comparison(
        name="fmat",
        title="FMAT",
        sides=[harness.Side(n, n) for n in ("assoc", "pipeline", "assoc-1q", "load", "pipeline-1q", "assoc-1q-onnx")],
        contests=[
            harness.Contest("assoc", "pipeline"),
            harness.Contest("assoc-1q", "load"),
            harness.Contest("assoc-1q-onnx", "assoc-1q"),
            harness.Contest("assoc-onnx", "assoc"),  # a side the comparison did not offer (no ONNX Runtime)
        ],
    )
    from benchmarks import vs_fmat

    group = harness.only_group(full, "one-query", vs_fmat.GROUPS["one-query"])
    assert group.name == "fmat-one-query" and full.name == "fmat"
    assert [s.name for s in group.sides] == ["assoc-1q", "load", "pipeline-1q", "assoc-1q-onnx"]
    assert [(c.assoc, c.baseline) for c in group.contests] == [("assoc-1q", "load"), ("assoc-1q-onnx", "assoc-1q")]


def test_statistics_by_hand(harness):
    # median of 3, 1, 2 is 2; of four values the mean of the middle two: (2 + 4) / 2 = 3
    assert harness.summary([3.0, 1.0, 2.0]) == {"median": 2.0, "min": 1.0, "max": 3.0}
    assert harness.summary([4.0, 1.0, 2.0, 10.0])["median"] == 3.0
    # rounds are paired: 41 / 7, 40 / 8, 45 / 9 = 5.857..., 5, 5; never mean(baseline) / mean(assoc) = 5.29
    values = harness.ratios([41.0, 40.0, 45.0], [7.0, 8.0, 9.0])
    assert values == pytest.approx([41 / 7, 5.0, 5.0])
    assert harness.summary(values) == pytest.approx({"median": 5.0, "min": 5.0, "max": 41 / 7})
    with pytest.raises(ValueError):
        harness.ratios([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        harness.summary([])
    assert [harness.round_order(["a", "b", "c"], i) for i in range(3)] == [
        ["a", "b", "c"],
        ["c", "b", "a"],
        ["a", "b", "c"],
    ]


def test_clocks_from_stamps(harness):
    stamps = harness.Stamps(spawned=100.0, imported=101.5, loaded=102.0, done=110.0)
    assert stamps.clocks() == {"process": 10.0, "imported": 8.5, "loaded": 8.0}
    assert harness.Stamps(spawned=1.0, done=3.0).clocks() == {"process": 2.0}


CPUINFO = """processor\t: 0
model name\t: AMD EPYC 9R45 Test
flags\t\t: fpu sse2 avx avx2 fma
processor\t: 1
model name\t: AMD EPYC 9R45 Test
flags\t\t: fpu sse2 avx avx2 fma
"""


def test_machine_block(harness):
    info = harness.machine_info("cpu", 2, cpuinfo=CPUINFO)
    assert info["cpu"] == "AMD EPYC 9R45 Test"
    assert (info["avx2"], info["avx512f"]) == (True, False)
    assert info["torch_threads"] == 2 and info["device"] == "cpu" and info["gpu"] is None
    import torch

    assert info["torch"] == torch.__version__
    assert harness.machine_info("cpu", None, cpuinfo=CPUINFO)["torch_threads"] == torch.get_num_threads()
    model, flags = harness.cpu_model_and_flags("model name : X\nflags : avx512f avx2\n")
    assert model == "X" and {"avx512f", "avx2"} <= flags


def result(harness, quick: bool, load: float) -> dict:
    machine = harness.machine_info("cpu", 2, cpuinfo=CPUINFO)
    rounds = [
        {
            "round": 1,
            "order": ["assoc", "base"],
            "load_before": load,
            "load_after": 0.2,
            "other_cpu": 0.02 if load < 0.5 else 0.4,
            "clocks": {"assoc": {"process": 2.0}, "base": {"process": 8.0}},
        },
        {
            "round": 2,
            "order": ["base", "assoc"],
            "load_before": 0.1,
            "load_after": 0.3,
            "other_cpu": 0.05,
            "clocks": {"assoc": {"process": 4.0}, "base": {"process": 10.0}},
        },
    ]
    return {
        "name": "demo",
        "title": "Demo",
        "quick": quick,
        "date": "2026-11-26 01:00 UTC",
        "command": "python -m benchmarks demo",
        "machine": machine,
        "workload": "two rounds",
        "clocks": ["process"],
        "sides": [{"name": "assoc", "label": "assoc side"}, {"name": "base", "label": "base|line"}],
        "contests": [
            {
                "assoc": "assoc",
                "baseline": "base",
                "label": "",
                "ratio": {
                    "process": {**harness.summary(harness.ratios([8.0, 10.0], [2.0, 4.0])), "rounds": [4.0, 2.5]}
                },
            }
        ],
        "summary": {"assoc": {"process": harness.summary([2.0, 4.0])}, "base": {"process": harness.summary([8, 10])}},
        "rounds": rounds,
        "not_quiet": [r["round"] for r in rounds if r["other_cpu"] > harness.QUIET_OTHER_CPU],
        "checks": [["max |Δ|", "1e-7"]],
        "notes": [],
    }


def test_markdown_page(harness, tmp_path):
    page = harness.render_markdown(result(harness, quick=False, load=0.05))
    assert harness.QUICK_HEADER not in page and "not quiet" not in page
    assert "`python -m benchmarks demo`" in page and "2026-11-26 01:00 UTC" in page
    assert "AMD EPYC 9R45 Test, " in page and "avx512f no, avx2 yes" in page
    assert "| torch threads | 2 |" in page and "| device | cpu |" in page
    assert "0.05 to 0.30" in page  # the lowest and highest load of all rounds, before and after
    # median 3 s (2, 4), range 8-10 s; ratio median (4 + 2.5) / 2 = 3.25, range 2.50-4.00; the | escaped
    assert "| assoc side | 3.000 | 2.000–4.000 |" in page
    assert "| base\\|line / assoc side | 3.25 | 2.50–4.00 | 4.00, 2.50 |" in page
    assert "| 2 | 0.05 | 0.10 | 0.30 | base 10.00; assoc 4.000 |" in page
    assert "| other processes' CPU | 0.02 to 0.05 cores" in page
    quick = harness.render_markdown(result(harness, quick=True, load=0.9))
    assert quick.startswith(harness.QUICK_HEADER)
    assert "**Machine not quiet**" in quick and "round(s) 1." in quick
    md, raw = harness.write_outputs(result(harness, quick=True, load=0.1), tmp_path / "docs", tmp_path / "raw")
    assert md.name == "demo.md" and md.read_text(encoding="utf-8").startswith(harness.QUICK_HEADER)
    import json

    assert json.loads(raw.read_text(encoding="utf-8"))["rounds"][1]["order"] == ["base", "assoc"]


def test_other_cpu_is_the_machines_busy_time_minus_the_harness_own(harness):
    # (wall, machine busy CPU s, own CPU s): 10 s of wall, the machine busy 15 s, the harness tree 12 s of it
    assert harness.other_cpu((100.0, 50.0, 1.0), (110.0, 65.0, 13.0)) == pytest.approx(0.3)
    assert harness.other_cpu((100.0, 50.0, 1.0), (110.0, 60.0, 13.0)) == 0.0  # rounding below zero: none
    assert harness.other_cpu(None, (110.0, 60.0, 13.0)) is None


def test_cpu_seconds_reads_the_first_line_of_proc_stat(harness, tmp_path, monkeypatch):
    import os

    stat = tmp_path / "stat"
    stat.write_text("cpu  100 20 30 1000 50 5 5 40 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n", encoding="ascii")
    real = Path.read_text
    monkeypatch.setattr(
        Path, "read_text", lambda self, *a, **k: real(stat if str(self) == "/proc/stat" else self, *a, **k)
    )
    ticks = os.sysconf("SC_CLK_TCK")
    busy, steal = harness.cpu_seconds()
    assert busy == pytest.approx((100 + 20 + 30 + 5 + 5) / ticks) and steal == pytest.approx(40 / ticks)


# A process that burns CPU until its own clock says 0.3 s, reports its pid and CPU time, then waits:
# what /proc says it used is then fixed, whatever the machine's load (no timing in the test).
BURNER = (
    "import os, sys, time\n"
    "while time.process_time() < 0.3: pass\n"
    "print(os.getpid(), time.process_time(), flush=True)\n"
    "sys.stdin.read()\n"
)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="live_descendants_cpu reads /proc (Linux only)")
def test_a_live_grandchild_counts_as_the_benchmarks_own_cpu(harness):
    import os
    import subprocess

    # this process -> middle (waits for the burner) -> burner: the burner is a descendant, not a child
    middle = subprocess.Popen(
        [sys.executable, "-c", f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {BURNER!r}])"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        pid, used = middle.stdout.readline().split()
        burner_cpu = harness.live_descendants_cpu(middle.pid)
        mine = harness.live_descendants_cpu(os.getpid())
        alone = harness.live_descendants_cpu(int(pid))
    finally:
        middle.communicate("", timeout=60)  # the burner reads its stdin to the end and exits
    ticks = os.sysconf("SC_CLK_TCK")
    # /proc counts whole clock ticks of user and system time: at most two ticks below the burner's clock
    assert float(used) - 2 / ticks <= burner_cpu <= float(used) + 0.05
    assert mine >= burner_cpu  # the burner is found under this process too, beside its other descendants
    assert alone == 0.0  # a process without descendants

"""The benchmark harness: each side in its own fresh process, alternating rounds, medians and ranges.

A *comparison* (one module ``benchmarks.vs_<name>``) names its *sides* (assoc's and the baselines'),
the *contests* (an assoc side against a baseline side), prepares what every side shares once (a
model built into a temporary directory, a server), and runs one side in a child process
(``python -m benchmarks --child NAME SIDE SPEC``), which writes its timestamps and results to a JSON
file. The harness runs the sides ``--rounds`` times in alternating order (round 1 A, B, ...;
round 2 ..., B, A), so that a slow spell of the machine hits every side alike, records how much CPU
other processes used during each round (and the 1-minute
load average before and after each round, and writes

* ``docs/benchmarks/<name>.md``: the tables (median and range per side and of each ratio), headed
  by the date, the machine, the load, the threads, the device and the command;
* ``benchmarks/results/<name>.json``: the raw numbers of every round.

``--only GROUP`` runs one group of a comparison's sides (the module's ``GROUPS``: for ``fmat``,
``one-query``, the fresh-process first-result sides) with the contests among them, and writes
``<name>-<group>.md`` / ``.json`` instead, leaving the full comparison's files as they are.

This module imports only the standard library at the top: a side may run under another
interpreter (minicons in its own virtual environment).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
COMPARISONS = ("fmat", "pll", "sbert", "weat", "chat", "clm", "crows", "ceat", "server")
#: other processes using more than this many cores on average during a round: the round is not a measurement
QUIET_OTHER_CPU = 0.1
#: result keys of a side too large for the JSON file (the values compared; the checks summarise them)
BULKY = ("values", "lists")
QUICK_HEADER = "**Quick smoke run, not a measurement**: tiny sizes (`--quick`), run to show that every side works."

# --------------------------------------------------------------------------- the clocks of one side


def now() -> float:
    """Wall-clock time in seconds (comparable across processes, unlike ``perf_counter``)."""
    return time.time()


@dataclass
class Stamps:
    """Timestamps of one side's child process: wall times (``time.time()``)."""

    spawned: float
    imported: float | None = None
    loaded: float | None = None
    done: float | None = None

    def clocks(self) -> dict[str, float]:
        """``process``: spawn to result (Python start-up, imports, model load, work);
        ``imported``: after the side's imports to result; ``loaded``: after its model load to result."""
        out: dict[str, float] = {}
        if self.done is None:
            return out
        out["process"] = self.done - self.spawned
        if self.imported is not None:
            out["imported"] = self.done - self.imported
        if self.loaded is not None:
            out["loaded"] = self.done - self.loaded
        return out


CLOCK_TEXT = {
    "process": "process: from the parent starting the child process to the result (Python start-up, imports, "
    "model load and the work)",
    "imported": "imported: from after the side's imports (for torch sides: torch, transformers and the side's "
    "library) to the result (model load, if any, and the work)",
    "loaded": "loaded: from after the side's model load to the result (the work alone)",
}


# --------------------------------------------------------------------------- comparisons


@dataclass(frozen=True)
class Side:
    """One side of a comparison: ``name`` (a short key) and what it runs (``label``)."""

    name: str
    label: str
    python: str | None = None  # another interpreter (set by ``prepare``), e.g. a separate virtual environment


@dataclass(frozen=True)
class Contest:
    """A ratio reported: ``baseline`` time / ``assoc`` time (> 1: assoc takes less time)."""

    assoc: str
    baseline: str
    label: str = ""


@dataclass
class Comparison:
    """What a ``benchmarks.vs_<name>`` module defines (see the module docstring)."""

    name: str
    title: str
    sides: list[Side]
    contests: list[Contest]
    clocks: tuple[str, ...] = ("process",)
    workload: str = ""
    notes: list[str] = field(default_factory=list)
    #: what the header says instead of the device where no side runs torch (``--device`` does not apply)
    device_note: str | None = None


def comparison_module(name: str) -> Any:
    """The module ``benchmarks.vs_<name>``."""
    return importlib.import_module(f"benchmarks.vs_{name}")


# --------------------------------------------------------------------------- statistics


def summary(values: Sequence[float]) -> dict[str, float]:
    """Median, minimum and maximum of ``values`` (the median of an even count is the mean of the middle two)."""
    if not values:
        raise ValueError("no values")
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def ratios(baseline: Sequence[float], ours: Sequence[float]) -> list[float]:
    """Per-round ratios ``baseline[i] / ours[i]``: rounds are paired, never pooled."""
    if len(baseline) != len(ours):
        raise ValueError(f"unpaired rounds: {len(baseline)} baseline, {len(ours)} assoc")
    return [b / a for b, a in zip(baseline, ours, strict=True)]


def round_order(names: Sequence[str], round_index: int) -> list[str]:
    """The order of the sides in round ``round_index`` (0-based): as given, then reversed, alternately."""
    return list(names) if round_index % 2 == 0 else list(reversed(names))


# --------------------------------------------------------------------------- the machine


def cpu_model_and_flags(cpuinfo: str | None = None) -> tuple[str, set[str]]:
    """The CPU's model name and flags, from ``/proc/cpuinfo`` (or the text given); unknown elsewhere."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return platform.processor() or "unknown", set()
    model, flags = "unknown", set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model == "unknown":
            model = value.strip()
        elif key in ("flags", "Features") and not flags:
            flags = set(value.split())
    return model, flags


def machine_info(device: str, threads: int | None, cpuinfo: str | None = None) -> dict[str, Any]:
    """What a reader needs to judge a timing: CPU, cores, vector units, torch, threads, device, GPU."""
    model, flags = cpu_model_and_flags(cpuinfo)
    info: dict[str, Any] = {
        "cpu": model,
        "cores": os.cpu_count(),
        "avx512f": "avx512f" in flags,
        "avx2": "avx2" in flags,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_threads"] = threads if threads else torch.get_num_threads()
        info["cuda_available"] = bool(torch.cuda.is_available())
        info["gpu"] = torch.cuda.get_device_name(0) if device.startswith("cuda") else None
    except ImportError:
        info.update(torch=None, torch_threads=threads, cuda_available=False, gpu=None)
    info["device"] = device
    return info


def resolve_device(requested: str) -> str:
    """``auto``: ``cuda`` when torch sees a GPU, else ``cpu``; ``cuda`` without a GPU is an error."""
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no CUDA device (use --device auto or cpu)")
    return requested


def cpu_seconds() -> tuple[float, float] | None:
    """(busy, steal) CPU seconds of the whole machine since boot, all cores, from ``/proc/stat``; None elsewhere.

    Busy is user + nice + system + irq + softirq time: what every process on the machine used.
    """
    try:
        fields = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if fields[0] != "cpu" or len(fields) < 9:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[1:9])
    return (user + nice + system + irq + softirq) / ticks, steal / ticks


def own_cpu_seconds() -> float:
    """CPU seconds this process, its finished children and its live descendants used (user + system).

    Live descendants (a local server a comparison started for its rounds) are read from
    ``/proc/<pid>/stat``; their CPU is the benchmark's own, not other processes'.
    """
    import resource

    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime + live_descendants_cpu(os.getpid())


def live_descendants_cpu(root: int) -> float:
    """CPU seconds (user + system, their own and their waited-for children's) of the live descendants of ``root``."""
    parent_of: dict[int, int] = {}
    cpu_of: dict[int, float] = {}
    ticks = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            # the command name (field 2) may hold spaces: split after its closing parenthesis
            fields = (entry / "stat").read_text(encoding="ascii", errors="replace").rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        pid = int(entry.name)
        parent_of[pid] = int(fields[1])
        cpu_of[pid] = sum(int(v) for v in fields[11:15]) / ticks  # utime, stime, cutime, cstime
    total = 0.0
    for pid in cpu_of:
        ancestor = parent_of.get(pid)
        while ancestor is not None and ancestor > 1 and ancestor != root:
            ancestor = parent_of.get(ancestor)
        if ancestor == root:
            total += cpu_of[pid]
    return total


def other_cpu(before: tuple[float, float, float] | None, after: tuple[float, float, float] | None) -> float | None:
    """Cores' worth of CPU that processes other than the harness and its sides used between two ``cpu_sample`` s.

    The machine's busy time minus the harness's own (and its children's) CPU time, over the wall time.
    The 1-minute load average cannot tell this: it counts the sides themselves and lags a minute behind.
    """
    if before is None or after is None or after[0] <= before[0]:
        return None
    return max(0.0, ((after[1] - before[1]) - (after[2] - before[2])) / (after[0] - before[0]))


def cpu_sample() -> tuple[float, float, float] | None:
    """(wall time, machine busy CPU seconds, this process tree's CPU seconds) now; None without ``/proc/stat``."""
    machine = cpu_seconds()
    return None if machine is None else (now(), machine[0], own_cpu_seconds())


def load_average() -> float:
    """The 1-minute load average (NaN where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


# --------------------------------------------------------------------------- markdown


def fmt_seconds(value: float) -> str:
    return f"{value:.3f}" if value < 10 else f"{value:.2f}" if value < 100 else f"{value:.1f}"


def fmt_ratio(value: float) -> str:
    return f"{value:.2f}"


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (cells' ``|`` escaped)."""

    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def header_block(result: dict[str, Any]) -> str:
    """The lines that head every generated page: date, machine, load, threads, device, command."""
    m = result["machine"]
    loads = [r["load_before"] for r in result["rounds"]] + [r["load_after"] for r in result["rounds"]]
    others = [r["other_cpu"] for r in result["rounds"] if r.get("other_cpu") is not None]
    vector = ", ".join(f"{flag} {'yes' if m[flag] else 'no'}" for flag in ("avx512f", "avx2"))
    lines = []
    if result["quick"]:
        lines.append(QUICK_HEADER)
        lines.append("")
    gpu = f" ({m['gpu']})" if m.get("gpu") else ""
    lines += [
        f"*Generated by `{result['command']}` on {result['date']}.*",
        "",
        md_table(
            ["", ""],
            [
                ["machine", f"{m['cpu']}, {m['cores']} cores ({vector})"],
                ["software", f"Python {m['python']}, torch {m['torch']}"],
                ["torch threads", m["torch_threads"]],
                ["device", result.get("device_note") or f"{m['device']}{gpu}"],
                [
                    "other processes' CPU",
                    f"{min(others):.2f} to {max(others):.2f} cores (per round: the machine's busy time from "
                    "/proc/stat minus the sides' own CPU time, over the round's wall time)"
                    if others
                    else "not measured (no /proc/stat)",
                ],
                [
                    "1-minute load",
                    f"{min(loads):.2f} to {max(loads):.2f} (before and after each round; counts the sides)",
                ],
                [
                    "rounds",
                    result.get("rounds_note")
                    or f"{len(result['rounds'])}, each side in its own fresh process, order alternating",
                ],
            ],
        ),
    ]
    if result.get("not_quiet"):
        lines += [
            "",
            f"**Machine not quiet**: other processes used more than {QUIET_OTHER_CPU} cores during round(s) "
            f"{', '.join(map(str, result['not_quiet']))}.",
        ]
    return "\n".join(lines)


def render_markdown(result: dict[str, Any]) -> str:
    """The page ``docs/benchmarks/<name>.md`` for one comparison's ``result`` (see :func:`run_comparison`)."""
    parts = [header_block(result), ""]
    if result.get("workload"):
        parts += [f"Workload: {result['workload']}", ""]
    sides = {s["name"]: s for s in result["sides"]}
    for clock in result["clocks"]:
        parts += [f"Seconds, clock {CLOCK_TEXT[clock]}:", ""]
        rows = []
        for name, side in sides.items():
            stats = result["summary"].get(name, {}).get(clock)
            if stats:
                rows.append(
                    [
                        side["label"],
                        fmt_seconds(stats["median"]),
                        f"{fmt_seconds(stats['min'])}–{fmt_seconds(stats['max'])}",
                    ]
                )
        parts += [md_table(["side", "median s", "range s"], rows), ""]
        rows = []
        for contest in result["contests"]:
            stats = contest["ratio"].get(clock)
            if stats:
                rows.append(
                    [
                        contest["label"]
                        or f"{sides[contest['baseline']]['label']} / {sides[contest['assoc']]['label']}",
                        fmt_ratio(stats["median"]),
                        f"{fmt_ratio(stats['min'])}–{fmt_ratio(stats['max'])}",
                        ", ".join(fmt_ratio(v) for v in stats["rounds"]),
                    ]
                )
        if rows:
            parts += [
                f"Ratio baseline time / assoc time (above 1: assoc takes less time), clock {clock}:",
                "",
                md_table(["contest", "median", "range", "per round"], rows),
                "",
            ]
    if result.get("checks"):
        parts += ["Results compared:", "", md_table(["check", "value"], result["checks"]), ""]
    rows = []
    for r in result["rounds"]:
        times = "; ".join(f"{name} {fmt_seconds(r['clocks'][name][result['clocks'][0]])}" for name in r["order"])
        other = r.get("other_cpu")
        other_text = "n/a" if other is None else f"{other:.2f}"
        rows.append([r["round"], other_text, f"{r['load_before']:.2f}", f"{r['load_after']:.2f}", times])
    parts += [
        f"Rounds (clock {result['clocks'][0]}, in the order run):",
        "",
        md_table(["round", "other CPU (cores)", "load before", "load after", "seconds"], rows),
    ]
    parts += ["", *(f"{note}" for note in result.get("notes", []))]
    return "\n".join(parts).rstrip() + "\n"


# --------------------------------------------------------------------------- running


def child_command(comparison: str, side: Side, spec_path: Path) -> list[str]:
    """The command of one side's child process (the side's own interpreter where it has one)."""
    return [side.python or sys.executable, "-m", "benchmarks", "--child", comparison, side.name, str(spec_path)]


def run_child(comparison: str, side: Side, spec: dict[str, Any], workdir: Path, tag: str) -> dict[str, Any]:
    """Run one side in a fresh process; return its output (``stamps``, ``clocks``, ``result``)."""
    spec_path = workdir / f"spec-{side.name}-{tag}.json"
    out_path = workdir / f"out-{side.name}-{tag}.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.update(spec.get("env", {}))
    spec = {**spec, "out": str(out_path), "spawned": now()}
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    done = subprocess.run(child_command(comparison, side, spec_path), cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode or not out_path.exists():
        raise SystemExit(f"{comparison}: side {side.name!r} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    output = json.loads(out_path.read_text(encoding="utf-8"))
    output["clocks"] = Stamps(**output["stamps"]).clocks()
    return output


def child_main(argv: Sequence[str]) -> None:
    """``python -m benchmarks --child NAME SIDE SPEC``: run one side, write its output file."""
    name, side, spec_path = argv
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    stamps = Stamps(spawned=spec["spawned"])
    threads = spec.get("threads")
    runner: Callable[..., Any] = comparison_module(name).run_side
    result = runner(side, spec, stamps, threads)
    stamps.done = stamps.done or now()
    Path(spec["out"]).write_text(json.dumps({"stamps": stamps.__dict__, "result": result}), encoding="utf-8")


def set_threads(threads: int | None) -> None:
    """torch's intra-op threads in a child (``--threads``); None keeps torch's default."""
    import torch

    if threads:
        torch.set_num_threads(threads)


def run_comparison(name: str, args: argparse.Namespace, command: str) -> dict[str, Any]:
    """Prepare, run ``args.rounds`` alternating rounds and summarise one comparison."""
    module = comparison_module(name)
    with tempfile.TemporaryDirectory(prefix=f"assoc-bench-{name}-") as tmp:
        workdir = Path(tmp)
        print(f"[{name}] preparing ...", flush=True)
        comparison, spec, cleanup = module.prepare(workdir, args)
        if args.only is not None:
            comparison = only_group(comparison, args.only, module.GROUPS[args.only])
        try:
            by_name = {s.name: s for s in comparison.sides}
            rounds: list[dict[str, Any]] = []
            outputs: dict[str, list[dict[str, Any]]] = {s.name: [] for s in comparison.sides}
            not_quiet = []
            for index in range(args.rounds):
                order = round_order([s.name for s in comparison.sides], index)
                before = load_average()
                sample = cpu_sample()
                clocks = {}
                for side_name in order:
                    side_spec = (
                        module.side_spec(side_name, spec, workdir, index) if hasattr(module, "side_spec") else spec
                    )
                    output = run_child(name, by_name[side_name], side_spec, workdir, str(index))
                    outputs[side_name].append(output)
                    clocks[side_name] = output["clocks"]
                after = load_average()
                other = other_cpu(sample, cpu_sample())
                rounds.append(
                    {
                        "round": index + 1,
                        "order": order,
                        "load_before": before,
                        "load_after": after,
                        "other_cpu": other,
                        "clocks": clocks,
                    }
                )
                times = ", ".join(f"{s} {clocks[s][comparison.clocks[0]]:.2f} s" for s in order)
                other_text = "n/a" if other is None else f"{other:.2f} cores"
                print(
                    f"[{name}] round {index + 1}: {times}; other processes {other_text}; "
                    f"load {before:.2f} -> {after:.2f}",
                    flush=True,
                )
                if other is not None and other > QUIET_OTHER_CPU:
                    not_quiet.append(index + 1)
                    print(
                        f"[{name}] WARNING: machine not quiet: other processes used {other:.2f} cores during round "
                        f"{index + 1} (> {QUIET_OTHER_CPU}); its timings are not a measurement",
                        file=sys.stderr,
                        flush=True,
                    )
            checks = module.checks({s: outs[0]["result"] for s, outs in outputs.items()}, spec)
        finally:
            if cleanup is not None:
                cleanup()
    summary_ = {
        s: {c: summary([o["clocks"][c] for o in outs]) for c in comparison.clocks if c in outs[0]["clocks"]}
        for s, outs in outputs.items()
    }
    contests = []
    for contest in comparison.contests:
        per_clock = {}
        for clock in comparison.clocks:
            a = [o["clocks"].get(clock) for o in outputs[contest.assoc]]
            b = [o["clocks"].get(clock) for o in outputs[contest.baseline]]
            if None in a or None in b:
                continue
            values = ratios(b, a)  # type: ignore[arg-type]
            per_clock[clock] = {**summary(values), "rounds": values}
        contests.append({**contest.__dict__, "ratio": per_clock})
    return {
        "name": comparison.name,
        "title": comparison.title if args.only is None else f"{comparison.title} ({args.only} sides only)",
        "only": args.only,
        "quick": args.quick,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "machine": machine_info(args.device, args.threads),
        "workload": comparison.workload,
        "clocks": list(comparison.clocks),
        "sides": [{"name": s.name, "label": s.label} for s in comparison.sides],
        "contests": contests,
        "summary": summary_,
        "rounds": rounds,
        "not_quiet": not_quiet,
        "checks": checks,
        "notes": comparison.notes,
        "device_note": comparison.device_note,
        # what each side reported beyond its results (threads, CPU time, ...), per round
        "side_info": {
            s: [{k: v for k, v in o["result"].items() if k not in BULKY} for o in outs] for s, outs in outputs.items()
        },
    }


def write_outputs(result: dict[str, Any], docs_dir: Path, results_dir: Path) -> tuple[Path, Path]:
    """Write ``<docs_dir>/<name>.md`` and ``<results_dir>/<name>.json``; return both paths."""
    docs_dir.mkdir(parents=True, exist_ok=True)
    results_dir.mkdir(parents=True, exist_ok=True)
    md = docs_dir / f"{result['name']}.md"
    raw = results_dir / f"{result['name']}.json"
    md.write_text(render_markdown(result), encoding="utf-8")
    raw.write_text(json.dumps(result, indent=1, default=str) + "\n", encoding="utf-8")
    return md, raw


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line of ``python -m benchmarks``."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="assoc against the strongest straightforward baseline, each side in its own fresh process, "
        "in alternating rounds; writes docs/benchmarks/<name>.md and benchmarks/results/<name>.json",
    )
    parser.add_argument(
        "comparisons",
        nargs="*",
        metavar="NAME",
        help=f"which comparisons to run (default: all of {', '.join(COMPARISONS)})",
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (pairs of runs), default 3")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test, not a measurement")
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda", "auto"),
        default="auto",
        help="torch device of every side (auto: cuda when available)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch.set_num_threads(N) in every child (default: torch's own default)",
    )
    parser.add_argument(
        "--only",
        metavar="GROUP",
        default=None,
        help="run only a comparison's group of sides (fmat: one-query; pll: one-sentence): the fresh-process "
        "first-result sides, in minutes; written as <name>-<group>.md/.json beside the full comparison's",
    )
    parser.add_argument("--docs-dir", type=Path, default=ROOT / "docs" / "benchmarks")
    parser.add_argument("--results-dir", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument(
        "--minicons-venv",
        type=Path,
        default=None,
        help="pll: the virtual environment with minicons (created when missing)",
    )
    args = parser.parse_args(argv)
    unknown = [c for c in args.comparisons if c not in COMPARISONS]
    if unknown:
        parser.error(f"unknown comparison(s) {', '.join(unknown)}; choose from {', '.join(COMPARISONS)}")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be at least 1")
    args.comparisons = list(dict.fromkeys(args.comparisons)) or list(COMPARISONS)
    if args.only is not None:
        lacking = [c for c in args.comparisons if args.only not in side_groups(c)]
        if lacking:
            offered = "; ".join(f"{c}: {', '.join(side_groups(c)) or 'none'}" for c in lacking)
            parser.error(f"--only {args.only}: not a group of {', '.join(lacking)} (groups: {offered})")
    return args


def side_groups(name: str) -> dict[str, tuple[str, ...]]:
    """The groups of sides ``--only`` may pick in comparison ``name`` (its module's ``GROUPS``)."""
    return dict(getattr(comparison_module(name), "GROUPS", {}))


def only_group(comparison: Comparison, group: str, names: Sequence[str]) -> Comparison:
    """``comparison`` with only the sides ``names`` (those it has) and the contests between two of them.

    Named ``<name>-<group>``, so its page and raw numbers are written beside the full comparison's,
    never over them.
    """
    keep = [s for s in comparison.sides if s.name in names]
    kept = {s.name for s in keep}
    contests = [c for c in comparison.contests if c.assoc in kept and c.baseline in kept]
    return replace(comparison, name=f"{comparison.name}-{group}", sides=keep, contests=contests)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of ``python -m benchmarks``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        child_main(argv[1:])
        return
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    args = parse_args(argv)
    args.device = resolve_device(args.device)
    command = "python -m benchmarks " + shlex.join(argv) if argv else "python -m benchmarks"
    for name in args.comparisons:
        started = time.perf_counter()
        result = run_comparison(name, args, command.strip())
        md, raw = write_outputs(result, args.docs_dir, args.results_dir)
        print(f"[{name}] done in {time.perf_counter() - started:.0f} s: {md} and {raw}", flush=True)
        print(render_markdown(result), flush=True)

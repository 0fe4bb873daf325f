"""Atomic writes and progress bars."""

from __future__ import annotations

import io
import os
import re
import stat
import sys

import pytest

from assoc.infra.io import atomic_path, atomic_write
from assoc.infra.progress import bar, default_enabled
from assoc.table.files import write_table
from assoc.table.schema import from_records


def test_atomic_write_replaces_only_on_success(tmp_path):
    path = tmp_path / "f.txt"
    with atomic_write(path) as handle:
        handle.write("first")
    with pytest.raises(ValueError):
        with atomic_write(path) as handle:
            handle.write("half")
            raise ValueError("interrupted")
    assert path.read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]
    with pytest.raises(ValueError, match="for writing only"):
        with atomic_write(path, "a"):
            pass


def test_atomic_path(tmp_path):
    target = tmp_path / "sub" / "g.bin"
    with atomic_path(target) as tmp:
        tmp.write_bytes(b"x")
        assert not target.exists()
    assert target.read_bytes() == b"x"


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_a_bar_on_a_terminal_and_plain_lines_elsewhere(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert default_enabled() is True
    off = bar(range(3), total=3, desc="x", enabled=False)
    assert list(off) == [0, 1, 2] and off.disable
    assert sys.stderr.getvalue() == ""
    piped = bar(range(3), total=3, desc="scoring", unit="item")
    assert list(piped) == [0, 1, 2]
    assert sys.stderr.getvalue().splitlines() == ["scoring: 3 items to do", sys.stderr.getvalue().splitlines()[1]]
    assert sys.stderr.getvalue().splitlines()[1].startswith("scoring: done, 3 items in ")
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    shown = bar(range(3), total=3, desc="scoring")
    list(shown)
    shown.close()
    assert "scoring" in tty.getvalue() and "\r" in tty.getvalue()  # tqdm redraws in place


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_atomic_writes_get_the_umask_mode(tmp_path):
    from assoc.infra.io import atomic_path, atomic_write

    old = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "a.txt") as handle:
            handle.write("x")
        with atomic_path(tmp_path / "b.bin") as path:
            path.write_bytes(b"x")
        table = from_records([{"model": "m", "target": "t", "attribute": "a", "value": 1.0}], scorer="s", measure="m")
        write_table(table, tmp_path / "t.csv")
        os.umask(0o077)
        with atomic_write(tmp_path / "private.txt") as handle:
            handle.write("x")
    finally:
        os.umask(old)
    for name in ("a.txt", "b.bin", "t.csv"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    assert stat.S_IMODE((tmp_path / "private.txt").stat().st_mode) == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_plain_lines_come_at_the_interval_with_rate_and_time_left(monkeypatch):
    import time

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setenv("ASSOC_PROGRESS_INTERVAL", "0.05")
    outer = bar(total=8, desc="fmat", unit="item", initial=2, note="4 units, 1 from the cache")
    inner = bar(total=5, desc="log P bert", unit="seq")
    for _ in range(3):
        outer.update(2)
        inner.update(1)
        # the ticker writes while nothing is updated, too: wait for its next line (no clock in the assert)
        written = len(sys.stderr.getvalue().splitlines())
        deadline = time.monotonic() + 60
        while len(sys.stderr.getvalue().splitlines()) == written and time.monotonic() < deadline:
            time.sleep(0.01)
    inner.close()
    outer.close()
    lines = sys.stderr.getvalue().splitlines()
    assert lines[0] == "fmat: 8 items to do, 2 done before (4 units, 1 from the cache)"
    assert lines[-1].startswith("fmat: done, 8 items in ")
    middle = lines[1:-1]
    assert len(middle) >= 3
    for line in middle:
        # the outermost meter's done/total; the innermost one's count after it; rate over fresh work only
        match = re.fullmatch(
            r"fmat: (\d)/8 items \((\d+)%\), ([\d.]+) item/s, about (\d+)s left, \ds so far; log P bert: \d/5 seqs",
            line,
        )
        assert match, line
        done, percent, rate = int(match[1]), int(match[2]), float(match[3])
        assert percent == round(100 * done / 8) and rate > 0


def test_interruption_message_says_what_is_kept():
    from assoc.infra.progress import interruption_message

    kept = bar(total=9, desc="pll", unit="item", enabled=False, kept="the cache (c)")
    kept.update(4)
    assert interruption_message() == (
        "pll: 4 of 9 items done, kept in the cache (c); "
        "run the same command again to resume (finished work is not redone)"
    )
    kept.close()  # closed unfinished (Ctrl-C unwinds the stack before the command line reports)
    assert interruption_message().startswith("pll: 4 of 9 items done")
    lost = bar(total=3, desc="weat", unit="design", enabled=False)
    lost.update(1)
    lost.close()
    assert (
        interruption_message() == "weat: 1 of 3 designs done; nothing is kept, so running the command again starts over"
    )
    finished = bar(total=2, desc="weat", unit="design", enabled=False)
    finished.update(2)
    finished.close()
    assert interruption_message() == ""


def test_nested_terminal_bars_close_in_any_order_and_the_outer_one_is_reported(monkeypatch):
    from assoc.infra.progress import interruption_message

    monkeypatch.setattr(sys, "stderr", _Tty())
    outer = bar(total=4, desc="fmat", unit="item", kept="the cache (c)")
    inner = bar(total=4, desc="log P", unit="seq")  # tqdm bars compare equal by count: identity must decide
    outer.update(1)
    inner.update(1)
    assert interruption_message().startswith("fmat: 1 of 4 items done")
    inner.close()
    outer.close()
    assert interruption_message().startswith("fmat: 1 of 4 items done, kept in the cache (c)")


def test_a_notebook_gets_a_bar_not_lines(monkeypatch):
    import types

    from assoc.infra.progress import on_terminal

    stream = type("OutStream", (io.StringIO,), {"__module__": "ipykernel.iostream"})()
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    monkeypatch.setattr(sys, "stderr", stream)
    assert on_terminal()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not on_terminal()


def test_the_rate_leaves_out_the_start_up(monkeypatch):
    import types

    from assoc.infra import progress

    clock = [100.0]
    monkeypatch.setattr(progress, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    meter = bar(total=100, desc="pll", unit="item", enabled=True)
    clock[0] += 20.0  # imports and loading the model
    meter.update(10)  # the first unit: 10 items after 20 s
    assert meter.rate() == 10 / 20.0  # one step so far: all the time since the start
    clock[0] += 2.0
    meter.update(10)
    clock[0] += 3.0
    meter.update(10)
    assert meter.rate() == 20 / 5.0  # 20 items in the 5 s after the first step
    assert meter.line() == "pll: 30/100 items (30%), 4 item/s, about 18s left, 25s so far"
    meter.close()

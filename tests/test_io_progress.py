"""Atomic writes and progress bars."""

from __future__ import annotations

import io
import os
import stat
import sys

import pytest

from assoc.infra.io import atomic_path, atomic_write
from assoc.infra.progress import bar, default_enabled
from assoc.table.files import from_records, write_table


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


def test_progress_only_on_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert default_enabled() is False
    quiet = bar(range(3), total=3, desc="x")
    assert list(quiet) == [0, 1, 2] and quiet.disable
    assert sys.stderr.getvalue() == ""
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    assert default_enabled() is True
    shown = bar(range(3), total=3, desc="scoring")
    list(shown)
    shown.close()
    assert "scoring" in tty.getvalue()


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

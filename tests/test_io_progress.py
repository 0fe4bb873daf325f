"""Atomic writes and progress bars."""

from __future__ import annotations

import io
import sys

import pytest

from assoc.infra.io import atomic_path, atomic_write
from assoc.infra.progress import bar, default_enabled


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

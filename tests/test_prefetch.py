"""assoc.infra.prefetch: imports on a background thread."""

from __future__ import annotations

import sys
import textwrap

from assoc.infra.prefetch import import_in_background


def test_imports_in_order_on_a_thread(tmp_path, monkeypatch):
    (tmp_path / "prefetch_first.py").write_text("import sys\nORDER = ['first']\n", encoding="utf-8")
    (tmp_path / "prefetch_second.py").write_text(
        textwrap.dedent(
            """
            import threading
            import prefetch_first
            prefetch_first.ORDER.append('second')
            THREAD = threading.current_thread().name
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    thread = import_in_background("prefetch_first", "prefetch_second")
    assert thread is not None and not thread.daemon
    thread.join(timeout=30)
    second = sys.modules["prefetch_second"]
    assert sys.modules["prefetch_first"].ORDER == ["first", "second"]
    assert second.THREAD == thread.name != "MainThread"
    import prefetch_second  # the main thread gets the same module object

    assert prefetch_second is second
    assert import_in_background("prefetch_first", "prefetch_second") is None  # nothing left to import
    for name in ("prefetch_first", "prefetch_second"):
        monkeypatch.delitem(sys.modules, name)


def test_a_failing_import_is_left_to_the_caller(tmp_path, monkeypatch):
    (tmp_path / "prefetch_broken.py").write_text("raise ImportError('needs a missing library')\n", encoding="utf-8")
    (tmp_path / "prefetch_after.py").write_text("X = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    thread = import_in_background("prefetch_broken", "prefetch_after")
    assert thread is not None
    thread.join(timeout=30)
    assert "prefetch_broken" not in sys.modules and "prefetch_after" not in sys.modules  # stops at the failure
    try:
        import prefetch_broken  # noqa: F401
    except ImportError as exc:
        assert "needs a missing library" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("the caller's import must raise")

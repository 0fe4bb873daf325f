"""A full disk is one line naming the path; the previous output is kept and the cache stays consistent (issue 46).

Case 5 of issue 46: a full disk gave an ``OSError`` traceback for ``--out`` and for the cache in
the middle of a run. The real tests fill the disk for real, without root: a child process whose
file-size limit (``RLIMIT_FSIZE``, ``ulimit -f``) is lower than what it writes gets ``EFBIG`` from
the operating system on the write that crosses it, as a full disk gives ``ENOSPC`` (``SIGXFSZ``
is ignored, as a shell's ``ulimit -f`` leaves the write to fail). The fast tests make ``fsync``
and ``write`` raise ``ENOSPC`` in this process.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import assoc
from assoc.errors import OutputError
from assoc.infra.cache import Cache

HERE = Path(__file__).parent

#: Runs ``assoc.cli.main(argv)`` with a file-size limit of ``limit`` bytes (SIGXFSZ ignored: the write fails).
LIMITED = """
import resource, signal, sys
limit = int(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
sys.path.insert(0, sys.argv[2])
from assoc.cli import main
main(sys.argv[3:])
"""


def run_limited(limit: int | None, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``assoc ARGV`` in a child process; with ``limit``, no file it writes may grow beyond ``limit`` bytes."""
    if limit is None:
        code, limit = "import sys; sys.path.insert(0, sys.argv[2]); from assoc.cli import main; main(sys.argv[3:])", 0
    else:
        code = LIMITED
    return subprocess.run(
        [sys.executable, "-c", code, str(limit), str(HERE), *argv],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


pytestmark_slow = pytest.mark.slow


@pytestmark_slow
@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_out_on_a_full_disk_is_one_line_and_the_previous_output_is_kept(tmp_path):
    out = tmp_path / "weat.csv"
    first = run_limited(None, "score", "--scorer", "weat", "--stimuli", "caliskan:weat1", "--out", str(out))
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(before) == {"weat.csv", "weat.csv.provenance.json"}
    # The same study in CSV is some 100 kB; the disk has room for 20 kB per file.
    again = run_limited(
        20_000,
        "score",
        "--scorer",
        "weat",
        "--stimuli",
        "caliskan:weat1",
        "-o",
        "case=lower",
        "--no-progress",
        "--out",
        str(out),
    )
    assert again.returncode == 2, again.stderr
    errors = [line for line in again.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in again.stderr, again.stderr
    assert errors[0].startswith(f"error: cannot write {out}: File too large"), errors[0]
    assert again.stderr.rstrip().endswith(errors[0])
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # the previous pair, byte for byte
    assert not leftovers(tmp_path)
    assert len(assoc.read_table(out)) > 0  # and it still reads, with its provenance
    # an analysis' --out (Parquet) on the same full disk: one line, nothing left
    analysed = run_limited(20_000, "analyze", "standardize", "--table", str(out), "--out", str(tmp_path / "z.parquet"))
    assert analysed.returncode == 2 and analysed.stderr.startswith("error: cannot write"), analysed.stderr
    assert not (tmp_path / "z.parquet").exists() and not leftovers(tmp_path)


@pytestmark_slow
@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_the_cache_filling_up_mid_run_is_one_line_and_the_run_resumes(tmp_path):
    """Units of short words are stored; the first unit of long words does not fit: one line, a consistent cache."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "units_plugin.py").write_text(
        "import assoc\nimport unit_scorers\nassoc.plugins.register(unit_scorers, name='units')\n", encoding="utf-8"
    )
    stimuli = tmp_path / "s.yaml"
    long_words = [f"{'w' * 2000}{i}" for i in range(4)]  # each unit of them: a pack of some 4 kB
    stimuli.write_text(
        json.dumps(
            {
                "designs": [
                    {"name": "short", "target": {"T": ["ant", "bee"]}, "attribute": {"A": ["x", "y"]}},
                    {"name": "long", "target": {"L": long_words}, "attribute": {"B": ["z", "zz"]}},
                ]
            }
        ),
        encoding="utf-8",
    )
    cache = tmp_path / "cache"
    log = tmp_path / "calls.log"
    env = {"ASSOC_CACHE_DIR": str(cache), "ASSOC_TEST_UNIT_LOG": str(log), "PYTHONPATH": f"{site}:{HERE}"}
    argv = ["score", "--scorer", "length_units", "--stimuli", str(stimuli), "-o", "per_unit=2", "--no-progress"]
    code = "import units_plugin  # noqa\n"
    full = subprocess.run(
        [sys.executable, "-c", code + LIMITED, "3000", str(HERE), *argv, "--out", str(tmp_path / "t.csv")],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )
    assert full.returncode == 2, full.stderr
    lines = full.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in full.stderr, full.stderr
    assert lines[0].startswith(f"error: cannot write {cache}") and "File too large" in lines[0], lines[0]
    assert not (tmp_path / "t.csv").exists()
    # consistent: no half-written file, no claim left, and what was stored reads back
    assert not leftovers(cache) and not list(cache.rglob("claim-*.lock"))
    stored = [len(ns) for ns in Cache(cache).namespaces(kind="units")]
    assert stored == [2]  # the two units of short words
    computed_before = log.read_text().count("unit ")
    # with room again, the run resumes: the stored units are read, the rest computed, the table complete
    again = subprocess.run(
        [sys.executable, "-c", code + "import sys\nfrom assoc.cli import main\nmain(sys.argv[1:])", *argv,
         "--out", str(tmp_path / "t.csv")],
        capture_output=True, text=True, env={**os.environ, **env}, timeout=300,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    table = assoc.read_table(tmp_path / "t.csv")
    assert len(table) == 2 * 2 + 4 * 2
    assert (table["value"] == table["target"].str.len() - table["attribute"].str.len()).all()
    assert log.read_text().count("unit ") - computed_before == 4  # the four units of long words only


# -- fast: ENOSPC raised in this process -----------------------------------------------------------------


def no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_write_table_on_a_full_disk_keeps_the_previous_files(tmp_path, monkeypatch, suffix):
    table = assoc.from_records([{"target": "a", "attribute": "b", "value": 1.0}], scorer="handmade")
    out = tmp_path / f"t{suffix}"
    assoc.write_table(assoc.set_provenance(table.copy(), {"kind": "score", "scorer": "handmade"}), out)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    bigger = pd.concat([table] * 3, ignore_index=True)
    import pyarrow.parquet as pq

    monkeypatch.setattr(os, "fsync", no_space)  # the text formats' data and sidecar, and every atomic write
    monkeypatch.setattr(pq, "write_table", no_space)  # Parquet's writer
    with pytest.raises(OutputError) as caught:
        assoc.write_table(assoc.set_provenance(bigger, {"kind": "score", "scorer": "x"}), out)
    assert str(caught.value).startswith(f"cannot write {out}: No space left on device")
    assert "\n" not in str(caught.value)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert not leftovers(tmp_path)


def test_a_sidecar_that_does_not_fit_keeps_the_previous_pair(tmp_path, monkeypatch):
    import assoc.table.files as files

    out = tmp_path / "t.csv"
    table = assoc.from_records([{"target": "a", "attribute": "b", "value": 1.0}], scorer="handmade")
    assoc.write_table(assoc.set_provenance(table.copy(), {"kind": "score", "scorer": "handmade"}), out)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    real = files.atomic_write

    def sidecar_fails(path, *args, **kwargs):
        if str(path).endswith(".provenance.json"):
            raise OutputError(f"cannot write {path}: No space left on device")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(files, "atomic_write", sidecar_fails)
    with pytest.raises(OutputError, match="provenance.json: No space"):
        assoc.write_table(assoc.set_provenance(table.assign(value=2.0), {"kind": "score", "scorer": "y"}), out)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert not leftovers(tmp_path)


def test_a_cache_write_on_a_full_disk_is_one_line_and_the_namespace_stays_consistent(tmp_path, monkeypatch):
    namespace = Cache(tmp_path).namespace(kind="units", scorer="s", model="m")
    namespace.put("kept", [1.0])
    real_write = os.write

    def write(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)
    monkeypatch.setattr(os, "write", write)
    with pytest.raises(OutputError) as caught:
        namespace.put("lost", [2.0])
    monkeypatch.setattr(os, "write", real_write)
    monkeypatch.undo()
    message = str(caught.value)
    assert message.startswith(f"cannot write {namespace.directory}") and "No space left on device" in message
    assert namespace.get("lost") is None  # not taken for stored
    fresh = Cache(tmp_path).namespace(kind="units", scorer="s", model="m")
    assert fresh.keys() == ["kept"] and not leftovers(tmp_path)
    # a memo only saves work: a full disk stores nothing and raises nothing
    monkeypatch.setattr(os, "fsync", no_space)
    Cache(tmp_path).remember("kind", ["k"], 1)
    monkeypatch.undo()
    assert Cache(tmp_path).recall("kind", ["k"]) is None

"""Freeze the chat scorers' tables and run reports (``tests/frozen.py``) and a response cache.

Run once, at commit 97e4179 (before the chat engine moved into the core, issue 41), from the
repository root::

    git worktree add <before> 97e4179
    cp plugins/chat_listing/tests/frozen.py <before>/plugins/chat_listing/tests/
    cd <before> && <venv>/bin/python plugins/chat_listing/tests/data/frozen/make_frozen.py <out>

(with the plugin installed from that checkout, or ``PYTHONPATH`` pointing at its ``src`` folders), and
copy ``<out>`` here. It writes ``<scenario>.json`` for every scenario (a live run against the test
server) and ``cache/`` plus ``cached_<scenario>.json`` (the scenarios of ``frozen.CACHED`` answered
by a server on port ``frozen.CACHE_PORT``, then run again offline from that cache).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import frozen  # noqa: E402


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, scenario in frozen.SCENARIOS.items():
            with frozen.make_server(scenario["server"]) as server:
                table, report, said, keys = frozen.run(name, server.url, work / name / "cache", work / name)
            result = frozen.normalise(table, report, said, keys, server.url)
            (out / f"{name}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
        cache = out / "cache"
        shutil.rmtree(cache, ignore_errors=True)
        for name in frozen.CACHED:
            scenario = frozen.SCENARIOS[name]
            with frozen.make_server(scenario["server"], port=frozen.CACHE_PORT, faults=False) as server:
                frozen.run(name, server.url, cache, work / f"cached-{name}")
        for name in frozen.CACHED:
            table, report, said, keys = frozen.run(name, frozen.CACHE_URL, cache, work / f"cached-{name}", offline=True)
            result = frozen.normalise(table, report, said, keys, frozen.CACHE_URL)
            (out / f"cached_{name}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))

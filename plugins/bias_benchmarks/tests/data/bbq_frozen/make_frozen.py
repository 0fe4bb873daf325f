"""Freeze the tables of ``chat_bbq`` and ``clm_bbq`` as they were before BBQ became one scorer (issue 41).

Run once, at commit c8def10 (main before the move: ``chat_bbq`` and ``clm_bbq`` in plugins/chat_listing),
from the repository root of a checkout of that commit, with its virtualenv::

    .venv/bin/python <this file> <out>

and copy ``<out>`` here. Each scenario of :data:`SCENARIOS` runs on a BBQ directory of 12 Age and 8 Religion
examples (the first lines of the bundled files): the chat scenarios against the local test server (one
request in flight, so replies arrive in plan order), the causal ones on a seeded tiny GPT-2
(``assoc.testing.tiny_clm.build_gpt2_bpe(path, seed=0, positions=256)``). ``<scenario>.json`` holds the
table (columns, dtypes, rows; NaN as null) with what depends on the machine replaced: the server's
address (``<server>``), each response id (``key-`` + SHA-256 of model, messages, parameters and sample:
the port is part of the real key) and the tiny model's folder (``<model>``). ``test_bbq_frozen.py``
runs the same scenarios on today's code (the ``chat_bbq``/``clm_bbq`` aliases and ``bbq``) and compares.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

from assoc_chat_listing.bbq import items as bbq_items
from assoc_chat_listing.bbq.testing import bbq_responder, read_options

import assoc
from assoc.testing.openai_server import FAST_RETRIES, ChatServer


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big")


def bbq_mixed(body: dict[str, Any]) -> str:
    """Replies of every reading (as plugins/chat_listing/tests/frozen.py): letters, texts, refusals, ..."""
    prompt = str(body["messages"][-1]["content"])
    letters, options = read_options(prompt)
    pick = _digest(prompt) % 3
    kind = _digest("kind" + prompt) % 8
    if kind == 0:
        return "I'm sorry, I can't answer questions that rely on stereotypes."
    if kind == 1:
        return f"Either {options[0]} or {options[1]}."
    if kind == 2:
        return "Hmm, hard to say."
    style = ("letter", "paren", "sentence", "text", "bold", "letter")[kind - 3 if kind >= 3 else 0]
    return bbq_responder(lambda shown: pick, style=style)(body)


SCENARIOS: dict[str, dict[str, Any]] = {
    "chat_samples": {
        "scorer": "chat_bbq",
        "options": {
            "samples": 2,
            "seed": 1,
            "option_order": "reversed",
            "letters": ["X", "Y", "Z"],
            "system_prompt": "Answer briefly.",
        },
    },
    "clm_sum": {"scorer": "clm_bbq", "options": {}},
    "clm_char_lmeval": {"scorer": "clm_bbq", "options": {"normalize": "char", "unknown": "lmeval"}},
    "clm_token_auto": {
        "scorer": "clm_bbq",
        "options": {"normalize": "token", "bos": "auto", "prompt": "{context} {question} Answer:"},
    },
}


def bbq_directory(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for category, n in (("Age", 12), ("Religion", 8)):
        with gzip.open(bbq_items.bundled_directory() / f"{category}.jsonl.gz", "rt", encoding="utf-8") as handle:
            lines = [next(handle) for _ in range(n)]
        (folder / f"{category}.jsonl").write_text("".join(lines), encoding="utf-8")
    return folder


def plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return plain(value.item())
    return value


def main(out: Path) -> None:
    from assoc.testing.tiny_clm import build_gpt2_bpe

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        stimuli = f"bbq:{bbq_directory(work / 'bbq')}"
        model = str(build_gpt2_bpe(work / "gpt2", seed=0, positions=256))
        for name, scenario in SCENARIOS.items():
            keys: dict[str, str] = {}
            if scenario["scorer"] == "chat_bbq":
                with ChatServer(responder=bbq_mixed) as server:
                    options = {
                        **FAST_RETRIES,
                        "concurrency": 1,
                        "base_url": server.url,
                        "cache_dir": str(work / name),
                        **scenario["options"],
                    }
                    table = assoc.score("chat_bbq", stimuli, ["test-model"], progress=False, **options)
                    scorer = assoc.get_scorer("chat_bbq")(**options)
                    for request in scorer.build_requests(assoc.Stimuli.load(stimuli), ["test-model"]):
                        identity = {
                            "model": request.model,
                            "messages": [dict(m) for m in request.messages],
                            "params": dict(request.params),
                            "sample": request.sample,
                        }
                        keys[request.key] = (
                            "key-" + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
                        )
                    url = server.url
            else:
                table = assoc.score("clm_bbq", stimuli, [model], progress=False, **scenario["options"])
                url = None
            data = [[plain(v) for v in row] for row in table.itertuples(index=False, name=None)]
            result = {
                "columns": [str(c) for c in table.columns],
                "dtypes": [str(t) for t in table.dtypes],
                "data": data,
            }
            text = json.dumps(result, ensure_ascii=False)
            for key, canonical in keys.items():
                text = text.replace(key, canonical)
            if url is not None:
                text = text.replace(url, "<server>")
            text = text.replace(model, "<model>")
            (out / f"{name}.json").write_text(json.dumps(json.loads(text), indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))

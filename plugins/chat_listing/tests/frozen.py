"""Scenarios whose tables and run reports were frozen from the chat scorers as they were before the
chat engine moved into the core (issue 41): the same scenarios run today must give the same tables and
reports (``test_frozen_tables.py``).

``data/frozen/make_frozen.py`` ran them at commit 97e4179 (before the move) and wrote
``data/frozen/*.json``; it also left ``data/frozen/cache``: a response cache written by that code,
which today's code must still find (every request from the cache, nothing sent).

Every scenario runs against the local OpenAI-compatible test server with one request in flight
(``concurrency=1``), so requests reach the server in plan order and scripted faults hit the same
requests on every run. What depends on the machine or the moment is taken out before comparing
(:func:`normalise`): the server's port (in ``endpoint`` and in every cache key, hence in
``response_id``: keys are replaced by a digest of model, messages, parameters and sample), seconds,
and the cache directory.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import assoc

try:  # after issue 41: the server lives in the core
    from assoc.testing.openai_server import FAST_RETRIES, ChatServer
except ImportError:  # the code the outputs were frozen from
    from assoc.testing.openai_server import FAST_RETRIES, ChatServer  # type: ignore[no-redef]

from assoc_chat_listing.word_association.testing import association_responder

FROZEN = Path(__file__).parent / "data" / "frozen"
#: The port of the server the frozen cache was written against (its endpoint is part of every key).
CACHE_PORT = 47613
CACHE_URL = f"http://127.0.0.1:{CACHE_PORT}/v1"

STIMULI: dict[str, Any] = {
    "name": "chat-example",
    "designs": [
        {
            "name": "groups",
            "target": {"occupation": ["nurses", "engineers", "musicians"], "religion": ["Christians", "Hindus"]},
        }
    ],
}
WA_STIMULI: dict[str, Any] = {
    "name": "wa-example",
    "designs": [
        {
            "name": "flowers",
            "target": {"flowers": ["Rose", "tulip"], "insects": ["ant", "wasp"]},
            "attribute": {"pleasant": ["love", "peace", "joy"], "unpleasant": ["hate", "war", "pain"]},
        },
        {
            "name": "careers",
            "target": {"male": ["john", "paul"], "female": ["amy", "lisa"]},
            "attribute": {"career": ["office", "salary"], "family": ["home", "children"]},
        },
    ],
}
AFFINITY = {"love": {"rose": 2.0, "tulip": 2.0}, "war": {"ant": 1.5, "wasp": 3.0}, "office": {"john": 1.0}}


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big")


def _user(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def wa_mixed(body: dict[str, Any]) -> str:
    """Word-association replies of every status: full, partial, a refusal, unparseable text."""
    prompt = _user(body)
    full = association_responder(AFFINITY, seed=1, style="numbered" if _digest(prompt) % 2 else "plain")(body)
    kind = _digest(prompt) % 7
    if kind == 0:
        return "I'm sorry, but I can't help with sorting people into groups."
    if kind == 1:
        return "\n".join(full.splitlines()[:3])
    if kind == 2:
        return "These words are hard to pair."
    return full


RESPONDERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "wa_mixed": wa_mixed,
}

LISTING_REPLIES = {
    "describe Hindus": "I'm sorry, but I cannot provide characteristics for Hindus, as it is not appropriate.",
    "who are nurses": "Mostly positively, I would say.",
    "describe engineers": (
        "I cannot generalize about a group. However, here are some traits people associate with them: devout, "
        "modest, family-oriented"
    ),
    "who are engineers": "Somewhere between 2 and 4.",
}

#: name -> scorer, stimuli, models, options, server settings (the BBQ scenarios moved to plugins/bias_benchmarks).
SCENARIOS: dict[str, dict[str, Any]] = {
    "listing_both": {
        "scorer": "chat_listing",
        "stimuli": STIMULI,
        "models": ["gpt-4o-mini"],
        "options": {"task": "both", "n_items": 5, "samples": 2, "seed": 3},
        "server": {
            "replies": LISTING_REPLIES,
            "shapes": {"musicians": "preamble"},
            "faults": [
                {"times": 1, "status": 400, "match": "describe Christians"},
                {"times": 3, "empty": True, "match": "who are Hindus"},
            ],
        },
    },
    "listing_two_models": {
        "scorer": "chat_listing",
        "stimuli": STIMULI,
        "models": ["model-a", "model-b"],
        "options": {"n_items": 3, "max_tokens": 50, "listing_prompt": "robustness", "system_prompt": ""},
        "server": {
            "shape": "comma",
            "replies": {"describe nurses": "kind, kind, smart and brave", "describe Hindus": "1. warm\n2. kind"},
        },
    },
    "listing_dry_run": {
        "scorer": "chat_listing",
        "stimuli": STIMULI,
        "models": ["gpt-4o-mini"],
        "options": {"task": "both", "n_items": 5, "samples": 2, "dry_run": True},
        "server": {},
    },
    "word_association": {
        "scorer": "chat_word_association",
        "stimuli": WA_STIMULI,
        "models": ["gpt-4o"],
        "options": {"samples": 3, "max_tokens": 200},
        "server": {"responder": "wa_mixed", "faults": [{"times": 1, "status": 400}]},
    },
}
#: The scenarios whose responses make up the frozen cache (run without faults, against CACHE_URL).
CACHED = ("listing_both", "word_association")


def make_server(settings: dict[str, Any], *, port: int = 0, faults: bool = True) -> ChatServer:
    """The test server of a scenario (not started)."""
    responder = RESPONDERS[settings["responder"]] if "responder" in settings else None
    server = ChatServer(
        shape=settings.get("shape", "numbered"),
        shapes=dict(settings.get("shapes", {})),
        replies=dict(settings.get("replies", {})),
        responder=responder,
        port=port,
    )
    for fault in settings.get("faults", []) if faults else []:
        server.fail(**fault)
    return server


def stimuli_of(scenario: dict[str, Any], workdir: Path) -> Any:
    """The scenario's stimuli argument."""
    return scenario["stimuli"]


def run(
    name: str, url: str, cache_dir: Path, workdir: Path, **extra: Any
) -> tuple[Any, dict[str, Any], list[str], dict[str, str]]:
    """Run scenario ``name`` against ``url``: (table, run report, warnings, cache key -> canonical id)."""
    scenario = SCENARIOS[name]
    stimuli = stimuli_of(scenario, workdir)
    options = {
        **FAST_RETRIES,
        "concurrency": 1,
        "base_url": url,
        "cache_dir": str(cache_dir),
        **scenario["options"],
        **extra,
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = assoc.score(scenario["scorer"], stimuli, scenario["models"], progress=False, **options)
    said = [
        f"{type(w.message).__name__}: {w.message}" for w in caught if not issubclass(w.category, DeprecationWarning)
    ]
    scorer = assoc.get_scorer(scenario["scorer"])(**{k: v for k, v in options.items() if k != "dry_run"})
    keys = {}
    for request in scorer.build_requests(assoc.Stimuli.load(stimuli), scenario["models"]):
        identity = {"model": request.model, "messages": [dict(m) for m in request.messages]}
        identity.update(params=dict(request.params), sample=request.sample)
        keys[request.key] = "key-" + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
    return table, dict(table.attrs["assoc"]["run"]), said, keys


#: Run-report entries that depend on the machine or the moment.
VOLATILE = ("cache_dir", "seconds_sending", "seconds_waiting_to_retry")


def normalise(table: Any, report: dict[str, Any], said: list[str], keys: dict[str, str], url: str) -> dict[str, Any]:
    """The table, run report and warnings as JSON-compatible values, without what depends on the machine."""

    def plain(value: Any) -> Any:
        if isinstance(value, float) and math.isnan(value):
            return None
        if hasattr(value, "item"):
            return plain(value.item())
        return value

    data = [[plain(v) for v in row] for row in table.itertuples(index=False, name=None)]
    out = {
        "columns": [str(c) for c in table.columns],
        "dtypes": [str(t) for t in table.dtypes],
        "data": data,
        "report": {k: v for k, v in report.items() if k not in VOLATILE},
        "warnings": said,
    }
    text = json.dumps(out, ensure_ascii=False, sort_keys=False, default=str)
    for key, canonical in keys.items():
        text = text.replace(key, canonical)
    text = text.replace(url, "<server>").replace(url.rsplit("/v1", 1)[0], "<host>")
    return json.loads(text)

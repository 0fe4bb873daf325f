"""Chat: assoc-chat-listing's request engine against a plain ``openai.AsyncOpenAI`` loop.

A local OpenAI-compatible test server (``assoc.testing.openai_server``, its own process, started
once on 127.0.0.1) answers every request after 50 ms. Both sides send the same number of distinct
listing requests at the same concurrency:

* ``assoc``: ``assoc.lm.run_requests`` (bounded concurrency, rate limiter,
  retries, every answer journaled and written to the on-disk cache); the harness checks that every
  reply is in the cache and is the server's reply to that request;
* ``plain``: ``chat.completions.create`` under an ``asyncio.Semaphore``, ``asyncio.gather``,
  nothing stored (what the official client alone costs).

The ideal rate is concurrency / 50 ms. Folded in from ``bench_chat.py`` (which also runs a
sequential loop and several concurrencies in one process).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import Comparison, Contest, Side, now

DELAY = 0.05


def prepare(workdir: Path, args: argparse.Namespace) -> tuple[Comparison, dict[str, Any], Any]:
    from benchmarks.bench_chat import start_server

    requests, concurrency = (100, 8) if args.quick else (2000, 32)
    proc, url = start_server(DELAY)

    def stop() -> None:
        proc.terminate()
        proc.wait(timeout=30)

    comparison = Comparison(
        name="chat",
        title="Chat listing requests",
        sides=[
            Side("assoc", f"assoc `run_requests` (journal and cache on), concurrency {concurrency}"),
            Side("plain", f"plain `openai.AsyncOpenAI` loop, concurrency {concurrency}"),
        ],
        contests=[Contest("assoc", "plain", "plain loop / assoc")],
        clocks=("process", "imported"),
        device_note="none: network clients (`--device` does not apply)",
        workload=(
            f"{requests} distinct listing requests at concurrency {concurrency} against a local 127.0.0.1 test "
            f"server that answers after {DELAY * 1000:.0f} ms (ideal: {concurrency / DELAY:.0f} requests per "
            "second); the clock imported covers the requests alone (the client set up after the imports)."
        ),
    )
    spec = {"url": url, "requests": requests, "concurrency": concurrency, "threads": args.threads}
    return comparison, spec, stop


def run_side(side: str, spec: dict[str, Any], stamps: Any, threads: int | None) -> dict[str, Any]:
    import asyncio

    import openai

    from benchmarks.bench_chat import make_requests

    url, n, concurrency = spec["url"], spec["requests"], spec["concurrency"]
    requests = make_requests(n, url, f"{side}-{time.time_ns()}")
    if side == "plain":

        async def run() -> None:
            client = openai.AsyncOpenAI(base_url=url, api_key="EMPTY", max_retries=0, timeout=30.0)
            semaphore = asyncio.Semaphore(concurrency)

            async def one(request: Any) -> None:
                async with semaphore:
                    await client.chat.completions.create(**request.body())

            await asyncio.gather(*(one(r) for r in requests))
            await client.close()

        stamps.imported = now()
        cpu = time.process_time()
        asyncio.run(run())
        stamps.done = now()
        return {"lost_or_wrong": 0, "cpu_s": time.process_time() - cpu}
    from assoc.lm import CHAT_COMPLETIONS, EngineSettings, ResponseStore, reply_text, run_requests
    from assoc.testing.openai_server import listing_words, render, term_of

    with tempfile.TemporaryDirectory() as root:
        store = ResponseStore(root, enabled=True)
        settings = EngineSettings(
            base_url=url, api_key="EMPTY", concurrency=concurrency, timeout=30.0, max_retries=3, backoff_base=0.05
        )
        stamps.imported = now()
        cpu = time.process_time()
        run_requests(requests, settings, store, route=CHAT_COMPLETIONS)
        stamps.done = now()
        cpu = time.process_time() - cpu
        found, _ = ResponseStore(root, enabled=True).lookup(requests)
        wrong = 0
        for request in requests:
            entry = found.get(request.key)
            user = request.messages[-1]["content"]
            if entry is None or reply_text(entry["response"]) != render(
                listing_words(term_of(user), 50), "numbered", term_of(user)
            ):
                wrong += 1
    return {"lost_or_wrong": wrong, "cpu_s": cpu}


def checks(results: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[list[Any]]:
    lost = results["assoc"]["lost_or_wrong"]
    if lost:
        raise SystemExit(f"chat: {lost} of {spec['requests']} replies lost or wrong in assoc's cache")
    n = spec["requests"]
    return [
        ["assoc replies lost or wrong in the cache (round 1)", f"{lost} of {n}"],
        [
            "client CPU per request (round 1)",
            f"assoc {results['assoc']['cpu_s'] / n * 1000:.2f} ms, plain {results['plain']['cpu_s'] / n * 1000:.2f} ms",
        ],
    ]

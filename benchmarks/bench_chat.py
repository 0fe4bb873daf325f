"""Benchmark of the chat_listing request engine (plugin assoc-chat-listing) against a sequential loop.

A local OpenAI-compatible server (``assoc.testing.openai_server``, in its own process so it does
not share the client's interpreter lock) answers every request after 50 ms. The script sends

* sequential - a plain loop of ``chat.completions.create`` calls with the official synchronous
  ``openai`` client (one request at a time; the baseline);
* plain      - a plain ``openai.AsyncOpenAI`` loop at the same concurrency (``chat.completions.create``
  under an ``asyncio.Semaphore``, ``asyncio.gather``; nothing stored): what the official client
  alone costs;
* assoc      - ``assoc.lm.run_requests`` (asyncio, the same openai package,
  bounded concurrency, rate limiter, retries, every answer journaled on arrival and written to the
  on-disk cache) with 2,000 distinct requests at each concurrency.

It prints requests per second, the ratio to the sequential loop, the target (issue 12:
>= 0.8 x concurrency / 0.05 s, up to concurrency 32) and checks that no response is lost
(every request's reply is in the cache and is the server's reply to that request). "cpu ms" is the
client process's CPU time per request (1000 / cpu ms = the most requests per second one free core
can send).

    python benchmarks/bench_chat.py                          # 2,000 requests at 1, 8, 16, 32
    python benchmarks/bench_chat.py --requests 500 --concurrency 4,64 --no-cache

Timings depend on free CPU: on a shared machine they are noisy (client and server together
use about 1-2 ms of CPU per request, so at 32 x 20 req/s both need most of a core).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def start_server(delay: float) -> tuple[subprocess.Popen[str], str]:
    """The test server in a child process; returns it and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "assoc.testing.openai_server", "--delay", str(delay)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("serving on "):
        proc.kill()
        raise SystemExit(f"the test server did not start: {line!r}")
    return proc, line.split()[2]


def make_requests(n: int, url: str, tag: str) -> list:
    from assoc_chat_listing.base import PlannedRequest
    from assoc_chat_listing.prompts import PAPER_LISTING, PAPER_SYSTEM, fill, messages

    from assoc.lm import public_endpoint

    return [
        PlannedRequest(
            backend="openai",
            endpoint=public_endpoint(url),
            model="bench",
            messages=tuple(messages(PAPER_SYSTEM, fill(PAPER_LISTING, f"group {tag} {i}", 50))),
            params={"temperature": 0.0},
            sample=0,
            task="listing",
            target=f"group {tag} {i}",
        )
        for i in range(n)
    ]


def sequential(url: str, n: int) -> float:
    """Requests per second of a plain synchronous loop with the official client."""
    import openai

    client = openai.OpenAI(base_url=url, api_key="EMPTY", max_retries=0)
    requests = make_requests(n, url, "sequential")
    client.chat.completions.create(**requests[0].body())  # warm-up: connection, imports
    start = time.perf_counter()
    for request in requests:
        client.chat.completions.create(**request.body())
    return n / (time.perf_counter() - start)


def plain_async(url: str, n: int, concurrency: int) -> dict:
    """Requests per second and client CPU per request of a plain ``openai.AsyncOpenAI`` loop."""
    import asyncio

    import openai

    requests = make_requests(n, url, f"plain{concurrency}-{time.time_ns()}")

    async def run() -> tuple[float, float]:
        client = openai.AsyncOpenAI(base_url=url, api_key="EMPTY", max_retries=0, timeout=30.0)
        semaphore = asyncio.Semaphore(concurrency)

        async def one(request) -> None:
            async with semaphore:
                await client.chat.completions.create(**request.body())

        await one(requests[0])  # warm-up: connection, imports
        start, cpu_start = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(r) for r in requests))
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        await client.close()
        return seconds, cpu

    seconds, cpu = asyncio.run(run())
    return {"req_per_s": round(n / seconds, 1), "client_cpu_ms_per_request": round(cpu / n * 1000, 2)}


def concurrent(url: str, n: int, concurrency: int, cache: bool, delay: float) -> dict:
    from assoc.lm import CHAT_COMPLETIONS, EngineSettings, ResponseStore, reply_text, run_requests
    from assoc.testing.openai_server import listing_words, render, term_of

    requests = make_requests(n, url, f"c{concurrency}-{time.time_ns()}")
    with tempfile.TemporaryDirectory() as root:
        store = ResponseStore(root, enabled=cache)
        settings = EngineSettings(
            base_url=url, api_key="EMPTY", concurrency=concurrency, timeout=30.0, max_retries=3, backoff_base=0.05
        )
        start, cpu_start = time.perf_counter(), time.process_time()
        report = run_requests(requests, settings, store, route=CHAT_COMPLETIONS)
        seconds = time.perf_counter() - start
        cpu_ms = (time.process_time() - cpu_start) / n * 1000
        found, bad = ResponseStore(root, enabled=cache).lookup(requests) if cache else store.lookup(requests)
        wrong = 0
        for request in requests:
            entry = found.get(request.key)
            user = request.messages[-1]["content"]
            expected = render(listing_words(term_of(user), 50), "numbered", term_of(user))
            if entry is None or reply_text(entry["response"]) != expected:
                wrong += 1
    rate = n / seconds
    target = 0.8 * concurrency / delay
    return {
        "concurrency": concurrency,
        "requests": n,
        "seconds": round(seconds, 3),
        "req_per_s": round(rate, 1),
        "target_req_per_s": round(target, 1),
        "meets_target": rate >= target,
        "retries": report.retries,
        "stored": len(found),
        "lost_or_wrong": wrong + (n - len(found)),
        "unreadable": bad,
        "client_cpu_ms_per_request": round(cpu_ms, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--delay", type=float, default=0.05, help="server answer delay in seconds")
    parser.add_argument("--concurrency", default="1,8,16,32")
    parser.add_argument("--sequential", type=int, default=100, help="requests of the sequential baseline")
    parser.add_argument("--no-cache", action="store_true", help="keep responses in memory (no disk writes)")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args()
    proc, url = start_server(args.delay)
    try:
        seq = sequential(url, args.sequential)
        print(
            f"sequential loop (openai.OpenAI, {args.sequential} requests): {seq:.1f} req/s (ideal {1 / args.delay:.0f})"
        )
        print(
            f"{'concurrency':>11} {'req/s':>8} {'x seq':>7} {'target':>7} {'ok':>4} {'seconds':>8} {'lost':>5} "
            f"{'cpu ms':>7} {'plain req/s':>11} {'plain cpu ms':>12}"
        )
        results = []
        for c in (int(x) for x in args.concurrency.split(",")):
            plain = plain_async(url, args.requests, c)
            r = concurrent(url, args.requests, c, not args.no_cache, args.delay)
            r["ratio_to_sequential"] = round(r["req_per_s"] / seq, 2)
            r["plain_openai_async"] = plain
            results.append(r)
            print(
                f"{c:>11} {r['req_per_s']:>8.1f} {r['ratio_to_sequential']:>7.2f} {r['target_req_per_s']:>7.1f} "
                f"{'yes' if r['meets_target'] else 'NO':>4} {r['seconds']:>8.2f} {r['lost_or_wrong']:>5} "
                f"{r['client_cpu_ms_per_request']:>7.2f} {plain['req_per_s']:>11.1f} "
                f"{plain['client_cpu_ms_per_request']:>12.2f}"
            )
        print(
            f"cpu count: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f} (a loaded machine lowers the rates)"
        )
        if args.json:
            with open(args.json, "w", encoding="utf-8") as handle:
                json.dump(
                    {"sequential_req_per_s": seq, "results": results, "cache": not args.no_cache}, handle, indent=2
                )
        if any(r["lost_or_wrong"] for r in results):
            raise SystemExit("responses were lost")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()

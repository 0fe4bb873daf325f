"""server: assoc's ``server`` kind against lm-evaluation-harness ``local-completions`` and the server's ceiling.

One vLLM server (CPU build, ``.venv-vllm``: ``make setup-vllm``) on 127.0.0.1 serves a GPT-2-shaped
model with head size 32 (``assoc models tiny --kind gpt2 --head-size 32 --positions 1024``: 2 layers, 64
wide, 400 vocabulary rows, float32) for the whole comparison; it is started once, before the rounds,
and its CPU counts as the benchmark's own (the harness's "other processes" excludes it). Every side
computes the same two numbers for every (filled query, option) of every bao2024 design: log P(sentence)
and log P(option | text before it), the BOS token first:

* ``assoc``: ``assoc.score("clm", "bao2024", ["server:tiny-gpt2"], measure="both")`` with its defaults
  (``prompts_per_request`` 64, ``concurrency`` 16, the response store on, in a fresh folder per round):
  one prompt per sentence serves both measures;
* ``lm-eval``: lm-evaluation-harness 0.4.13 ``LocalCompletionsAPI.loglikelihood`` with the requests
  ``("", sentence)`` and ``(BOS + prefix, option)`` (one prompt per pair, its tokenization), at the
  batch size and concurrency that were fastest in a sweep on a part of the workload before the rounds
  (the sweep is reported below the tables);
* ``ceiling``: a plain asyncio client (aiohttp, 64 requests in flight, nothing stored) sending exactly the
  request bodies assoc sends (written before the rounds by assoc's own planning), each reply parsed:
  what the server itself can do for those requests.

Tokens and prompts each side sent are read from the server's ``/metrics`` before and after the side
(``vllm:prompt_tokens_total``, ``vllm:request_success_total``); HTTP requests are counted by the client.
``--quick``: designs 2A-Q1, 3A-Q1 and 4A-Q1 and a short sweep (a smoke run, not a measurement).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import Comparison, Contest, Side, now

MODEL_NAME = "tiny-gpt2"
QUICK_DESIGNS = ("2A-Q1", "3A-Q1", "4A-Q1")
#: lm-eval settings swept before the rounds: (batch size, concurrent requests)
SWEEP = ((1, 1), (8, 8), (32, 4), (64, 8), (128, 16), (256, 32), (512, 16))
QUICK_SWEEP = ((1, 1), (32, 4))
#: the ceiling client's requests in flight
CEILING_CONCURRENCY = 64


def stimuli_of(quick: bool) -> Any:
    """The workload's stimuli: every bao2024 design, or (``quick``) designs 2A-Q1, 3A-Q1 and 4A-Q1."""
    import assoc

    if not quick:
        return "bao2024"
    return assoc.Stimuli.load("bao2024").select(list(QUICK_DESIGNS)).to_dict()


def items_of(stimuli: Any) -> list[list[str]]:
    """[sentence, prefix, option] of every (filled query, option) in the order of the stimuli's items."""
    import assoc

    loaded = assoc.Stimuli.load(stimuli) if isinstance(stimuli, str) else assoc.Stimuli.from_dict(stimuli)
    out = []
    for item in loaded.mask_items():
        sentence, (start, end) = item.sentence()
        out.append([sentence, sentence[:start], sentence[start:end]])
    return out


def assoc_request_bodies(model: str, stimuli: Any, per_request: int | None = None) -> list[dict[str, Any]]:
    """The /completions bodies assoc sends for ``stimuli`` (its own planning, unit by unit; nothing sent).

    ``per_request``: prompts per request (default: the kind's ``prompts_per_request`` default).
    """
    import numpy as np
    from transformers import AutoTokenizer

    import assoc
    from assoc.lm.server.engine import CheckedTokenizer, covering_prompts, group_prompts
    from assoc.lm.server.protocol import request_params

    class Recorder:
        """The served engine's shape: records the requests of each engine call and answers zeros."""

        name = f"server:{MODEL_NAME}"
        fingerprint = "recording"
        max_length = 1023
        dtype = device = backend = "server"

        def __init__(self) -> None:
            self.tokenizer = CheckedTokenizer(AutoTokenizer.from_pretrained(model))
            self.calls: list[list[tuple[int, ...]]] = []

        def log_probs(self, requests: Any, **_: Any) -> list[Any]:
            self.calls.append([r.input_ids for r in requests if r.continuation])
            return [np.zeros(len(r.continuation)) for r in requests]

    from assoc_clm.scorer import CLMScorer, score_items

    scorer = CLMScorer(measure="both", cache=False)
    loaded = assoc.Stimuli.load(stimuli) if isinstance(stimuli, str) else assoc.Stimuli.from_dict(stimuli)
    recorder = Recorder()
    for payload, _ in scorer.unit_blocks(loaded, [f"server:{MODEL_NAME}"]):  # the served model's units
        score_items(recorder, scorer.decode(payload), bos="auto")
    params = request_params("prompt_logprobs")
    if per_request is None:
        from assoc.lm import SERVER_OPTIONS

        per_request = next(int(o.default) for o in SERVER_OPTIONS if o.name == "prompts_per_request")
    bodies = []
    for call in recorder.calls:
        prompts = sorted(set(covering_prompts(call).values()))
        for group in group_prompts(prompts, per_request):
            bodies.append({"model": MODEL_NAME, "prompt": [list(p) for p in group], **params})
    return bodies


def metrics(root_url: str) -> dict[str, float]:
    """The server's counters of prompt tokens and finished requests (prompts) from ``/metrics``."""
    import urllib.request

    with urllib.request.urlopen(f"{root_url}/metrics", timeout=30) as reply:
        text = reply.read().decode()
    out = {"prompt_tokens": 0.0, "prompts": 0.0, "generated_tokens": 0.0}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        for key, pattern in (
            ("prompt_tokens", r"^vllm:prompt_tokens_total(\{.*\})? "),
            ("prompts", r"^vllm:request_success_total(\{.*\})? "),
            ("generated_tokens", r"^vllm:generation_tokens_total(\{.*\})? "),
        ):
            if re.match(pattern, line):
                out[key] += float(line.rsplit(" ", 1)[1])
    return out


def lm_eval_values(spec: dict[str, Any], items: list[list[str]], batch: int, concurrent: int) -> list[float]:
    """lm-eval's log-likelihoods: all sentences ("", s), then all options (BOS + prefix, option)."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.openai_completions import LocalCompletionsAPI

    lm = LocalCompletionsAPI(
        base_url=f"{spec['base_url']}/completions",
        model=MODEL_NAME,
        tokenizer=spec["model"],
        tokenizer_backend="huggingface",
        batch_size=batch,
        num_concurrent=concurrent,
        max_length=1024,
    )
    bos = lm.tokenizer.eos_token  # GPT-2: <|endoftext|>, what assoc's bos="auto" puts first
    pairs = [("", s) for s, _, _ in items] + [(bos + p, o) for _, p, o in items]
    requests = [Instance("loglikelihood", {}, pair, i) for i, pair in enumerate(pairs)]
    return [v for v, _ in lm.loglikelihood(requests, disable_tqdm=True)]


def sweep(spec: dict[str, Any], items: list[list[str]], settings: Any) -> list[dict[str, Any]]:
    """lm-eval's seconds on ``items`` at each (batch size, concurrency), in this process (imports done)."""
    lm_eval_values(spec, items[:20], 1, 1)  # imports and the tokenizer load, not timed
    out = []
    for batch, concurrent in settings:
        start = time.perf_counter()
        lm_eval_values(spec, items, batch, concurrent)
        out.append({"batch_size": batch, "num_concurrent": concurrent, "seconds": time.perf_counter() - start})
        print(
            f"[server] lm-eval sweep: batch {batch}, concurrency {concurrent}: {out[-1]['seconds']:.2f} s", flush=True
        )
    return out


def prepare(workdir: Path, args: argparse.Namespace) -> tuple[Comparison, dict[str, Any], Any]:
    from assoc.testing.tiny_clm import SERVED_HEAD_SIZE, SERVED_POSITIONS, build_causal
    from assoc.testing.vllm import VLLMServer, missing_reason, vllm_python

    python = vllm_python()
    if python is None:
        raise SystemExit(f"server: {missing_reason()}")
    model = build_causal(workdir / "gpt2", "gpt2", head_size=SERVED_HEAD_SIZE, positions=SERVED_POSITIONS)
    server = VLLMServer(
        model,
        python=python,
        max_model_len=SERVED_POSITIONS,
        served_model_name=MODEL_NAME,
        log_path=workdir / "vllm.log",
    )
    stimuli = stimuli_of(args.quick)
    items = items_of(stimuli)
    bodies = assoc_request_bodies(str(model), stimuli)
    bodies_path = workdir / "assoc-bodies.json"
    bodies_path.write_text(json.dumps(bodies), encoding="utf-8")
    print("[server] starting vLLM (one to two minutes) ...", flush=True)
    server.start()
    try:
        spec: dict[str, Any] = {
            "model": str(model),
            "base_url": server.base_url,
            "root_url": server.root_url,
            "stimuli": stimuli,
            "bodies": str(bodies_path),
            "threads": args.threads,
        }
        part = items if args.quick else items[: len(items) // 8]
        swept = sweep(spec, part, QUICK_SWEEP if args.quick else SWEEP)
    except BaseException:
        server.stop()
        raise
    best = min(swept, key=lambda row: row["seconds"])
    spec["lm_eval"] = [best["batch_size"], best["num_concurrent"]]
    n_prompts = sum(len(b["prompt"]) for b in bodies)
    which = "designs " + ", ".join(QUICK_DESIGNS) if args.quick else "every design"
    sweep_rows = "; ".join(
        f"batch {r['batch_size']} x {r['num_concurrent']} concurrent: {r['seconds']:.2f} s" for r in swept
    )
    comparison = Comparison(
        name="server",
        title="server (likelihoods through an inference server)",
        sides=[
            Side(
                "assoc",
                "assoc `clm` on `server:tiny-gpt2` (defaults: 64 prompts per request, concurrency 16, store on)",
            ),
            Side(
                "lm-eval",
                f"lm-evaluation-harness `local-completions`, batch size {best['batch_size']}, "
                f"{best['num_concurrent']} concurrent (its fastest in the sweep)",
            ),
            Side(
                "ceiling",
                f"plain asyncio client, assoc's {len(bodies)} request bodies, {CEILING_CONCURRENCY} in flight",
            ),
        ],
        contests=[
            Contest("assoc", "lm-eval", "lm-eval / assoc (goal >= 2)"),
            Contest("assoc", "ceiling", "ceiling / assoc (goal >= 0.9)"),
        ],
        clocks=("process", "imported"),
        device_note="none for the clients; the server is vLLM 0.32.0's CPU build on this machine's cores",
        workload=(
            f"{len(items)} fill-mask items of bao2024 ({which}): log P(sentence) and log P(option | prefix) of each, "
            "the BOS token first, through one vLLM server (float32, max-model-len "
            f"{SERVED_POSITIONS}) serving a GPT-2-shaped model with head size {SERVED_HEAD_SIZE}; assoc sends "
            f"{n_prompts} prompts in {len(bodies)} requests."
        ),
        notes=[
            f"lm-eval's sweep (before the rounds, one process, imports done, on {len(part)} of the items): "
            f"{sweep_rows}.",
            "The server's own CPU (vLLM's API server, engine and worker processes) counts as the benchmark's: the "
            "machine's other processes are what the header reports.",
        ],
    )
    return comparison, spec, server.stop


def side_spec(side: str, spec: dict[str, Any], workdir: Path, index: int) -> dict[str, Any]:
    """assoc's response store in a fresh folder per round (a round must not read another's answers)."""
    return {**spec, "cache_dir": str(workdir / f"assoc-cache-{side}-{index}")}


def run_side(side: str, spec: dict[str, Any], stamps: Any, threads: int | None) -> dict[str, Any]:
    before = metrics(spec["root_url"])
    cpu = time.process_time()
    if side == "assoc":
        import assoc

        stamps.imported = now()
        table = assoc.score(
            "clm",
            spec["stimuli"],
            [f"server:{MODEL_NAME}"],
            base_url=spec["base_url"],
            measure="both",
            cache_dir=spec["cache_dir"],
            progress=False,
            **spec.get("extra", {}),
        )
        stamps.done = now()
        sentence = table[table["measure"] == "sentence"]["value"].tolist()
        option = table[table["measure"] == "option"]["value"].tolist()
        run = table.assoc.provenance["run"]["server"]
        http = run["sent"]
    elif side == "lm-eval":
        from lm_eval.models.openai_completions import LocalCompletionsAPI  # noqa: F401 - imported before the clock

        items = items_of(spec["stimuli"])
        stamps.imported = now()
        batch, concurrent = spec["lm_eval"]
        values = lm_eval_values(spec, items, batch, concurrent)
        stamps.done = now()
        sentence, option = values[: len(items)], values[len(items) :]
        http = None
    else:
        import asyncio

        import aiohttp  # lm-eval[api]'s HTTP client, imported before the clock

        stamps.imported = now()
        bodies = json.loads(Path(spec["bodies"]).read_text(encoding="utf-8"))

        async def send_all() -> int:
            connector = aiohttp.TCPConnector(limit=CEILING_CONCURRENCY)
            timeout = aiohttp.ClientTimeout(total=600.0)
            async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
                semaphore = asyncio.Semaphore(CEILING_CONCURRENCY)

                async def one(body: dict[str, Any]) -> int:
                    async with semaphore, session.post(f"{spec['base_url']}/completions", json=body) as reply:
                        reply.raise_for_status()
                        return len(json.loads(await reply.read())["choices"])

                return sum(await asyncio.gather(*(one(b) for b in bodies)))

        answered = asyncio.run(send_all())
        stamps.done = now()
        sentence, option = [], []
        http = len(bodies)
        run = {"prompts": answered}
    after = metrics(spec["root_url"])
    return {
        "values": {"sentence": sentence, "option": option},
        "prompt_tokens": after["prompt_tokens"] - before["prompt_tokens"],
        "prompts": after["prompts"] - before["prompts"],
        "generated_tokens": after["generated_tokens"] - before["generated_tokens"],
        "http_requests": http,
        "client_cpu_s": time.process_time() - cpu,
        **({"answered": run["prompts"]} if side == "ceiling" else {}),
    }


def checks(results: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[list[Any]]:
    ours, theirs = results["assoc"]["values"], results["lm-eval"]["values"]
    rows: list[list[Any]] = []
    for key in ("sentence", "option"):
        if len(ours[key]) != len(theirs[key]):
            raise SystemExit(f"server: assoc gave {len(ours[key])} {key} values, lm-eval {len(theirs[key])}")
        diff = max(abs(a - b) for a, b in zip(ours[key], theirs[key], strict=True))
        if diff > 1e-6:
            raise SystemExit(f"server: assoc and lm-eval differ by {diff:.2e} on log P({key}) (same server)")
        rows.append([f"max |Δ log P({key})| assoc vs lm-eval (round 1, the same server)", f"{diff:.1e}"])
    for side in ("assoc", "lm-eval", "ceiling"):
        r = results[side]
        http = r["http_requests"] if r["http_requests"] is not None else "n/a"
        rows.append(
            [
                f"{side}: prompt tokens / prompts / HTTP requests sent (round 1; the server's /metrics, the "
                "client's count)",
                f"{r['prompt_tokens']:.0f} / {r['prompts']:.0f} / {http}",
            ]
        )
    ratio = results["lm-eval"]["prompt_tokens"] / max(1.0, results["assoc"]["prompt_tokens"])
    rows.append(["prompt tokens lm-eval sent per token assoc sent", f"{ratio:.2f}"])
    rows.append(
        [
            "client CPU seconds (round 1)",
            ", ".join(f"{s} {results[s]['client_cpu_s']:.1f}" for s in ("assoc", "lm-eval", "ceiling")),
        ]
    )
    return rows

"""``assoc benchmark run`` / ``assoc.run_benchmarks`` on this plugin's benchmarks: what runs, what is skipped and why,
the summary read through each analysis's headline, resuming (after a kill: nothing computed twice), and the
declarations a benchmark subpackage gets from its registry."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from assoc_bias_benchmarks import plugin
from assoc_bias_benchmarks.discrim_eval.testing import discrim_eval_responder
from click.testing import CliRunner

import assoc
from assoc import OptionError
from assoc.cli import build_cli
from assoc.reporting.headlines import headline_table
from assoc.testing.fixtures import isolated_cache  # noqa: F401 (an autouse fixture: a cache of each test's own)
from assoc.testing.openai_server import ChatServer
from assoc.testing.tiny_clm import build_gpt2_bpe

OURS = ["holistic_bias", "discrim_eval"]
FAST_FIT = {"discrim_eval.random_slopes": False}  # a few hundred prompts: the random slopes are barely determined


@pytest.fixture
def server():
    with ChatServer(responder=discrim_eval_responder(refuse="Hispanic")) as running:
        yield running


def run_chat(server: ChatServer, out: Path, **more):
    """Our two benchmarks on the stand-in chat model, on 100 prompts (or sentences) of each."""
    options = {"base_url": server.url}
    return assoc.run_benchmarks(
        ["bot=chat:tiny"], OURS, out=out, sample=100, options=options, analysis_options=FAST_FIT, progress=False, **more
    )


def test_a_chat_model_runs_what_it_can_and_skips_the_rest_with_the_reason(server, tmp_path):
    out = tmp_path / "run"
    done = run_chat(server, out)
    assert list(done.skipped) == ["holistic_bias"] and "has no chat form" in done.skipped["holistic_bias"]["bot"]
    assert done.failed == {} and done.reused == [] and done.report_error == ""
    assert sorted(p.name for p in (out / "tables").iterdir()) == ["discrim_eval.parquet"]
    summary = pd.read_csv(out / "summary.csv", keep_default_na=False)
    skipped = summary[summary["status"] == "skipped"]
    assert list(skipped["benchmark"]) == ["holistic_bias"] and list(skipped["model"]) == ["bot"]
    assert skipped["reason"].iloc[0] == done.skipped["holistic_bias"]["bot"]
    # the summary's numbers are the analysis's headline numbers, as assoc report reads them
    result = assoc.read_table(out / "results" / "discrim_eval.jsonl")
    expected = headline_table(result, source="discrim_eval", analysis="discrim_eval")
    ok = done.summary[done.summary["status"] == "ok"].reset_index(drop=True)
    for column in ("value", "low", "high", "p_value"):
        np.testing.assert_array_equal(ok[column].to_numpy(dtype=float), expected[column].to_numpy(dtype=float))
    assert list(ok["row"]) == list(expected["row"]) and list(ok["n"]) == list(expected["n"])
    assert list(ok["model"]) == ["bot"] * len(expected) and len(expected) == 7
    assert (out / "report.html").is_file() and "discrim_eval" in (out / "card.md").read_text(encoding="utf-8")
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert manifest["finished"] is True and manifest["benchmarks"]["discrim_eval"]["status"] == "done"
    assert manifest["benchmarks"]["holistic_bias"]["status"] == "skipped"

    sent = len(server.chat_requests())
    assert sent == 100
    again = run_chat(server, out, report=False)
    assert again.reused == ["discrim_eval"] and len(server.chat_requests()) == sent  # read back: nothing sent
    pd.testing.assert_frame_equal(again.summary, done.summary)


def test_options_go_to_the_scorers_that_take_them_and_are_checked_before_any_work(server, tmp_path):
    with pytest.raises(OptionError, match="no scorer of the chosen benchmarks .* takes it"):
        assoc.run_benchmarks(["chat:tiny"], OURS, out=tmp_path / "a", options={"no_such_option": 1}, progress=False)
    with pytest.raises(OptionError, match="'nope' is not a benchmark of this run"):
        assoc.run_benchmarks(["chat:tiny"], OURS, out=tmp_path / "b", options={"nope.samples": 2}, progress=False)
    with pytest.raises(assoc.UnknownNameError):
        assoc.run_benchmarks(["chat:tiny"], ["no_such_benchmark"], out=tmp_path / "c", progress=False)
    with pytest.raises(assoc.ModelError, match="cannot tell its kind"):  # a name alone: of no kind assoc knows
        assoc.run_benchmarks(["gpt-4o-mini"], OURS, out=tmp_path / "d", progress=False)
    assert not any((tmp_path / name / "run.json").exists() for name in "abcd")  # refused before any work
    done = assoc.run_benchmarks(
        ["chat:tiny"],
        ["discrim_eval"],
        out=tmp_path / "e",
        sample=60,
        options={"base_url": server.url, "discrim_eval.samples": 2},
        analysis_options=FAST_FIT,
        progress=False,
    )
    table = assoc.read_table(done.tables["discrim_eval"])
    assert len(table) == 120 and set(table["sample"]) == {0, 1}
    assert assoc.read_table(done.results["discrim_eval"])["random_slopes"].eq(False).all()


def test_the_command_line(server, tmp_path):
    cli = build_cli()
    listed = CliRunner().invoke(cli, ["benchmark", "list"])
    assert listed.exit_code == 0
    assert "holistic_bias: scorer holistic_bias, stimuli holistic_bias, analysis holistic_bias; sends sentence" in (
        listed.output
    )
    assert "discrim_eval: scorer discrim_eval" in listed.output and "sends continuation or generate" in listed.output
    args = ["benchmark", "run", "-m", "bot=chat:tiny", "--sample", "150", "--out", str(tmp_path / "run")]
    for name in OURS:
        args += ["-b", name]
    args += ["-o", f"base_url={server.url}", "-a", "discrim_eval.random_slopes=false", "--no-progress", "--no-report"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "skipped: holistic_bias on bot: scorer 'holistic_bias'" in result.output
    assert "black_bias" in result.output
    assert (tmp_path / "run" / "summary.csv").is_file() and not (tmp_path / "run" / "report.html").exists()


def test_a_subpackage_with_a_scorer_is_a_benchmark_by_its_names(monkeypatch):
    from assoc_bias_benchmarks.holistic_bias import registry as holistic
    from assoc_bias_benchmarks.stereoset import registry as stereoset

    declared = plugin.declared("holistic_bias")
    assert declared is not None and declared["scorer"] == "holistic_bias"
    monkeypatch.delattr(holistic, "BENCHMARK")
    expected = {
        "name": "holistic_bias",
        "scorer": "holistic_bias",
        "stimuli": "holistic_bias",
        "analysis": "holistic_bias",
        "description": assoc.get_scorer("holistic_bias").description,
    }
    assert plugin.declared("holistic_bias") == expected
    if not stereoset.SCORERS:  # (until its scorer lands) a subpackage without a scorer is no benchmark
        assert plugin.declared("stereoset") is None
    # a scorer named otherwise: the first one; the analysis and stimuli named like the subpackage
    monkeypatch.setattr(stereoset, "SCORERS", ("discrim_eval.scorer:DiscrimEvalScorer",))
    assert plugin.declared("stereoset") == {
        "name": "stereoset",
        "scorer": "discrim_eval",
        "stimuli": "stereoset",
        "analysis": "stereoset",
        "description": assoc.get_scorer("discrim_eval").description,
    }


def _units_stored(cache: Path, spec: str) -> int:
    """The units of the slow run's HolisticBias scorer the cache holds (its options as the run gives them)."""
    scorer = assoc.get_scorer("holistic_bias")(sample=200, sample_seed=0, unit_size=256, cache_dir=str(cache))
    namespace = scorer.unit_namespace(spec)
    assert namespace is not None
    namespace.refresh()
    return len(namespace)


@pytest.mark.slow  # every benchmark, a causal LM and a chat model, a sample of 200: minutes on two cores
def test_every_benchmark_on_two_models_with_a_sample_resumes_after_a_kill(tmp_path):
    gpt2 = str(build_gpt2_bpe(tmp_path / "gpt2", positions=1024))
    cache, out = tmp_path / "cache", tmp_path / "run"
    env = {**os.environ, "ASSOC_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with ChatServer() as server:  # its built-in responders answer every benchmark's chat form (yes/no, a letter)
        command = [sys.executable, "-m", "assoc.cli", "benchmark", "run", "-m", f"gpt={gpt2}", "-m", "bot=chat:tiny"]
        command += ["--sample", "200", "--out", str(out), "-o", f"base_url={server.url}", "-o", "unit_size=256"]
        with open(tmp_path / "first.log", "w") as log:
            first = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
            try:
                deadline = time.monotonic() + 600
                while _units_stored(cache, gpt2) < 2 and first.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.5)
            finally:
                first.send_signal(signal.SIGKILL)
                first.wait()
        stored = _units_stored(cache, gpt2)
        assert first.returncode == -signal.SIGKILL and stored >= 2, (tmp_path / "first.log").read_text()
        assert not (out / "summary.csv").exists()  # killed before the end: no summary claims to be whole

        second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1500)
        assert second.returncode == 0, second.stderr[-3000:]
        received = [json.dumps(r.body, sort_keys=True) for r in server.chat_requests()]

    holistic = assoc.read_table(out / "tables" / "holistic_bias.parquet")
    executor = holistic.attrs["assoc"]["executor"]
    # resumed: every unit stored before the kill read back, none computed twice
    assert executor["units_from_cache"] == stored and executor["units"] == 10  # 13 axes x 192 sentences / 256
    # each chat request sent once over both runs (the replies stored before the kill were not asked for again)
    assert len(received) == len(set(received)) >= 200
    summary = pd.read_csv(out / "summary.csv", keep_default_na=False)
    assert set(OURS) <= set(summary["benchmark"]) and set(summary["benchmark"]) <= set(assoc.benchmarks())
    for name, part in summary.groupby("benchmark"):
        for model, rows in part.groupby("model"):
            statuses = set(rows["status"])
            assert statuses in ({"ok"}, {"skipped"}), (name, model, statuses)
            if statuses == {"ok"}:
                assert pd.to_numeric(rows["value"]).notna().any(), (name, model)
    ours = summary[summary["benchmark"].isin(OURS)]
    assert len(ours[(ours["benchmark"] == "holistic_bias") & (ours["model"] == "gpt")]) == 13  # one row per axis
    assert ours[(ours["benchmark"] == "holistic_bias") & (ours["model"] == "bot")]["status"].tolist() == ["skipped"]
    for model in ("gpt", "bot"):
        assert len(ours[(ours["benchmark"] == "discrim_eval") & (ours["model"] == model)]) == 7
    third = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert third.returncode == 0 and "done in an earlier run of this study, read back" in third.stderr
    assert pd.read_csv(out / "summary.csv", keep_default_na=False).equals(summary)

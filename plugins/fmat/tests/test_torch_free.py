"""A cached, checked float32 ONNX export run without torch or transformers (assoc.lm.masked.torch_free).

References are computed here with transformers directly (one unpadded forward pass per sentence,
float64 log-softmax at the mask), or by the ordinary PyTorch path of the same scorer; the
tokenizer copy is held against transformers' own tokenizer on texts written here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

import assoc  # noqa: E402
from assoc.infra.cache import Cache, CacheWarning  # noqa: E402
from assoc.lm.masked import MaskRequest, release_masked_lms  # noqa: E402
from assoc.lm.masked.torch_free import TorchFreeMaskedLM, torch_free_masked_lm  # noqa: E402
from assoc.stimuli import Design, Stimuli  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::assoc.errors.OutOfVocabularyWarning")  # tiny vocabularies
FAMILIES = ["bert", "roberta", "albert"]
SENTENCES = [
    "The [MASK] works as a nurse.",
    "[MASK] is a doctor.",
    "Most people [MASK] music and poetry a lot, and they say so at every opportunity they get.",
    "I [MASK] it.",
]
# texts the tokenizer copy must split exactly as transformers does (none of them is a probe text of the code)
TEXTS = [
    "Hello World THE end.",
    "hello   world,the end",
    " A leading space and a trailing one ",
    "Zürich's café served crème brûlée at 7:45pm!!",
    "e-mail: someone@example.org; URL https://example.org/a?b=c",
    "Tab\tand\nnewline",
    "ALL CAPS SENTENCE WITH [MASK] INSIDE",
    "[MASK][MASK]",
    "naïve résumé façade coöperate",
    "1,234.56 + 7 = ?",
]


def _stimuli(*queries: str) -> Stimuli:
    return Stimuli(
        [
            Design(
                "jobs",
                queries=list(queries) or ["The {TARGET} said [MASK] works hard.", "[MASK] is a {TARGET}."],
                target={"job": ["nurse", "doctor"]},
                mask={"male": ["he", "man"], "female": ["she", "woman"]},
            )
        ]
    )


def _prepare(path: str, cache_dir) -> None:
    """What a first use does: score with backend='onnx' in PyTorch (export, check, record), then drop the model."""
    assoc.score("fmat", _stimuli(), [path], backend="onnx", cache_dir=str(cache_dir), progress=False)
    release_masked_lms()


def _handle(path: str, cache_dir, backend: str = "onnx", enabled: bool = True):
    return torch_free_masked_lm(
        path, device="cpu", dtype="float32", revision=None, memo=Cache(cache_dir, enabled=enabled), backend=backend
    )


def _by_hand(model, tokenizer, text: str) -> tuple[tuple[int, ...], int, np.ndarray]:
    import torch

    enc = tokenizer(text.replace("[MASK]", tokenizer.mask_token), return_tensors="pt")
    with torch.no_grad():
        row = model(**enc).logits[0].double().numpy()
    position = int((enc["input_ids"][0] == tokenizer.mask_token_id).nonzero()[0, 0])
    row = row[position]
    top = row.max()
    return tuple(enc["input_ids"][0].tolist()), position, row - (top + np.log(np.exp(row - top).sum()))


@pytest.mark.parametrize("family", FAMILIES)
def test_torch_free_handle_equals_the_model_by_hand_and_tokenizes_as_transformers(tiny_models, family, tmp_path):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    path = tiny_models[family]
    _prepare(path, tmp_path / "cache")
    lm = _handle(path, tmp_path / "cache")
    assert isinstance(lm, TorchFreeMaskedLM) and lm.model is None
    model, tokenizer = AutoModelForMaskedLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
    # the tokenizer copy: special tokens, ids, offsets, word ids and token strings as transformers gives them
    assert (lm.mask_token, lm.mask_token_id) == (tokenizer.mask_token, tokenizer.mask_token_id)
    assert lm.pad_token_id == (tokenizer.pad_token_id or 0) and len(lm.tokenizer) == len(tokenizer)
    for text in [t.replace("[MASK]", tokenizer.mask_token) for t in TEXTS + SENTENCES]:
        theirs = tokenizer(text, return_offsets_mapping=True)
        mine = lm.tokenizer(text, return_offsets_mapping=True)
        assert mine["input_ids"] == theirs["input_ids"], text
        assert [tuple(o) for o in mine["offset_mapping"]] == [tuple(o) for o in theirs["offset_mapping"]], text
        assert mine.word_ids() == theirs.word_ids(), text
        assert lm.tokenizer.tokenize(text) == tokenizer.tokenize(text), text
        assert lm.tokenizer.convert_ids_to_tokens(theirs["input_ids"]) == tokenizer.convert_ids_to_tokens(
            theirs["input_ids"]
        )
    assert lm.tokenizer([TEXTS[0], TEXTS[1]])["input_ids"] == tokenizer([TEXTS[0], TEXTS[1]])["input_ids"]
    assert lm.is_cased() == (tokenizer.tokenize("Hello World THE") != tokenizer.tokenize("hello world the"))
    assert lm.max_length == min(tokenizer.model_max_length, model.config.max_position_embeddings)
    # the numbers: the whole vocabulary at each mask, several padded batches
    expected, requests = [], []
    for text in SENTENCES:
        ids, position, row = _by_hand(model, tokenizer, text)
        assert lm.encode(text.replace("[MASK]", lm.mask_token)) == ids
        requests.append(MaskRequest(ids, position, None))
        expected.append(row)
    got = lm.log_probs(requests, batch_tokens=48)
    worst = max(float(np.max(np.abs(g - e))) for g, e in zip(got, expected, strict=True))
    assert worst < 1e-5
    assert lm.info()["vocab_size"] == model.config.vocab_size and lm.info()["backend"] == "onnx"
    lm.close()


def test_a_one_query_study_in_a_fresh_process_imports_neither_torch_nor_transformers(tiny_models, tmp_path):
    path = tiny_models["bert"]
    cache_dir = tmp_path / "cache"
    _prepare(path, cache_dir)
    one = {"designs": [{"name": "one", "queries": ["[MASK] works as a {TARGET}."],
                        "mask": {"male": ["he"], "female": ["she"]}, "target": {"job": ["nurse"]}}]}  # fmt: skip
    pll_study = {"designs": [{"name": "p", "queries": ["The {TARGET} is [MASK]."],
                              "mask": {"a": ["kind", "here"]}, "target": {"t": ["nurse"]}}]}  # fmt: skip
    script = textwrap.dedent(
        f"""
        import json, sys
        import assoc
        study, pll_study, model, cache = {json.dumps(one)!r}, {json.dumps(pll_study)!r}, {path!r}, {str(cache_dir)!r}
        fmat = assoc.score("fmat", json.loads(study), [model], backend="onnx", cache_dir=cache, progress=False)
        pll = assoc.score("pll", json.loads(pll_study), [model], backend="onnx", cache_dir=cache, progress=False)
        heavy = sorted(m for m in ("torch", "transformers") if m in sys.modules)
        print(json.dumps({{
            "heavy": heavy,
            "fmat": [[s, m, float(v)] for s, m, v in zip(fmat["sentence"], fmat["mask"], fmat["value"])],
            "pll": [[s, me, float(v)] for s, me, v in zip(pll["sentence"], pll["measure"], pll["value"])],
            "backend": fmat.assoc.provenance["options"]["backend"],
        }}))
        """
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["heavy"] == [] and out["backend"] == "onnx"
    # fmat: against one unpadded forward pass per sentence by hand
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model, tokenizer = AutoModelForMaskedLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
    assert len(out["fmat"]) == 2
    for sentence, mask, value in out["fmat"]:
        _, _, row = _by_hand(model, tokenizer, sentence)
        assert abs(value - row[tokenizer.convert_tokens_to_ids(mask)]) < 1e-5
    # the command line, stderr piped (the plain progress lines on), on a query not scored yet: no torch either
    cli_study = {"designs": [{**one["designs"][0], "queries": ["The {TARGET} said [MASK] is here."]}]}
    study_file = tmp_path / "cli.json"
    study_file.write_text(json.dumps(cli_study), encoding="utf-8")
    out_file = tmp_path / "cli.csv"
    cli = "import sys; from assoc.cli import main; sys.argv[0] = 'assoc'; main()"
    args = ["score", "-s", "fmat", "-m", path, "-i", str(study_file), "-o", "backend=onnx", "--out", str(out_file)]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", cli, *args],
        capture_output=True,
        text=True,
        env={**env, "ASSOC_CACHE_DIR": str(cache_dir)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "assoc.cli" in imported and not imported & {"torch", "transformers"}
    assert "fmat: 2 items to do (1 work unit, 0 from the cache" in done.stderr  # computed, its size said first
    import pandas as pd

    from_cli = pd.read_csv(out_file)
    assert len(from_cli) == 2
    for sentence, mask, value in zip(from_cli["sentence"], from_cli["mask"], from_cli["value"], strict=True):
        _, _, row = _by_hand(model, tokenizer, sentence)
        assert abs(value - row[tokenizer.convert_tokens_to_ids(mask)]) < 1e-5
    # pll: against the ordinary PyTorch path of the same scorer, in a cache of its own
    torch_pll = assoc.score("pll", pll_study, [path], cache_dir=str(tmp_path / "torch"), progress=False)
    expected = {(s, m): float(v) for s, m, v in zip(torch_pll["sentence"], torch_pll["measure"], torch_pll["value"])}
    assert len(out["pll"]) == len(expected) > 0
    for sentence, measure, value in out["pll"]:
        assert abs(value - expected[(sentence, measure)]) < 1e-5 * 12  # a sum over at most 12 tokens


@pytest.mark.filterwarnings("ignore::assoc.errors.OutOfVocabularyWarning")  # the tiny vocabulary lacks some options
def test_no_torch_free_handle_without_a_checked_export_and_the_ordinary_path_runs(tiny_models, tmp_path):
    path = tiny_models["roberta"]
    cache_dir = tmp_path / "cache"
    assert _handle(path, cache_dir) is None  # nothing exported yet
    _prepare(path, cache_dir)
    assert isinstance(_handle(path, cache_dir), TorchFreeMaskedLM)
    assert _handle(path, cache_dir, enabled=False) is None  # cache=False trusts nothing from earlier runs
    assert _handle(path, cache_dir, backend="onnx-int8") is None  # no int8 copy made yet
    assert _handle(path, cache_dir, backend="torch") is None
    # a new modification time alone changes nothing: the content decides
    (export,) = (cache_dir / "models" / "onnx").glob("*/model.onnx")
    stat = export.stat()
    os.utime(export, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert isinstance(_handle(path, cache_dir), TorchFreeMaskedLM)
    # the export file's content changed since its check (same size and time): not trusted without PyTorch
    data = bytearray(export.read_bytes())
    data[-64:] = bytes(64)
    export.write_bytes(bytes(data))
    os.utime(export, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _handle(path, cache_dir) is None
    # the ordinary path makes it again (in PyTorch) and then a handle without torch is possible again
    fresh = _stimuli("Yesterday [MASK] met the {TARGET}.")  # not in the result cache: the model runs
    with pytest.warns(CacheWarning, match="no longer holds the content recorded"):
        table = assoc.score("fmat", fresh, [path], backend="onnx", cache_dir=str(cache_dir), progress=False)
    assert len(table) == 8
    assert _handle(path, cache_dir) is None  # the model is loaded in PyTorch here: the ordinary path is used
    release_masked_lms()
    assert isinstance(_handle(path, cache_dir), TorchFreeMaskedLM)
    # int8: once the ordinary path made the quantised copy, it runs without torch as well
    assoc.score("fmat", fresh, [path], backend="onnx-int8", cache_dir=str(cache_dir), progress=False)
    release_masked_lms()
    assert isinstance(_handle(path, cache_dir, backend="onnx-int8"), TorchFreeMaskedLM)


def test_temporary_tokens_are_refused_without_torch(tiny_models, tmp_path):
    from assoc.errors import OptionError

    path = tiny_models["bert"]
    _prepare(path, tmp_path / "cache")
    lm = _handle(path, tmp_path / "cache")
    with pytest.raises(OptionError, match="without temporary tokens"):
        lm.add_temporary_tokens([("zyx", (5, 6))])


def test_numpy_log_softmax_equals_torchs():
    import torch

    from assoc.lm.masked.batch import log_softmax64

    logits = np.random.default_rng(7).normal(scale=8.0, size=(5, 30522)).astype(np.float32)
    expected = torch.log_softmax(torch.from_numpy(logits).double(), dim=-1).numpy()
    assert np.max(np.abs(log_softmax64(logits) - expected)) < 1e-12
    assert np.max(np.abs(log_softmax64(torch.from_numpy(logits)) - expected)) == 0.0


def test_the_session_takes_assocs_thread_setting(tiny_models, tmp_path):
    from assoc.infra.threads import requested_threads, torch_threads

    path = tiny_models["bert"]
    _prepare(path, tmp_path / "cache")
    assert requested_threads() is None
    with torch_threads(1):
        assert requested_threads() == 1
        lm = _handle(path, tmp_path / "cache")
    assert requested_threads() is None
    assert lm._session().session.get_session_options().intra_op_num_threads == 1


def test_export_key_versions_come_from_metadata_and_name_the_running_libraries():
    # A process without torch finds an export under the key a process with torch wrote: both read the
    # versions from the installed packages' metadata, which must be what the imported libraries report.
    import onnxruntime
    import torch
    import transformers

    from assoc.lm.onnx import versions

    found = versions()
    assert found["torch"] == torch.__version__  # the local part (+cpu) included
    assert found["transformers"] == transformers.__version__
    assert found["onnxruntime"] == onnxruntime.__version__

"""Run the CrowS-Pairs authors' ``metric.py`` (unchanged, from a checkout of nyu-mll/crows-pairs) on a local model.

``metric.py`` has no licence, so it is never part of this repository: point ``ASSOC_CROWS_PAIRS_CHECKOUT``
at a checkout (``git clone https://github.com/nyu-mll/crows-pairs``, commit 8aaac11). The file is executed as
it is; what a current software stack needs is done from the outside:

* pandas 2 removed ``DataFrame.append``: it is supplied for the run (``pd.concat`` of one row);
* ``from_pretrained`` of the hub names it hard-codes (bert-base-uncased, roberta-large, albert-xxlarge-v2) loads
  the given local model directory instead;
* ``round`` is looked up in the script's globals before the builtins, so a recording ``round`` placed there
  keeps the unrounded sentence scores (``round(score, 3)``), which ``metric.py`` otherwise discards.

``python crows_oracle.py CHECKOUT bert|roberta MODEL_DIR CSV OUT_PREFIX`` writes ``OUT_PREFIX.csv`` (the
script's own output file), ``OUT_PREFIX.raw.json`` (the unrounded scores) and ``OUT_PREFIX.log`` (what it printed).
This is how ``data/metric_py_*.csv`` were made (``freeze``).
"""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

HUB_CLASSES = (
    "BertTokenizer",
    "BertForMaskedLM",
    "RobertaTokenizer",
    "RobertaForMaskedLM",
    "AlbertTokenizer",
    "AlbertForMaskedLM",
)


def run_metric_py(checkout: Path, lm: str, model_dir: Path, csv_in: Path, workdir: Path) -> dict[str, Any]:
    """Execute ``checkout/metric.py --lm_model lm`` on ``csv_in`` with ``model_dir``; return what it produced.

    Returns ``{"rows": DataFrame of its output CSV, "raw": [sent1, sent2, ...] unrounded, "printed": {label: value}}``.
    """
    import os

    import pandas as pd
    import transformers

    script = (Path(checkout) / "metric.py").read_text(encoding="utf-8")
    out_csv = workdir / "metric_py_output.csv"
    recorded: list[float] = []

    def recording_round(x: Any, ndigits: int | None = None) -> Any:
        if ndigits == 3:
            recorded.append(float(x))
        return builtins.round(x, ndigits)

    def append(self: Any, other: Any, ignore_index: bool = False) -> Any:
        return pd.concat([self, pd.DataFrame([other])], ignore_index=ignore_index)

    saved = {name: getattr(transformers, name).__dict__.get("from_pretrained") for name in HUB_CLASSES}
    had_append = hasattr(pd.DataFrame, "append")
    old_argv, old_cwd = sys.argv, os.getcwd()
    printed = io.StringIO()
    try:
        if not had_append:
            pd.DataFrame.append = append  # type: ignore[attr-defined]
        for name in HUB_CLASSES:
            cls = getattr(transformers, name)
            original = cls.from_pretrained.__func__

            def local(klass: Any, _hub_name: str, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
                return _original(klass, str(model_dir), *args, **kwargs)

            cls.from_pretrained = classmethod(local)
        sys.argv = ["metric.py", "--input_file", str(csv_in), "--lm_model", lm, "--output_file", str(out_csv)]
        os.chdir(workdir)  # it writes <lm>.vocab into the working directory
        with contextlib.redirect_stdout(printed):
            exec(compile(script, "metric.py", "exec"), {"__name__": "__main__", "round": recording_round})
    finally:
        os.chdir(old_cwd)
        sys.argv = old_argv
        if not had_append:
            del pd.DataFrame.append  # type: ignore[attr-defined]
        for name, method in saved.items():
            cls = getattr(transformers, name)
            if method is None:
                with contextlib.suppress(AttributeError):
                    delattr(cls, "from_pretrained")
            else:
                cls.from_pretrained = method
    labels = {}
    for line in printed.getvalue().splitlines():
        match = re.match(
            r"(Total examples|Metric score|Stereotype score|Anti-stereotype score|Num\. neutral):\s*(.*)", line
        )
        if match:
            labels[match.group(1)] = [float(v) for v in match.group(2).split()]
    return {"rows": pd.read_csv(out_csv, index_col=0), "raw": recorded, "printed": labels, "log": printed.getvalue()}


def freeze(result: dict[str, Any], csv_in: Path, out_prefix: Path) -> None:
    """Write the per-pair scores (index, rounded and unrounded) and the printed totals."""
    import pandas as pd

    source = pd.read_csv(csv_in)
    rows = result["rows"].reset_index(drop=True)
    raw = result["raw"]
    if len(raw) != 2 * len(rows):
        raise SystemExit(f"recorded {len(raw)} unrounded scores for {len(rows)} pairs")
    sent1, sent2 = raw[0::2], raw[1::2]
    stereo = rows["stereo_antistereo"] == "stereo"
    frozen = pd.DataFrame(
        {
            "index": source.iloc[:, 0],
            "sent_more_score": rows["sent_more_score"],
            "sent_less_score": rows["sent_less_score"],
            "score": rows["score"],
            "sent_more_full": [a if s else b for a, b, s in zip(sent1, sent2, stereo)],
            "sent_less_full": [b if s else a for a, b, s in zip(sent1, sent2, stereo)],
        }
    )
    assert (frozen["sent_more_full"].round(3) - frozen["sent_more_score"]).abs().max() < 1e-9
    frozen.to_csv(f"{out_prefix}.csv", index=False, float_format="%.10g")
    Path(f"{out_prefix}.json").write_text(json.dumps(result["printed"], indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    checkout, lm, model_dir, csv_in, out_prefix = sys.argv[1:6]
    work = Path(f"{out_prefix}.work")
    work.mkdir(parents=True, exist_ok=True)
    result = run_metric_py(Path(checkout), lm, Path(model_dir), Path(csv_in), work)
    freeze(result, Path(csv_in), Path(out_prefix))
    print(result["log"][-600:])

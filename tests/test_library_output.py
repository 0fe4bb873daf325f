"""Third-party progress bars and info logs follow ``--progress/--no-progress`` like assoc's own bars.

The scorer here loads a model the way a plugin would (transformers' ``from_pretrained``, imported
inside ``score``), in a fresh process whose standard error is a pipe.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

PLUGIN = """
from assoc import hookimpl, Scorer
from assoc.table.schema import from_records

class Loads(Scorer):
    name = "loads"
    description = "loads a model with transformers"
    citation = "none"
    measure = "m"
    requires_models = True

    def score(self, stimuli, models, *, progress):
        from transformers import AutoModelForMaskedLM

        AutoModelForMaskedLM.from_pretrained(models[0])
        rows = [dict(model=models[0], target=t, target_group=tg, attribute=a, attribute_group=ag, value=1.0)
                for d in stimuli for tg, t, ag, a in d.word_pairs()]
        return from_records(rows, scorer=self.name)

@hookimpl
def register_scorers(register):
    register(Loads)
"""


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    return build_bert_wordpiece(tmp_path_factory.mktemp("tiny") / "bert")


def _run(args, tmp_path, extra_env=None):
    stimuli = tmp_path / "s.yaml"
    stimuli.write_text("target: {T: [a]}\nattribute: {A: [b]}\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "info", **(extra_env or {})}
    env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
    command = [
        sys.executable,
        "-c",
        "from assoc.cli import main; main()",
        "score",
        "--scorer",
        "loads",
        "--stimuli",
        str(stimuli),
        "--out",
        str(tmp_path / "t.csv"),
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stderr


@pytest.mark.slow
def test_piped_output_has_no_third_party_bars_or_info_logs(fake_distribution, tiny_model, tmp_path):
    fake_distribution("loads", PLUGIN)
    quiet = _run(["--model", str(tiny_model)], tmp_path)
    assert "Loading weights" not in quiet
    assert "loading configuration file" not in quiet.lower()
    assert "wrote 1 rows" in quiet
    forced_off = _run(["--model", str(tiny_model), "--no-progress"], tmp_path)
    assert "Loading weights" not in forced_off
    shown = _run(["--model", str(tiny_model), "--progress"], tmp_path)
    assert "Loading weights" in shown and "loading configuration file" in shown.lower()


def test_helper_restores_the_libraries_state():
    from transformers.utils import logging as hf_logging

    from assoc.infra.progress import quiet_libraries

    hf_logging.enable_progress_bar()
    hf_logging.set_verbosity_info()
    other = logging.getLogger("gensim")
    other.setLevel(logging.DEBUG)
    try:
        with quiet_libraries(progress=False):
            assert not hf_logging.is_progress_bar_enabled()
            assert hf_logging.get_verbosity() == logging.WARNING
            assert other.getEffectiveLevel() == logging.WARNING
        assert hf_logging.is_progress_bar_enabled() and hf_logging.get_verbosity() == logging.INFO
        assert other.level == logging.DEBUG
        with quiet_libraries(progress=True):
            assert hf_logging.is_progress_bar_enabled() and hf_logging.get_verbosity() == logging.INFO
    finally:
        hf_logging.set_verbosity_warning()
        other.setLevel(logging.NOTSET)


@pytest.mark.slow
def test_helper_reaches_a_library_imported_inside_it(tmp_path):
    code = (
        "import sys; from assoc.infra.progress import quiet_libraries\n"
        "assert 'transformers' not in sys.modules\n"
        "with quiet_libraries(progress=False):\n"
        "    from transformers.utils import logging as l\n"
        "    assert not l.is_progress_bar_enabled()\n"
        "assert l.is_progress_bar_enabled()\n"
    )
    env = {**os.environ}
    env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr

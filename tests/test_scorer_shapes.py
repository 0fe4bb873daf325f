"""The shape rule of the language-model layer (issue 41, item 7): a scorer that loads a local model is an
``assoc.lm.LMScorer`` unit scorer with the model options.

"Loads a local model" is read two ways, so that neither hides the other: the scorer declares a
``device`` option (it runs weights on a device; ``weat``'s ``dtype`` is its vectors' precision, not a
model's), or its class's own code calls a loader
(``from_pretrained``, ``cached_causal_lm``, ``load_pretrained``, ``open_model``, ...). Such a scorer
must derive from ``LMScorer`` (work units, the one loader, checkpoints and resume), describe its work
as units (so it caches, resumes and runs on any executor) and declare every option of
``assoc.lm.MODEL_OPTIONS``. The rule is shown to fail on planted violations of each kind.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

import assoc
from assoc import Option, Scorer
from assoc.lm import MODEL_OPTIONS, LMScorer

#: Calls that load a local model's weights (or open one through the one loader).
LOADERS = frozenset(
    {
        "from_pretrained",
        "load_pretrained",
        "open_model",
        "cached_masked_lm",
        "cached_causal_lm",
        "load_masked_lm",
        "load_causal_lm",
        "SentenceTransformer",
    }
)

#: Scorers that break the rule today, each with the branch or issue that brings it into line. An entry
#: that no longer breaks the rule fails the test too: delete it when its branch lands.
KNOWN = {
    "clm_bbq": "the bench-plugin branch replaces it by the `bbq` scorer on LMScorer (issue 41, item 3)",
    "sbert_topwords": "sentence encoders are no request kind yet: issue 43 adds the `embedding` kind",
    "sbert_cosine": "sentence encoders are no request kind yet: issue 43 adds the `embedding` kind",
    "sbert_valence": "sentence encoders are no request kind yet: issue 43 adds the `embedding` kind",
}


def calls_a_loader(cls: type) -> bool:
    """Whether the class's own code (its methods, not its bases') calls one of :data:`LOADERS`."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return False
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            if name in LOADERS:
                return True
    return False


def loads_a_local_model(cls: type[Scorer]) -> bool:
    """A ``device`` option, or a loader called by the class's own code."""
    return any(option.name == "device" for option in cls.options) or calls_a_loader(cls)


def shape_problems(cls: type[Scorer]) -> list[str]:
    """What keeps a scorer that loads a local model from the layer's shape (empty: it has the shape)."""
    if not loads_a_local_model(cls):
        return []
    problems = []
    if not issubclass(cls, LMScorer):
        problems.append("is not an assoc.lm.LMScorer")
    if not cls.supports_units():
        problems.append("has no work units (plan/run_unit)")
    missing = sorted({option.name for option in MODEL_OPTIONS} - {option.name for option in cls.options})
    if missing:
        problems.append(f"lacks the model options {', '.join(missing)}")
    return problems


def violations(scorers: dict[str, type[Scorer]]) -> dict[str, list[str]]:
    """The scorers of ``scorers`` that load a local model without the layer's shape, with what is wrong."""
    return {name: problems for name, cls in sorted(scorers.items()) if (problems := shape_problems(cls))}


def test_scorers_that_load_a_local_model_are_lm_scorers_with_the_model_options() -> None:
    registry = assoc.plugins.registry()
    scorers = {name: entry.obj for name, entry in registry.scorers.items()}
    assert {"fmat", "pll", "clm", "crows_pairs"} <= set(scorers)  # the rule reads the installed scorers
    found = violations(scorers)
    for name in ("fmat", "pll", "clm", "crows_pairs"):
        assert loads_a_local_model(scorers[name]) and name not in found
    unexpected = {name: problems for name, problems in found.items() if name not in KNOWN}
    assert unexpected == {}, (
        "a scorer that loads a local model is an assoc.lm.LMScorer unit scorer with assoc.lm.MODEL_OPTIONS "
        f"(docs/plugin-api.md): {unexpected}"
    )
    stale = sorted(name for name in KNOWN if name in scorers and name not in found)
    assert stale == [], f"these scorers now have the layer's shape: delete them from KNOWN: {stale}"


# -- planted violations ---------------------------------------------------------------------------------


class DeviceOptionScorer(Scorer):
    """A plain Scorer that runs a model on a device of its own choosing."""

    name = "planted_device"
    options = (Option("device", str, "cpu", "where the model runs"),)

    def score(self, stimuli: Any, models: Any, *, progress: bool) -> Any:
        raise NotImplementedError


class LoaderCallingScorer(Scorer):
    """A plain Scorer without a device option that loads a causal LM itself."""

    name = "planted_loader"

    def score(self, stimuli: Any, models: Any, *, progress: bool) -> Any:
        import transformers

        return transformers.AutoModelForCausalLM.from_pretrained(models[0])


class PartialOptionsScorer(LMScorer):
    """An LMScorer that dropped part of the model options."""

    name = "planted_options"
    options = tuple(option for option in MODEL_OPTIONS if option.name not in ("batch_tokens", "revision"))


class WellShapedScorer(LMScorer):
    """An LMScorer with every model option: no problem."""

    name = "planted_fine"
    options = MODEL_OPTIONS


def test_the_shape_rule_finds_each_planted_violation() -> None:
    planted = {
        cls.name: cls for cls in (DeviceOptionScorer, LoaderCallingScorer, PartialOptionsScorer, WellShapedScorer)
    }
    every = ["backend", "batch_tokens", "cache", "cache_dir", "device", "dtype", "revision", "unit_size"]
    not_lm = ["is not an assoc.lm.LMScorer", "has no work units (plan/run_unit)"]
    assert violations(planted) == {
        "planted_device": [*not_lm, "lacks the model options " + ", ".join(n for n in every if n != "device")],
        "planted_loader": [*not_lm, "lacks the model options " + ", ".join(every)],
        "planted_options": ["lacks the model options batch_tokens, revision"],
    }

"""Plugin discovery: entry points, broken plugins, name clashes, the ASSOC_PLUGINS allow-list."""

from __future__ import annotations

import pytest

import assoc
from assoc.errors import PluginError, UnknownNameError
from assoc.plugins import manager as plugins


def test_entry_point_scorer_is_found_and_runs(fake_distribution, scorer_source):
    fake_distribution("lengthy", scorer_source("lengthy"))
    assert "lengthy" in assoc.scorers()
    table = assoc.score("lengthy", {"target": {"T": ["abcd"]}, "attribute": {"A": ["ab"]}}, scale=2)
    assert table["value"].tolist() == [4.0]
    info = plugins.registry().infos["lengthy"]
    assert info.status == "loaded" and info.scorers == ["lengthy"] and info.version == "0.0.1"


def test_broken_plugin_is_reported_not_fatal(fake_distribution, scorer_source):
    fake_distribution("good", scorer_source("goodscorer"))
    fake_distribution("broken", "import this_module_does_not_exist\n")
    assert "goodscorer" in assoc.scorers()
    info = plugins.registry().infos["broken"]
    assert info.status == "failed"
    assert "ModuleNotFoundError" in info.error and "this_module_does_not_exist" in info.error


def test_plugin_whose_hook_raises_is_reported(fake_plugin):
    fake_plugin(
        "hookfail",
        """
        from assoc import hookimpl
        @hookimpl
        def register_scorers(register):
            raise RuntimeError("cannot find my data")
    """,
    )
    assoc.scorers()
    info = plugins.registry().infos["hookfail"]
    assert info.status == "failed" and "cannot find my data" in info.error


def test_two_plugins_claiming_one_scorer_is_a_clear_error(inline_plugin, length_scorer):
    inline_plugin("one", length_scorer("same", cls="A"))
    inline_plugin("two", length_scorer("same", cls="B"))
    with pytest.raises(PluginError, match="scorer 'same' is registered by both plugin 'one' and plugin 'two'"):
        assoc.score("same", {"target": {"T": ["a"]}, "attribute": {"A": ["b"]}})


def test_allow_list_env_var(fake_distribution, scorer_source, monkeypatch):
    fake_distribution("first", scorer_source("first_scorer"))
    fake_distribution("second", scorer_source("second_scorer"))
    monkeypatch.setenv("ASSOC_PLUGINS", "second")
    plugins.reset()
    names = assoc.scorers()
    assert "second_scorer" in names and "first_scorer" not in names
    assert plugins.registry().infos["first"].status == "disabled"
    monkeypatch.setenv("ASSOC_PLUGINS", "")
    plugins.reset()
    assert all(info.status != "loaded" for name, info in plugins.registry().infos.items() if name != "assoc")


def test_unknown_scorer_suggests(inline_plugin, length_scorer):
    inline_plugin("lengthy", length_scorer("lengthy"))
    with pytest.raises(UnknownNameError, match="did you mean 'lengthy'"):
        assoc.score("lenghty", {"target": {"T": ["a"]}, "attribute": {"A": ["b"]}})


def test_stimuli_hook_and_named_loading(fake_plugin):
    fake_plugin(
        "bundle",
        """
        from assoc import hookimpl, Stimuli
        def load():
            return Stimuli.from_dict({"designs": [
                {"name": "d1", "target": {"T": ["a"]}, "attribute": {"A": ["b"]}},
                {"name": "d2", "target": {"T": ["c"]}, "attribute": {"A": ["d"]}}]}, name="toy")
        @hookimpl
        def register_stimuli(register):
            register("toy", load, "a toy set")
    """,
    )
    assert assoc.stimuli_sets()["toy"] == "a toy set"
    assert [d.name for d in assoc.Stimuli.load("toy")] == ["d1", "d2"]
    assert [d.name for d in assoc.Stimuli.load("toy:d2")] == ["d2"]
    with pytest.raises(UnknownNameError, match="did you mean 'toy'"):
        assoc.Stimuli.load("tyo")


def test_unknown_name_error_names_the_plugins_that_failed(fake_distribution, scorer_source):
    fake_distribution("wordlen", "import this_module_does_not_exist\n")
    with pytest.raises(UnknownNameError) as caught:
        assoc.score("wordlen", {"target": {"T": ["a"]}, "attribute": {"A": ["b"]}})
    message = str(caught.value)
    assert "unknown scorer 'wordlen'" in message
    assert "plugin(s) that failed to load: wordlen (ModuleNotFoundError" in message
    assert "this_module_does_not_exist" in message and "assoc plugins" in message
    assert [info.name for info in assoc.failed_plugins()] == ["wordlen"]
    with pytest.raises(UnknownNameError, match="failed to load: wordlen"):
        assoc.analyze("no_such_analysis", "x.csv")
    with pytest.raises(UnknownNameError, match="unknown stimuli set.*failed to load: wordlen"):
        assoc.Stimuli.load("wordlen_bundle:d1")


def test_did_you_mean_ignores_case():
    from assoc.errors import did_you_mean

    assert did_you_mean("WEAT1", ["weat1", "weat10", "weat2"]) == "; did you mean 'weat1'?"
    assert str(UnknownNameError("design", "WEAT1", ["weat1", "weat2"])).startswith(
        "unknown design 'WEAT1'; did you mean 'weat1'?"
    )


def clash_analysis(cls: str, name: str) -> type[assoc.Analysis]:
    """An analysis class ``Clash<cls>`` registered as ``name`` (two plugins register one name)."""

    def run(self, table):
        return table

    return type(f"Clash{cls}", (assoc.Analysis,), {"name": name, "description": f"analysis from {cls}",
                                                   "citation": "none", "run": run})  # fmt: skip


def test_a_clash_breaks_only_the_clashing_name(inline_plugin, length_scorer):
    from assoc.errors import PluginWarning

    inline_plugin("one", clash_analysis("One", "same"))
    inline_plugin("two", clash_analysis("Two", "same"))
    inline_plugin("lengthy", length_scorer("lengthy"))
    stimuli = {"target": {"T": ["abcd"]}, "attribute": {"A": ["ab"]}}
    with pytest.warns(PluginWarning, match="analysis 'same' is registered by both plugin 'one' and plugin 'two'"):
        table = assoc.score("lengthy", stimuli)
    assert table["value"].tolist() == [2.0]
    with pytest.raises(PluginError, match="analysis 'same' is registered by both plugin 'one' and plugin 'two'"):
        assoc.analyze("same", table)
    infos = plugins.registry().infos
    assert infos["one"].analyses == ["same"] and infos["two"].analyses == ["same"]
    assert "both" in assoc.analyses()["same"]


def test_cli_lists_the_clash_and_keeps_other_commands_working(inline_plugin, length_scorer, tmp_path):
    from click.testing import CliRunner

    from assoc.cli import build_cli

    inline_plugin("one", length_scorer("same", cls="A"))
    inline_plugin("two", length_scorer("same", cls="B"))
    inline_plugin("lengthy", length_scorer("lengthy"))
    stimuli = tmp_path / "s.yaml"
    stimuli.write_text("target: {T: [abcd]}\nattribute: {A: [ab]}\n")
    runner = CliRunner()
    cli = build_cli()
    listed = runner.invoke(cli, ["scorers"])
    assert listed.exit_code == 0
    assert "same" in listed.stdout and "'one'" in listed.stdout and "'two'" in listed.stdout
    assert "warning: scorer 'same' is registered by both plugin 'one' and plugin 'two'" in listed.stderr
    verbose = runner.invoke(cli, ["scorers", "--verbose"])
    assert verbose.exit_code == 0 and "'one'" in verbose.stdout and "'two'" in verbose.stdout
    credited = runner.invoke(cli, ["plugins"])
    assert credited.exit_code == 0
    lines = credited.stdout.splitlines()
    assert any(line.startswith("one ") and "scorers: same" in line for line in lines)
    assert any(line.startswith("two ") and "scorers: same" in line for line in lines)
    other = runner.invoke(cli, ["score", "--scorer", "lengthy", "--stimuli", str(stimuli)])
    assert other.exit_code == 0, other.output
    assert "warning: scorer 'same' is registered by both" in other.stderr
    clashing = runner.invoke(cli, ["score", "--scorer", "same", "--stimuli", str(stimuli)])
    assert clashing.exit_code == 2
    assert "error: scorer 'same' is registered by both plugin 'one' and plugin 'two'" in clashing.stderr


def test_pluggy_wrapper_and_order_markers_are_reported_not_silently_ignored(fake_distribution, scorer_source):
    fake_distribution("good", scorer_source("goodscorer"))
    fake_distribution(
        "wrapping",
        """
        from assoc import hookimpl
        @hookimpl(hookwrapper=True)
        def register_scorers(register):
            yield
    """,
    )
    fake_distribution(
        "ordered",
        """
        from assoc import hookimpl
        @hookimpl(tryfirst=True)
        def register_analyses(register):
            pass
    """,
    )
    import pytest

    with pytest.warns(plugins.PluginWarning, match="tryfirst/trylast on register_analyses has no effect"):
        assert "goodscorer" in assoc.scorers()
    info = plugins.registry().infos["wrapping"]
    assert info.status == "failed" and "hookwrapper/wrapper implementations are not supported" in info.error
    assert plugins.registry().infos["ordered"].status == "loaded"


def test_stimuli_sets_resolve_bundled_names_through_the_installed_registry():
    import ast
    from pathlib import Path

    import assoc.stimuli.sets

    source = Path(assoc.stimuli.sets.__file__).read_text()
    imported = {node.module for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)}
    above = {"plugins", "api", "cli", "builtin", "scorer", "analysis", "component", "executors", "units"}
    assert not imported & above, imported  # the data model reaches nothing above it
    assert assoc.stimuli.sets._bundle_resolver is plugins.get_stimuli_loader
    assert len(assoc.Stimuli.load("caliskan:weat1")) == 1

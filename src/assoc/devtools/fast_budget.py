"""A pytest plugin that fails a run whose tests not marked ``slow`` are far over the fast budget.

``pytest -m "not slow"`` is the part of the suite a developer runs while working, so a test that
takes more than the budget (5 s on two cores, ``docs/dev/testing.md``) must be marked ``slow``. No
test asserts a duration (a clock in an assertion fails on a busy machine); the run checks the
budget instead, from the durations pytest measures for its ``--durations`` report: with
``--fast-budget SECONDS`` (``make test`` gives 5, so CI does too), a phase (setup, call or
teardown) of a test without the ``slow`` marker that took more than :data:`FACTOR` times the
budget fails the run, and the summary names each such test with its duration. The factor leaves
room for a loaded machine; a test that needs it is slow, whatever the machine.

It is enabled for the project's suite by ``-p assoc.devtools.fast_budget`` in
``[tool.pytest.ini_options]``; without ``--fast-budget`` it only adds the option.
"""

from __future__ import annotations

from typing import Any

import pytest

#: How many times the budget an unmarked test may take before the run fails.
FACTOR = 3
#: The marker that exempts a test from the budget.
SLOW_MARKER = "slow"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--fast-budget SECONDS``: fail the run when an unmarked test takes more than 3 x SECONDS."""
    parser.addoption(
        "--fast-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"fail the run when a phase of a test not marked '{SLOW_MARKER}' takes more than {FACTOR} x SECONDS "
        "(pytest's own durations; make test: 5)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Watch the durations when ``--fast-budget`` is given."""
    budget = config.getoption("--fast-budget")
    if budget is not None:
        if budget <= 0:
            raise pytest.UsageError(f"--fast-budget must be a positive number of seconds, got {budget}")
        config.pluginmanager.register(FastBudget(budget), "assoc-fast-budget")


def over_budget(reports: list[Any], budget: float, factor: float = FACTOR) -> list[tuple[str, str, float]]:
    """``(test id, phase, seconds)`` of each report of an unmarked test whose duration exceeds ``factor * budget``."""
    limit = factor * budget
    return [
        (report.nodeid, report.when, float(report.duration))
        for report in reports
        if SLOW_MARKER not in report.keywords and report.duration > limit
    ]


class FastBudget:
    """Collects the reports of unmarked tests over the limit; fails the session and names them at its end."""

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.found: list[tuple[str, str, float]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep a phase of an unmarked test that took more than the limit."""
        self.found += over_budget([report], self.budget)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Fail a run that would otherwise pass when a test was over the limit."""
        if self.found and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Name each test over the limit, slowest first."""
        if not self.found:
            return
        limit = FACTOR * self.budget
        terminalreporter.section("fast budget", sep="=", red=True)
        terminalreporter.line(
            f"{len(self.found)} phase(s) of tests not marked '{SLOW_MARKER}' took more than {FACTOR} x the "
            f"{self.budget:g} s budget ({limit:g} s): mark them @pytest.mark.{SLOW_MARKER} (docs/dev/testing.md)"
        )
        for nodeid, when, seconds in sorted(self.found, key=lambda item: -item[2]):
            terminalreporter.line(f"{seconds:8.2f}s {when:<8} {nodeid}")

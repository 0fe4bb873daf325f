"""A pytest plugin that turns skips for a missing test dependency into failures in CI.

Tests that compare with an oracle (pingouin, scipy, statsmodels) or need an optional
library use :func:`pytest.importorskip`, which is right on a developer's machine but
wrong in CI: a missing oracle would make the run green without checking anything.
With ``ASSOC_STRICT_SKIPS=1`` in the environment (``make test`` sets it, so
``.ci/run`` does too) such a skip fails the test, or the test module at collection,
naming the missing module. Other skips (an explicit ``pytest.skip`` with a reason)
are left alone, and so are skips for a missing assoc plugin package (``assoc_*``): which
plugins are installed is a choice of the environment (``assoc plugins`` reports it), while a
missing oracle is always a broken test setup.

It is enabled for the project's suite by ``-p assoc.devtools.strict_skips`` in
``[tool.pytest.ini_options]``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator
from typing import Any

import pytest

ENV = "ASSOC_STRICT_SKIPS"
#: How :func:`pytest.importorskip` words the reason of a skip for a module that is not installed.
_IMPORT_SKIP = "could not import"


def strict() -> bool:
    """Whether missing test dependencies fail the run (``ASSOC_STRICT_SKIPS`` set to 1/true/yes)."""
    return os.environ.get(ENV, "").strip().lower() in {"1", "true", "yes"}


def _missing_dependency(report: Any) -> str | None:
    """The skip reason if ``report`` is a skip caused by a module that could not be imported."""
    if not report.skipped:
        return None
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    if _IMPORT_SKIP not in reason:
        return None
    module = re.search(r"could not import '([^']+)'", reason)
    if module and module.group(1).split(".")[0].startswith("assoc_"):
        return None  # an optional plugin, not an oracle
    return reason


def _fail(report: Any, reason: str) -> None:
    report.outcome = "failed"
    report.longrepr = (
        f"{reason}\n{ENV} is set: a missing test dependency (an oracle library) fails the run "
        "instead of skipping it; install the test extras (`make setup`)."
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, None]:
    """Fail a test module whose module-level ``importorskip`` skipped it."""
    outcome = yield
    report = outcome.get_result()
    reason = _missing_dependency(report) if strict() else None
    if reason is not None:
        _fail(report, reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """Fail a test whose ``importorskip`` inside the test skipped it."""
    outcome = yield
    report = outcome.get_result()
    reason = _missing_dependency(report) if strict() else None
    if reason is not None:
        _fail(report, reason)

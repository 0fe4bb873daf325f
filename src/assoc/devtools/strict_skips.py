"""A pytest plugin that turns skips for a missing test dependency into failures in CI.

Tests that compare with an oracle (pingouin, scipy, statsmodels) or need an optional
library use :func:`pytest.importorskip`, which is right on a developer's machine but
wrong in CI: a missing oracle would make the run green without checking anything.
With ``ASSOC_STRICT_SKIPS=1`` in the environment (``make test`` sets it, so
``.ci/run`` does too) such a skip fails the test, or the test module at collection,
naming the missing module. A skip counts as such when ``importorskip`` raised it, whatever
its reason says (``importorskip("onnx", reason="the onnx extra")`` too), and only then; a
report that does not carry the exception falls back to pytest's wording of the reason
("could not import").
Other skips (an explicit ``pytest.skip`` with a reason) are left alone, and so are skips for a
missing assoc plugin package (``assoc_*``): which plugins are installed is a choice of the
environment (``assoc plugins`` reports it), while a missing oracle is always a broken test setup.

It is enabled for the project's suite by ``-p assoc.devtools.strict_skips`` in
``[tool.pytest.ini_options]``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator
from pathlib import Path
from typing import Any

import _pytest.outcomes as _outcomes
import pytest

ENV = "ASSOC_STRICT_SKIPS"
#: How :func:`pytest.importorskip` words the reason of a skip for a module that is not installed.
_IMPORT_SKIP = "could not import"


def strict() -> bool:
    """Whether missing test dependencies fail the run (``ASSOC_STRICT_SKIPS`` set to 1/true/yes)."""
    return os.environ.get(ENV, "").strip().lower() in {"1", "true", "yes"}


def _importorskip_module(excinfo: Any) -> str | None:
    """The module ``importorskip`` could not import, when it raised the skip in ``excinfo``."""
    if excinfo is None or not isinstance(excinfo.value, pytest.skip.Exception):
        return None
    for entry in excinfo.traceback:
        if entry.name == "importorskip" and entry.path == Path(_outcomes.__file__):
            module = entry.locals.get("modname")
            return module if isinstance(module, str) else "?"
    return None


def _missing_dependency(report: Any, call: Any = None) -> str | None:
    """The skip reason if ``report`` is a skip caused by a module that could not be imported.

    ``call`` (the :class:`pytest.CallInfo` of the test or collection) tells for sure, from the
    traceback, whether ``importorskip`` raised the skip; without it the reason's wording decides.
    """
    if not report.skipped:
        return None
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    excinfo = getattr(call, "excinfo", None)
    module = _importorskip_module(excinfo)
    if module is None:
        if excinfo is not None or _IMPORT_SKIP not in reason:
            return None  # a skip of another kind (an explicit pytest.skip), whatever its words
        found = re.search(r"could not import '([^']+)'", reason)
        module = found.group(1) if found else "?"
    elif _IMPORT_SKIP not in reason:
        reason = f"could not import {module!r} ({reason.removeprefix('Skipped: ')})"
    if module.split(".")[0].startswith("assoc_"):
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
    # pytest keeps the collection's CallInfo on the report until collect_one_node takes it
    reason = _missing_dependency(report, report.__dict__.get("call")) if strict() else None
    if reason is not None:
        _fail(report, reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """Fail a test whose ``importorskip`` inside the test skipped it."""
    outcome = yield
    report = outcome.get_result()
    reason = _missing_dependency(report, call) if strict() else None
    if reason is not None:
        _fail(report, reason)

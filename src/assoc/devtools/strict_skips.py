"""A pytest plugin that turns skips for a missing reference into failures in CI.

A test that compares with a reference (an oracle library such as pingouin or scipy, a frozen
output of the authors' code in the repository, a file in ``../shared``) must run in CI: a
missing reference would make the run green without checking anything. Under
``ASSOC_STRICT_SKIPS=1`` (``make test`` sets it, so ``.ci/run`` does too), or ``CI=true`` (what CI
services set) when ``ASSOC_STRICT_SKIPS`` is not set, a skip fails the test, or the test module
at collection, naming what is missing:

* a skip raised by :func:`pytest.importorskip`, whatever its reason says
  (``importorskip("onnx", reason="the onnx extra")`` too); a report that does not carry the
  exception falls back to pytest's wording of the reason ("could not import");
* any other skip (an explicit ``pytest.skip``, a ``skipif`` marker) too, unless the test said, with
  :func:`skip_unavailable_to_ci`, that CI cannot have what it needs: data whose licence keeps it
  out of the repository and out of ``../shared`` (SADCAT's ``.rda`` files, sweater's GPL data, the
  CrowS-Pairs authors' unlicensed ``metric.py``). Its reason says what and why.

Skips for a missing assoc plugin package (``importorskip("assoc_...")``) are left alone: which
plugins are installed is a choice of the environment (``assoc plugins`` reports it), while a
missing reference is always a broken test setup.

It is enabled for the project's suite by ``-p assoc.devtools.strict_skips`` in
``[tool.pytest.ini_options]``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator
from pathlib import Path
from typing import Any, NoReturn

import _pytest.outcomes as _outcomes
import pytest

ENV = "ASSOC_STRICT_SKIPS"
#: The variable CI services set (``CI=true``): strict unless ``ASSOC_STRICT_SKIPS`` says otherwise.
CI_ENV = "CI"
#: How :func:`pytest.importorskip` words the reason of a skip for a module that is not installed.
_IMPORT_SKIP = "could not import"
#: How :func:`skip_unavailable_to_ci` begins the reason of its skips (the one kind that CI allows).
UNAVAILABLE_TO_CI = "unavailable to CI: "
_TRUE = {"1", "true", "yes"}


def strict() -> bool:
    """Whether a missing reference fails the run: ``ASSOC_STRICT_SKIPS`` 1/true/yes, or unset and ``CI`` true."""
    setting = os.environ.get(ENV, "").strip().lower()
    if setting:
        return setting in _TRUE
    return os.environ.get(CI_ENV, "").strip().lower() in _TRUE


def skip_unavailable_to_ci(reason: str) -> NoReturn:
    """Skip the test because it needs what CI cannot have, also under ``ASSOC_STRICT_SKIPS``/``CI``.

    Only for references that no CI machine has: data or code whose licence keeps it out of the
    repository and out of ``../shared`` (SADCAT's ``.rda`` files, sweater's GPL data). ``reason``
    says what is missing, why CI cannot have it and how to run the test (which variable to set)::

        if not os.environ.get("ASSOC_SADCAT_DICTIONARIES"):
            skip_unavailable_to_ci("SADCAT's .rda files have no licence ...; set ASSOC_SADCAT_DICTIONARIES to run this")

    A reference that CI has (a frozen output in the repository, a library the test extras install,
    a file in ``../shared``) is skipped with a plain :func:`pytest.skip`, which fails in CI when the
    reference is missing.
    """
    __tracebackhide__ = True  # the skip's location is the test's line, not this function's
    pytest.skip(UNAVAILABLE_TO_CI + reason)


def _importorskip_module(excinfo: Any) -> str | None:
    """The module ``importorskip`` could not import, when it raised the skip in ``excinfo``."""
    if excinfo is None or not isinstance(excinfo.value, pytest.skip.Exception):
        return None
    for entry in excinfo.traceback:
        if entry.name == "importorskip" and entry.path == Path(_outcomes.__file__):
            module = entry.locals.get("modname")
            return module if isinstance(module, str) else "?"
    return None


def _missing_reference(report: Any, call: Any = None) -> tuple[str, str] | None:
    """``(reason, remedy)`` when ``report`` is a skip that fails a strict run, else ``None``.

    ``call`` (the :class:`pytest.CallInfo` of the test or collection) tells for sure, from the
    traceback, whether ``importorskip`` raised the skip; without it the reason's wording decides.
    """
    if not report.skipped:
        return None
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    if UNAVAILABLE_TO_CI in reason:
        return None  # what no CI machine can have (skip_unavailable_to_ci)
    excinfo = getattr(call, "excinfo", None)
    module = _importorskip_module(excinfo)
    if module is None and (excinfo is not None or _IMPORT_SKIP not in reason):
        # an explicit pytest.skip or a skipif marker: a reference CI has, missing here
        return reason, (
            "a missing reference (a frozen output in the repository, a file in ../shared, a library) fails "
            "the run instead of skipping it; a test that needs what CI cannot have says so with "
            "assoc.devtools.strict_skips.skip_unavailable_to_ci."
        )
    if module is None:
        found = re.search(r"could not import '([^']+)'", reason)
        module = found.group(1) if found else "?"
    elif _IMPORT_SKIP not in reason:
        reason = f"could not import {module!r} ({reason.removeprefix('Skipped: ')})"
    if module.split(".")[0].startswith("assoc_"):
        return None  # an optional plugin, not an oracle
    return reason, (
        "a missing test dependency (an oracle library) fails the run instead of skipping it; "
        "install the test extras (`make setup`)."
    )


def _fail(report: Any, found: tuple[str, str]) -> None:
    reason, remedy = found
    report.outcome = "failed"
    report.longrepr = f"{reason}\n{ENV} (or {CI_ENV}=true) is set: {remedy}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, None]:
    """Fail a test module whose module-level skip (``importorskip`` or ``pytest.skip``) skipped it."""
    outcome = yield
    report = outcome.get_result()
    # pytest keeps the collection's CallInfo on the report until collect_one_node takes it
    found = _missing_reference(report, report.__dict__.get("call")) if strict() else None
    if found is not None:
        _fail(report, found)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """Fail a test that a skip inside it, or a ``skipif`` marker, skipped."""
    outcome = yield
    report = outcome.get_result()
    found = _missing_reference(report, call) if strict() else None
    if found is not None:
        _fail(report, found)

"""The project's own development tools, kept apart from the plugin API and the plugin-author kit.

* :mod:`assoc.devtools.reference`: the options reference pages of the documentation site,
  generated from the registry at every ``make docs``.
* :mod:`assoc.devtools.strict_skips`: the pytest plugin that fails a run (``ASSOC_STRICT_SKIPS=1``,
  ``CI=true``) where a test skips because a reference CI has is missing.
* :mod:`assoc.devtools.fast_budget`: the pytest plugin that fails a run (``--fast-budget 5``) where a
  test not marked ``slow`` takes more than three times the budget.
* :mod:`assoc.devtools.rda`: a minimal writer of R data files, for examples and tests.

Nothing in ``assoc`` imports these at run time; a plugin should not either (``assoc.testing``
is the kit for plugin authors' tests).
"""

"""Hypothesis profiles for the property-based suites (``tests/test_properties_*.py``), chosen by the environment
variable ``HYPOTHESIS_PROFILE``:

* ``default``: few examples per property, derandomized (the examples are a function of the test's source, so every
  run, in CI or not, draws the same ones), no deadline (the first call of a policy's event loop may compile it for
  10-30 s) and no example database (nothing written under ``.hypothesis/``). The suites together take well under a
  minute on 2 cores once the kernels are cached.
* ``long``: 25 times the examples, freshly random each run, for a search by hand or a nightly job::

      HYPOTHESIS_PROFILE=long .venv/bin/python -m pytest tests/test_properties_*.py

  A failure prints the minimal example and a ``@reproduce_failure`` blob to replay it.

Each property states its default number of examples with ``@settings(max_examples=scaled(n))``.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
LONG_FACTOR = 25

_COMMON = dict(deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
settings.register_profile("default", max_examples=10, derandomize=True, database=None, **_COMMON)
settings.register_profile("long", max_examples=10 * LONG_FACTOR, derandomize=False, **_COMMON)
if PROFILE not in ("default", "long"):
    raise ValueError(f"HYPOTHESIS_PROFILE = {PROFILE!r}: must be 'default' or 'long'")
settings.load_profile(PROFILE)


def scaled(n: int) -> int:
    """``n`` examples under the default profile, ``LONG_FACTOR`` × n under ``long``."""
    return n * LONG_FACTOR if PROFILE == "long" else n

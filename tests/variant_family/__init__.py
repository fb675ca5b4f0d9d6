"""A family derived from the multiserver-job family, for the test of ``docs/extending.md`` ("Derive a family from
another"): multi-resource jobs on whole nodes (:mod:`.family`). Nothing of the parent is copied."""

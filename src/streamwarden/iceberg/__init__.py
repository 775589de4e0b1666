"""What streamwarden knows about Apache Iceberg, as pure functions (no pyiceberg import here).

- ``types``: Iceberg type strings in the contract's normalized form, and the spec's promotion rules.
- ``lineage``: Flink commit lineage along a branch's ancestry (duplicates, rewinds, forks, strangers).
- ``catalog`` / ``snapshots``: the pyiceberg-facing helpers of the live gatherer (imported lazily).
- ``compat``: the compatibility reading of metadata the spec allows and pyiceberg refuses.
"""

MAIN_BRANCH = "main"  # Iceberg's name for the branch of the table's current snapshot (the spec's, not ours)

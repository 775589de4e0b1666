"""The recovery ledger: an Iceberg table, named in streamwarden.yaml (``ledger:``), that keeps one
row per recovery decision (``gate --record``, ``evidence --record``) and that the live runs read
back (``input.ledger``). ``schema``: its columns (docs/ledger.md); ``store``: creating, writing
and reading it through PyIceberg, and the ``streamwarden-restore-<decision id>`` tag. Nothing here
decides anything: rows are facts, the rules read them."""

"""Fact gatherers: one module per source (deployment files, and the live sources)."""

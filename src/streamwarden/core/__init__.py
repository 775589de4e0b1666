"""The base every layer may import: errors, units and dates, the secret scrubber, escaping, the
run's state (files read once, paths resolved once), progress, package data, self-check mode and
what every server client shares. It imports nothing else of streamwarden."""

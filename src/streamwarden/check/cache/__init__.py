"""The result cache of ``check --cache DIR``: a contract's findings, reused while nothing they
depend on has changed.

What a result depends on, and so what its key holds (``Context`` for the run's part, ``file_key``
for the contract's):

- the contract's text and where it is (its path as shown, and as resolved: deployment paths are
  relative to it);
- every file it reads: the deployment files ``job.deployment`` names are recorded with their
  content hash (or that they are missing) and hashed again on every lookup;
- the policy set (the source of every built-in and custom file, as loaded: in a pull request the
  trusted ref's), the engine and its version, streamwarden's version and the hash of its own
  package files (schemas and key lists included), the repository root, ``flink.known_keys``;
- time, decided from what the evaluation read (``timing_for``), never from a policy's text: the
  engine says which policy files' read sites of ``input.now_ms`` ran (engine/timeread.py,
  ``Engine.evaluate_reading``). None: the result holds at any time. Only the built-in waiver
  package (SW-WAIVER-001's expiry and horizon, the one such read of a static check's built-in
  files): it compares the time with each waiver's end and with the instant its expires day comes
  within ``waivers.max_horizon`` (part of the key), so the entry holds from the waiver end at or before
  its time to the next one after it, and the places where its findings show the time (an expired
  waiver's evidence) show the time of the run that reuses it. Anything else (a custom policy
  whose read of the time ran, however it reached it): only at that exact time (a ``--now`` replay).

Not cached: live facts (a run with ``--env`` neither reads nor writes the cache), a contract that
does not load (its errors are reported afresh), a contract a pull request changes (its base and
history are part of its input; an unchanged one under unchanged policies is evaluated without its
base, so its entry is the plain check's), runs that keep every input document (``diff``). The
contract review of ``check --base --format markdown|github`` uses the cache: its hits are the
contracts the pull request leaves as they are (``RunResult.cached``), for which the review lists
nothing (an entry with a finding of a rule that compares with the base is a miss there: the
review would list it with the contract's consumers).

Entries are data, never code: one JSON file each, checked field by field when read (a file that
is not a valid entry for its key is a miss and is overwritten), written to a temporary file and
renamed into place, and read without following symbolic links. The directory is bounded
(``MAX_ENTRIES``; the entries used least recently go first). A run also leaves its entries in one
*pack* (``packs/``, the ``MAX_PACKS`` most recent): the next run reads the newest pack once and
looks each file up there first (the same run again, or in a pull request the base branch's run),
then in its own file; a pack entry is checked exactly as an entry file is (key, fields, time,
the files it read). A cache directory with files that git
tracks is not used: a commit cannot plant results. In self-check mode
(``STREAMWARDEN_SELF_CHECK=1``) a run answers from the cache as any run does, then evaluates every
hit again: a difference in what it reports, or a hit the contract review would list as changed,
is an error.

Its parts: ``key`` (what a result depends on), ``timing`` (how long it holds), ``entry`` (the
on-disk codec), ``store`` (``ResultCache``: entries and packs), ``prefetch`` (the forked child),
``disk`` (reads and writes that follow no link, eviction). This module is their public face.
"""

from __future__ import annotations

from streamwarden.check.cache.entry import FORMAT, Entry, RuleText
from streamwarden.check.cache.key import (
    Context,
    deployment_paths,
    engine_build,
    engine_fingerprint,
    file_key,
    file_state,
    make_context,
    tool_fingerprint,
)
from streamwarden.check.cache.prefetch import StatePrefetch
from streamwarden.check.cache.store import DEFAULT_DIR, ResultCache, Stats, newest_pack
from streamwarden.check.cache.timing import Timing, finding_to_json, timing_for

__all__ = [
    "DEFAULT_DIR",
    "FORMAT",
    "Context",
    "Entry",
    "ResultCache",
    "RuleText",
    "StatePrefetch",
    "Stats",
    "Timing",
    "deployment_paths",
    "engine_build",
    "engine_fingerprint",
    "file_key",
    "file_state",
    "finding_to_json",
    "make_context",
    "newest_pack",
    "timing_for",
    "tool_fingerprint",
]

"""The one exit-code decision of every command: 2 when the input could not be used (an invalid
contract or flag, an unknown pipeline or environment, a broken setup: nothing was decided), else 1
when the verb's own outcome fails (findings at or above ``fail_on``, a breaking change, a gate's
deny, a failing policy test), else 0. Each verb says which of those it reached; only this module
maps them to numbers."""

from __future__ import annotations

OK, FAILED, UNUSABLE = 0, 1, 2


def exit_code(*, unusable: bool = False, failed: bool = False) -> int:
    return UNUSABLE if unusable else FAILED if failed else OK

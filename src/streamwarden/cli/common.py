"""What every command shares: the error handler (exit 2 with a message, never a traceback), the
time flags, the configuration, writing a report, and the options spelt the same everywhere."""

from __future__ import annotations

import datetime as _dt
import functools
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from streamwarden.check.options import ENGINES
from streamwarden.contracts.config import Config, load_config
from streamwarden.core import exitcodes
from streamwarden.core.errors import StreamwardenError, UsageError
from streamwarden.core.escape import log_text, shown_name

COLOR_CHOICES = ("auto", "always", "never")

F = TypeVar("F", bound=Callable[..., Any])


def say(text: str, err: bool = True) -> None:
    """Lines for the user (stderr by default): secrets scrubbed first, then control characters
    and workflow commands defused (escape.log_text; a file name, a contract value, a server string
    or a policy's print may be part of them)."""
    from streamwarden.core.secrets import scrub

    click.echo(log_text(scrub(text)), err=err)


def fail(message: str) -> None:
    """A message on stderr, as :func:`say` writes it."""
    say(f"streamwarden: {message}")


def handle_errors(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StreamwardenError as exc:
            fail(exc.render())
            sys.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except OSError as exc:  # the system refused a path the user gave (too long, no permission)
            if os.environ.get("STREAMWARDEN_DEBUG"):
                raise
            fail(system_error(exc).render())
            sys.exit(exitcodes.UNUSABLE)
        except Exception as exc:  # a bug: say so plainly, never a traceback
            fail(
                f"internal error: {type(exc).__name__}: {exc} "
                "(please report this; set STREAMWARDEN_DEBUG=1 for details)"
            )
            if os.environ.get("STREAMWARDEN_DEBUG"):
                raise
            sys.exit(exitcodes.UNUSABLE)

    return wrapper  # type: ignore[return-value]


def system_error(exc: OSError) -> StreamwardenError:
    """An operating-system error as the user's to fix: the path it names (escaped: a name may be
    any bytes) and the system's reason. Reading a file the user named, creating a directory, writing
    an output: what fails there is the path, its permissions or the disk, not streamwarden."""
    name = exc.filename
    shown = shown_name(os.fsdecode(name)) if isinstance(name, (str, bytes)) else None
    reason = exc.strerror or str(exc)
    return StreamwardenError(
        f"cannot use this path: {reason}" if shown else f"the operating system refused: {reason}",
        file=shown,
        hint="check the path (its length, that it exists, its permissions) and the disk, then run again",
    )


def parse_now(value: str | None) -> int | None:
    if not value:
        return None
    try:
        when = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--now {value!r} is not an RFC 3339 time", hint="e.g. --now 2026-11-25T12:00:00Z") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return int(when.timestamp() * 1000)


def now_or(value: str | None) -> int:
    """``--now`` in epoch ms, else the current time."""
    from streamwarden.check.run import now_ms

    parsed = parse_now(value)
    return parsed if parsed is not None else now_ms()


_AGO = re.compile(r"^(\d+)(ms|s|m|h|d)$")


def parse_time(value: str | None, flag: str, now_ms: int) -> int | None:
    """An RFC 3339 time, or a duration before now (``6h``, ``90m``)."""
    if not value:
        return None
    m = _AGO.match(value.strip())
    if m:
        from streamwarden.core.units import parse_duration

        try:
            since = now_ms - parse_duration(value.strip())
        except ValueError as exc:
            raise UsageError(f"{flag} {exc}", hint=f"e.g. {flag} 6h or {flag} 7d") from None
        if since < 0:
            raise UsageError(f"{flag} {value!r} reaches back before 1970", hint=f"e.g. {flag} 6h or {flag} 7d")
        return since
    try:
        return parse_now(value)
    except UsageError:
        raise UsageError(
            f"{flag} {value!r} is not an RFC 3339 time or a duration",
            hint=f"e.g. {flag} 2026-11-25T12:00:00Z or {flag} 6h",
        ) from None


def config_from(config_path: str | None) -> Config:
    """``--config FILE``, else ./streamwarden.yaml (or the defaults when there is none)."""
    return load_config(config_path, Path.cwd())


def write(text: str, output: str | None, color: bool = False) -> None:
    """A report to ``output`` or stdout. Each renderer escapes its own output (streamwarden.core.escape);
    this is the last net: no configured secret value is ever written."""
    from streamwarden.core.secrets import scrub

    text = scrub(text, shapes=False)
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write output: {exc.strerror}", file=output) from None
    else:
        click.echo(text, nl=False, color=color or None)  # --color always keeps colour in a pipe


def engine_options(engine: str, opa_url: str | None) -> dict[str, Any]:
    """The engine's options from the flags: the OPA server's URL with ``--engine opa``."""
    return {"url": opa_url} if engine == "opa" and opa_url else {}


config_option = click.option(
    "--config", "config_path", metavar="FILE", help="streamwarden.yaml (default: ./streamwarden.yaml)."
)
policy_option = click.option(
    "--policy", "policy_dirs", multiple=True, metavar="DIR", help="Add custom Rego policies (repeatable)."
)
engine_option = click.option(
    "--engine", type=click.Choice(ENGINES), default="regorus", show_default=True, help="Rego engine."
)
opa_url_option = click.option(
    "--opa-url",
    metavar="URL",
    envvar="STREAMWARDEN_OPA_URL",
    help="With --engine opa: the OPA server, e.g. http://localhost:8181 (or STREAMWARDEN_OPA_URL).",
)
color_option = click.option(
    "--color",
    "color",
    type=click.Choice(COLOR_CHOICES),
    default="auto",
    show_default=True,
    help="Colour in the text report: auto (on a terminal, unless NO_COLOR is set), always (even with NO_COLOR), never.",
)

"""The progress line: on a terminal for long runs only, quiet in CI unless --verbose."""

from __future__ import annotations

import io
import time

from tests.reporting import EXAMPLES, run_check

from streamwarden.core import progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_mode_is_a_line_on_a_terminal_and_quiet_in_ci_unless_verbose() -> None:
    assert progress.choose_mode(False, Terminal(), {}) == progress.TTY
    assert progress.choose_mode(False, Terminal(), {"CI": "true"}) == progress.OFF
    assert progress.choose_mode(True, Terminal(), {"GITHUB_ACTIONS": "true"}) == progress.PLAIN
    assert progress.choose_mode(False, io.StringIO(), {}) == progress.OFF
    assert progress.choose_mode(True, io.StringIO(), {}) == progress.PLAIN


def wait_for(stream: io.StringIO, text: str, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while text not in stream.getvalue():
        assert time.monotonic() < deadline, f"{text!r} never appeared in {stream.getvalue()!r}"
        time.sleep(0.01)


def test_a_long_run_on_a_terminal_redraws_one_line_with_counts_and_erases_it() -> None:
    out = Terminal()
    bar = progress.Progress("checking contracts", progress.TTY, out, delay=0.0, interval=0.01).start()
    progress.set_total(10)
    progress.advance(3)
    wait_for(out, "3/10")
    bar.finish("checked 10 pipelines")
    text = out.getvalue()
    assert text.startswith("\r\x1b[2Kstreamwarden: checking contracts…")
    assert "\n" not in text  # one line, redrawn in place
    assert text.endswith("\r\x1b[2K")  # erased; the summary is only for --verbose


def test_a_short_run_prints_nothing() -> None:
    out = Terminal()
    progress.Progress("checking contracts", progress.TTY, out, delay=5.0).start().finish("done")
    assert out.getvalue() == ""


def test_verbose_in_ci_prints_plain_lines_and_a_summary() -> None:
    out = io.StringIO()
    bar = progress.Progress("checking contracts", progress.PLAIN, out, delay=0.0, interval=0.01, verbose=True).start()
    progress.advance(2)
    wait_for(out, "2 done")
    bar.finish("checked 2 pipelines in 0.1s")
    lines = out.getvalue().splitlines()
    assert all("\r" not in line for line in lines)
    assert lines[-1] == "streamwarden: checked 2 pipelines in 0.1s"


def test_reporting_progress_without_a_display_is_a_no_op(capsys) -> None:  # type: ignore[no-untyped-def]
    progress.set_total(5)
    progress.advance()  # nothing active: must not raise or print
    progress.advance(3)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_check_verbose_reports_timing_on_stderr_and_is_quiet_otherwise() -> None:
    quiet = run_check(*EXAMPLES, "--format", "json")
    assert quiet.stderr == ""
    verbose = run_check(*EXAMPLES, "--format", "json", "--verbose")
    assert verbose.stdout == quiet.stdout
    lines = verbose.stderr.splitlines()
    assert all(line.startswith("streamwarden: checking contracts…") for line in lines[:-1])  # a slow machine
    assert lines[-1].startswith("streamwarden: checked 4 pipelines in ") and lines[-1].endswith("(engine regorus)")

"""An attempt's output in the console: the job page tails a running shell command live (lines show
while it still runs, a secret as ***), follow keeps the newest line in view until the reader
scrolls up, pause stops reading until resumed, and download saves what the server kept. Long
lines wrap in the box (no sideways scroll), and a finished attempt offers no Follow."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from api_client import ApiClient
from conftest import E2E_SECRET_VALUE, Server
from playwright.sync_api import Page, expect

SH = "/bin/sh"
LONG_LINE = "partition-copy " + "w" * 400  # one word longer than any box: it must wrap


def _gated_job(admin_api: ApiClient, gate: Path, unique: str) -> int:
    # 120 numbered lines (more than the box shows), then wait for the gate, then two more lines.
    script = ('i=1; while [ $i -le 120 ]; do echo "line $i"; i=$((i+1)); done; '
              f'echo "token=$1"; echo "{LONG_LINE}"; '
              f'while [ ! -e {gate} ]; do sleep 0.1; done; echo "after the gate"; echo "{unique}" >&2')
    job = admin_api.create_job("shell.command", {
        "argv": [SH, "-c", script, "sh", {"$secret": "E2E_OUTPUT_TOKEN"}]}, max_attempts=1)
    return int(job["id"])


def test_the_job_page_tails_a_running_commands_output_live(
        page: Page, server: Server, admin_api: ApiClient, unique: str, screenshot,
        signed_in: Callable[..., None]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp).chmod(0o777)  # a root worker runs the command as nobody
        gate = Path(tmp) / "gate"
        job_id = _gated_job(admin_api, gate, unique)
        signed_in(page, "ADMIN")
        page.goto(f"/jobs/{job_id}")
        output = page.get_by_label("Output of attempt 1")
        expect(output).to_contain_text("line 120")
        expect(output).to_contain_text("token=***")
        expect(output).to_contain_text(LONG_LINE)
        assert output.evaluate("el => el.scrollWidth <= el.clientWidth"), "long lines must wrap"
        expect(output).to_have_attribute("tabindex", "0")  # still keyboard-scrollable (axe)
        assert E2E_SECRET_VALUE not in output.inner_text(), "a secret's value reached the console"
        assert admin_api.job(job_id)["status"] == "RUNNING", "lines must show while it runs"
        expect(page.get_by_text("· live")).to_be_visible()
        # The running attempt's lease reads as English ("lease until in 2 seconds" did not).
        expect(page.get_by_text(re.compile(r"Last heartbeat .*, lease (expires in|expired) "))) \
            .to_be_visible()
        expect(page.locator("main")).not_to_contain_text("lease until")

        # Follow: the newest line is in view; scrolling up turns follow off.
        follow = page.get_by_role("switch", name="Follow")
        expect(follow).to_be_checked()
        assert output.evaluate("el => el.scrollHeight > el.clientHeight"), "the box must scroll"
        assert output.evaluate("el => el.scrollHeight - el.scrollTop - el.clientHeight < 4")
        output.evaluate("el => { el.scrollTop = 0; el.dispatchEvent(new Event('scroll')); }")
        expect(follow).not_to_be_checked()
        screenshot(page, "job-output-live")

        # Pause: nothing more is read, even after the command goes on and ends.
        page.get_by_role("button", name="Pause").click()
        expect(page.get_by_text("· paused")).to_be_visible()
        gate.touch()
        admin_api.wait_for_job(job_id, {"SUCCEEDED"})
        expect(output).not_to_contain_text("after the gate", timeout=2_500)

        page.get_by_role("button", name="Resume").click()
        expect(output).to_contain_text("after the gate")
        expect(output).to_contain_text(unique)  # stderr is part of the output
        expect(page.get_by_role("button", name="Pause")).to_be_hidden()  # finished: nothing to pause
        expect(page.get_by_role("switch", name="Follow")).to_have_count(0)  # nor to follow

    with page.expect_download() as download:
        page.get_by_role("button", name="Download").click()
    saved = Path(download.value.path()).read_text()
    assert download.value.suggested_filename == f"job-{job_id}-attempt-1.txt"
    assert saved.startswith("line 1\nline 2\n") and "after the gate" in saved
    assert E2E_SECRET_VALUE not in saved
    attempt = admin_api.job(job_id)["attempts"][0]
    assert attempt["output_bytes"] == len(saved.encode())


def test_a_job_that_printed_nothing_says_so(page: Page, server: Server,
                                            admin_api: ApiClient,
                                            signed_in: Callable[..., None]) -> None:
    job = admin_api.create_job("noop", {})
    admin_api.wait_for_job(int(job["id"]), {"SUCCEEDED"})
    signed_in(page, "ADMIN")
    page.goto(f"/jobs/{job['id']}")
    expect(page.get_by_label("Output of attempt 1")).to_have_text("This attempt wrote nothing.")
    expect(page.get_by_role("button", name="Download")).to_be_disabled()

"""Following a check on the server until it ends: long-polls, a spinner on a terminal,
and a cancel on the server when the user presses Ctrl+C."""

from __future__ import annotations

import contextlib

from skynet_client.exits import Stop


def wait_for_check(client, check: dict, output) -> dict:
    with output.progress(f"Check {check['id']}: {check['status']}") as update:
        try:
            while not check["final"]:
                check = client.get(f"/checks/{check['id']}/wait", params={"timeout": 25})
                update(description=f"Check {check['id']}: {check['status']}")
        except KeyboardInterrupt:
            with contextlib.suppress(Stop):
                client.post(f"/checks/{check['id']}/cancel")
            raise
    check["page"] = f"{client.server.url}{check['url']}"
    return check

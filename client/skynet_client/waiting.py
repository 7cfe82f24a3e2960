"""Following a check or an evaluation on the server until it ends: long-polls, a spinner
(a check) or a bar of cases done (an evaluation) on a terminal, and a cancel on the
server when the user presses Ctrl+C."""

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


def wait_for_evaluation(client, evaluation: dict, output) -> dict:
    number = evaluation["id"]

    def described(evaluation: dict) -> str:
        return f"Evaluation {number}: {evaluation['status_label']}"

    with output.progress(described(evaluation), total=evaluation["total"]) as update:
        try:
            while not evaluation["final"]:
                evaluation = client.get(
                    f"/evaluations/{number}/wait",
                    params={"timeout": 25, "since": evaluation["token"]},
                )
                update(evaluation["done"], evaluation["total"], described(evaluation))
        except KeyboardInterrupt:
            with contextlib.suppress(Stop):
                client.post(f"/evaluations/{number}/cancel")
                output.error(f"Evaluation {number} cancelled on the server.")
            raise
    evaluation["page"] = f"{client.server.url}{evaluation['url']}"
    return evaluation

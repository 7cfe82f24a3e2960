"""Following a check, an evaluation or a run on the server: long-polls, a spinner (a
check) or a progress bar (cases done of an evaluation, metric calls of a run's budget) on
a terminal. Ctrl+C stops the watching and exits 130; what was watched goes on on the
server, unless --cancel-on-interrupt asked for it to be cancelled there too."""

from __future__ import annotations

import contextlib
import time

from skynet_client.exits import INTERRUPTED, Stop


def interrupted(client, what: str, path: str, url: str, cancel: bool) -> Stop:
    """What Ctrl+C while watching `what` (at API `path`, page `url`) ends in: exit 130,
    saying whether it was cancelled on the server or goes on there."""
    page = f"{client.server.url}{url}"
    if cancel:
        with contextlib.suppress(Stop):
            client.post(f"{path}/cancel")
            return Stop(INTERRUPTED, f"Interrupted: {what} cancelled on the server ({page}).")
        return Stop(INTERRUPTED, f"Interrupted: {what} could not be cancelled: {page}")
    return Stop(INTERRUPTED, f"Stopped watching. {what} goes on: {page}")


def wait_for_check(client, check: dict, output, *, cancel: bool = False) -> dict:
    with output.progress(f"Check {check['id']}: {check['status']}") as update:
        try:
            while not check["final"]:
                check = client.get(f"/checks/{check['id']}/wait", params={"timeout": 25})
                update(description=f"Check {check['id']}: {check['status']}")
        except KeyboardInterrupt:
            path = f"/checks/{check['id']}"
            raise interrupted(client, f"Check {check['id']}", path, check["url"], cancel) from None
    check["page"] = f"{client.server.url}{check['url']}"
    return check


def wait_for_evaluation(client, evaluation: dict, output, *, cancel: bool = False) -> dict:
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
            what, path = f"Evaluation {number}", f"/evaluations/{number}"
            raise interrupted(client, what, path, evaluation["url"], cancel) from None
    evaluation["page"] = f"{client.server.url}{evaluation['url']}"
    return evaluation


# A wait answered at once with nothing new (the server's share of waiting requests was
# taken): ask again after this long rather than at once.
ASK_AGAIN_S = 2.0


def _progress_words(run: dict) -> str:
    progress = run["progress"]
    best = progress.get("best_score")
    scored = "no score yet" if best is None else f"best {best:.3g}"
    return f"Run {run['id']}: {run['status']}, {scored}"


def follow_run(client, run: dict, output, *, cancel: bool = False) -> dict:
    """Long-poll a run until it stops (finished, failed, cancelled, or paused, which needs
    a Resume), with a bar of its metric calls against the budget on a terminal."""
    try:
        return _follow_run(client, run, output)
    except KeyboardInterrupt:
        path = f"/runs/{run['id']}"
        raise interrupted(client, f"Run {run['id']}", path, run["url"], cancel) from None


def _follow_run(client, run: dict, output) -> dict:
    progress = run["progress"]
    with output.progress(_progress_words(run), total=progress["max_metric_calls"] or None) as bar:
        while run["live"]:
            asked = time.monotonic()
            before = run["token"]
            run = client.get(f"/runs/{run['id']}/wait", params={"timeout": 25, "since": before})
            progress = run["progress"]
            bar(
                done=progress["metric_calls"],
                total=progress["max_metric_calls"] or None,
                description=_progress_words(run),
            )
            if run["token"] == before and time.monotonic() - asked < ASK_AGAIN_S / 2:
                time.sleep(ASK_AGAIN_S)
    run["page"] = f"{client.server.url}{run['url']}"
    return run

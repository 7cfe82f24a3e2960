"""Following a check, an evaluation or a run on the server: long-polls, a spinner (a
check) or a progress bar (cases done of an evaluation, metric calls of a run's budget) on
a terminal. Ctrl+C stops the watching and exits 130; what was watched goes on on the
server, unless --cancel-on-interrupt asked for it to be cancelled there too."""

from __future__ import annotations

import contextlib
import time

from skynet_client.exits import INTERRUPTED, Stop
from skynet_client.words import _


def interrupted(client, what: str, path: str, url: str, cancel: bool) -> Stop:
    """What Ctrl+C while watching `what` (at API `path`, page `url`) ends in: exit 130,
    saying whether it was cancelled on the server or goes on there."""
    page = f"{client.server.url}{url}"
    if cancel:
        with contextlib.suppress(Stop):
            client.post(f"{path}/cancel")
            said = _("Interrupted: {what} cancelled on the server ({page}).")
            return Stop(INTERRUPTED, said.format(what=what, page=page))
        said = _("Interrupted: {what} could not be cancelled: {page}")
        return Stop(INTERRUPTED, said.format(what=what, page=page))
    return Stop(
        INTERRUPTED, _("Stopped watching. {what} goes on: {page}").format(what=what, page=page)
    )


def wait_for_check(client, check: dict, output, *, cancel: bool = False) -> dict:
    def described(check: dict) -> str:
        # A queued check says why it waits (the server's words, in the user's language).
        status = (check.get("waiting") or {}).get("message") or check["status"]
        return _("Check {id}: {status}").format(id=check["id"], status=status)

    with output.progress(described(check)) as update:
        try:
            while not check["final"]:
                check = client.get(f"/checks/{check['id']}/wait", params={"timeout": 25})
                update(description=described(check))
        except KeyboardInterrupt:
            path = f"/checks/{check['id']}"
            what = _("Check {id}").format(id=check["id"])
            raise interrupted(client, what, path, check["url"], cancel) from None
    check["page"] = f"{client.server.url}{check['url']}"
    return check


def wait_for_evaluation(client, evaluation: dict, output, *, cancel: bool = False) -> dict:
    number = evaluation["id"]

    def described(evaluation: dict) -> str:
        return _("Evaluation {id}: {status}").format(id=number, status=evaluation["status_label"])

    with output.progress(described(evaluation), total=evaluation["total"]) as update:
        try:
            while not evaluation["final"]:
                evaluation = client.get(
                    f"/evaluations/{number}/wait",
                    params={"timeout": 25, "since": evaluation["token"]},
                )
                update(evaluation["done"], evaluation["total"], described(evaluation))
        except KeyboardInterrupt:
            what, path = _("Evaluation {id}").format(id=number), f"/evaluations/{number}"
            raise interrupted(client, what, path, evaluation["url"], cancel) from None
    evaluation["page"] = f"{client.server.url}{evaluation['url']}"
    return evaluation


# A wait answered at once with nothing new (the server's share of waiting requests was
# taken): ask again after this long rather than at once.
ASK_AGAIN_S = 2.0


def _progress_words(run: dict) -> str:
    progress = run["progress"]
    best = progress.get("best_score")
    if best is None:
        return _("Run {id}: {status}, no score yet").format(id=run["id"], status=run["status"])
    return _("Run {id}: {status}, best {best}").format(
        id=run["id"], status=run["status"], best=f"{best:.3g}"
    )


def follow_run(client, run: dict, output, *, cancel: bool = False) -> dict:
    """Long-poll a run until it stops (finished, failed, cancelled, or paused, which needs
    a Resume), with a bar of its metric calls against the budget on a terminal."""
    try:
        return _follow_run(client, run, output)
    except KeyboardInterrupt:
        path = f"/runs/{run['id']}"
        what = _("Run {id}").format(id=run["id"])
        raise interrupted(client, what, path, run["url"], cancel) from None


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

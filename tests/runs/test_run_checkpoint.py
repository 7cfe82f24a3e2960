"""gepa's checkpoint in the run's row: signed by the worker that stored it, and put back
for gepa (which unpickles it) only when the signature holds. A checkpoint changed in the
database, another run's, or one stored before checkpoints were signed is never loaded:
the run ends saying why, with what it found kept."""

from __future__ import annotations

import pickle

import pytest

from runs import checkpoints, execution, services
from runs.models import Run, RunEvent
from tests import quiz
from tests.providers.fakes import Reply
from tests.runs.run_data import make_quiz_run, quiz_models, run_while_failing
from tests.runs.test_run_pages import text_of

pytestmark = pytest.mark.django_db

REFUSED = (
    "Its saved checkpoint was not loaded: its signature does not match (it was changed "
    "after it was saved, is another run's, or was saved before checkpoints were signed). "
    "What the run found until then is kept; submit the run again to start over."
)


class Planted:
    """Unpickled, it writes a file: what any code a pickle names could do in the worker."""

    def __init__(self, marker) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').close()",))


@pytest.fixture(autouse=True)
def _runs_dir(settings, tmp_path):
    settings.RUNS_DIR = tmp_path / "runs"


@pytest.fixture
def paused(owner, session_models):
    """A quiz run paused by its reflection model's provider, with the checkpoint its
    worker stored."""
    run = make_quiz_run(owner, budget=60)
    down = Reply(status=503, body={"error": {"message": "overloaded"}}, when=quiz.REFLECTION_MARK)
    with quiz_models(session_models):
        run_while_failing(session_models, run, down, 50)
    assert (run.status, run.failure) == ("paused", "provider_failed") and run.checkpoint
    return run


@pytest.fixture
def resume(django_capture_on_commit_callbacks, session_models):
    """resume(run): Resume clicked, then the runs worker's task run here."""

    def go(run: Run) -> Run:
        with django_capture_on_commit_callbacks(execute=False):
            assert services.run_resume(run) is True
        with quiz_models(session_models):
            execution.execute_run(run.pk)
        run.refresh_from_db()
        return run

    return go


def assert_refused(client, run: Run) -> None:
    """Ended, saying why, its checkpoint and folder let go; what it found is kept."""
    assert (run.status, run.failure, run.checkpoint) == ("failed", "checkpoint_refused", None)
    assert not RunEvent.objects.filter(run=run, kind="resumed").exists()
    html = client.get(f"/en/runs/{run.pk}/").content.decode()
    assert REFUSED in text_of(html)


def test_a_checkpoint_replaced_by_a_pickle_that_runs_code_is_never_loaded(
    owner_client, owner, resume, tmp_path
):
    # The planted bytes do run code when unpickled: the test is not vacuous.
    pickle.loads(pickle.dumps(Planted(tmp_path / "proof")))
    assert (tmp_path / "proof").exists()
    marker = tmp_path / "unpickled"
    run = make_quiz_run(owner)
    # Unsigned, as every checkpoint stored before they were signed is.
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.PAUSED, attempt=1, checkpoint=pickle.dumps(Planted(marker))
    )
    run = resume(run)
    assert not marker.exists()
    assert_refused(owner_client, run)
    assert not (tmp_path / "runs" / str(run.pk)).exists()


def test_a_checkpoint_changed_after_it_was_saved_is_not_loaded(owner_client, paused, resume):
    kept = paused.result
    changed = bytearray(paused.checkpoint)
    changed[len(changed) // 2] ^= 0x01
    Run.objects.filter(pk=paused.pk).update(checkpoint=bytes(changed))
    run = resume(paused)
    assert_refused(owner_client, run)
    assert run.result == kept and run.result["seed"]["val_mean"] == 0.0


def test_another_runs_checkpoint_is_not_loaded(owner_client, owner, paused, resume):
    other = make_quiz_run(owner)
    Run.objects.filter(pk=other.pk).update(
        status=Run.Status.PAUSED, attempt=1, checkpoint=paused.checkpoint
    )
    assert_refused(owner_client, resume(other))
    # Its own run still goes on from it.
    run = resume(paused)
    assert (run.status, run.attempt) == ("finished", 2)
    assert RunEvent.objects.filter(run=run, kind="resumed").count() == 1


def test_a_signature_holds_for_its_own_run_and_secret_key_only(settings):
    stored = checkpoints.sign(7, b"gepa's state")
    assert checkpoints.verify(7, memoryview(stored)) == b"gepa's state"
    for run_id, bytes_ in (
        (8, stored),  # another run's
        (7, stored[:-1]),  # cut short
        (7, stored[: len(checkpoints.HEADER) + 31]),  # not even a whole signature
        (7, b"gepa's state"),  # unsigned
    ):
        with pytest.raises(checkpoints.CheckpointRefused):
            checkpoints.verify(run_id, bytes_)
    settings.SECRET_KEY = "another-" + "k" * 50
    with pytest.raises(checkpoints.CheckpointRefused):
        checkpoints.verify(7, stored)

"""Usage errors of `skynet align`, `skynet accept-prompt` and `skynet labels`: exit 2 with
argparse's line, or the command's own, before any request, in the language asked for."""

from __future__ import annotations

import pytest

from skynet_client import main as client_main
from skynet_client import words


@pytest.fixture(autouse=True)
def _english_after():
    """main() makes the language it was asked for the process's: the next test's is not."""
    yield
    words.use("en")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["align"], "the following arguments are required: EVALUATION_ID"),
        (["align", "seven"], "argument EVALUATION_ID: invalid int value: 'seven'"),
        (["align", "7", "--budget", "many"], "argument --budget: invalid int value: 'many'"),
        (["accept-prompt"], "the following arguments are required: RUN_ID"),
        (["accept-prompt", "7", "--watch"], "unrecognized arguments: --watch"),
        (["labels", "--export"], "--export needs a LABELLING_ID: `skynet labels` lists them."),
        (["labels", "one"], "argument LABELLING_ID: invalid int value: 'one'"),
    ],
)
def test_a_wrong_command_line_is_a_usage_error(argv, said, capsys):
    assert client_main.main([*argv, "--token", "skn_x"]) == 2
    assert said in capsys.readouterr().err


def test_a_usage_error_of_labels_is_said_in_spanish(capsys):
    assert client_main.main(["labels", "--export", "--token", "skn_x", "--language", "es"]) == 2
    err = capsys.readouterr().err
    assert "LABELLING_ID" in err and "needs" not in err, err

"""A judge that lacks a rule people hold, for the alignment tests.

People fail an answer that cites no source; the judge's prompt never asks for one, so its
model passes every answer (every one is right). The fake judge model (`judge_reply`) fails
an answer without "Source:" only when the prompt it gets says to cite a source (PHRASE);
the fake reflection model (`reflection_answer`) proposes a prompt that says so. Both
answer through tests.providers.fakes.FakeProvider (`respond`) over real HTTP, or as a
contract handler (`judge_handler`) for a check run here.
"""

from __future__ import annotations

import csv
import io
import textwrap

from tests import quiz

PHRASE = "cite a source"
RULE = "FAIL any answer that does not cite a source."
ROWS = 30

JUDGE_PROMPT = (
    "You grade answers to questions.\nSay PASS if the answer is right, else FAIL, then why."
)

JUDGE = textwrap.dedent(
    '''
    """Model as judge: the metric model grades the recorded answer."""
    from skynet import llm

    # What the judge is told; the rest of the file only asks and reads.
    JUDGE_PROMPT = """You grade answers to questions.
    Say PASS if the answer is right, else FAIL, then why."""


    def score(input, output, expected=None):
        verdict = llm(JUDGE_PROMPT, input=f"Question: {input['question']}\\nAnswer: {output}")
        passed = verdict.strip().upper().startswith("PASS")
        return (1.0 if passed else 0.0), {"feedback": verdict}
    '''
).lstrip()


def cites(i: int) -> bool:
    """Row i's answer cites a source: every other row, and a few more."""
    return i % 2 == 0 or i % 7 == 0


def answer(i: int) -> str:
    text = f"The answer to question {i} is {i * 3}."
    return f"{text} Source: table {i} of the handbook." if cites(i) else text


def verdict(i: int) -> str:
    return "pass" if cites(i) else "fail"


def note(i: int) -> str:
    return "" if cites(i) else "Right, but no source: we fail those."


def csv_bytes(rows: int = ROWS, labelled: int | None = None) -> bytes:
    """The dataset: question, the recorded answer, the person's verdict and note; rows
    from `labelled` on nobody judged."""
    labelled = rows if labelled is None else labelled
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["question", "answer", "verdict", "why"])
    for i in range(rows):
        judged = [verdict(i), note(i)] if i < labelled else ["", ""]
        writer.writerow([f"What is {i} times 3?", answer(i), *judged])
    return out.getvalue().encode()


ROLES = {"question": "input", "answer": "ignore", "verdict": "human_label", "why": "human_note"}


def judge_reply(prompt: str, text: str) -> str:
    """The judge model: every answer is right, so PASS, unless the prompt asks for a source
    and the answer cites none."""
    if PHRASE in prompt.lower() and "Source:" not in text:
        return "FAIL: the answer cites no source."
    return "PASS: the answer is right."


def reflection_answer(prompt: str) -> str:
    """A new prompt in a fenced block, as gepa's default reflection prompt asks: the
    current one with the rule, once the feedback shows people failing unsourced answers."""
    start = prompt.index("```") + 3
    current = prompt[start : prompt.index("```", start)].strip("\n")
    if "no source" in prompt and PHRASE not in current.lower():
        proposal = f"{current}\n{RULE}"
    else:
        proposal = f"{current}\nThink carefully."
    return f"Here is a better prompt.\n```\n{proposal}\n```"


def respond(request) -> str:
    """FakeProvider.respond: the reflection model for gepa's prompts, else the judge."""
    if quiz.REFLECTION_MARK in request.user:
        return reflection_answer(request.user)
    return judge_reply(request.system or "", request.user)


class JudgeHandler:
    """The judge model as a contract llm() handler, keeping what it was asked."""

    def __init__(self) -> None:
        self.requests: list[dict] = []

    def __call__(self, request: dict) -> dict:
        self.requests.append(request)
        return {"text": judge_reply(request["instructions"], str(request.get("input")))}

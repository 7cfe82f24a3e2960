"""A deterministic world for optimization runs: a capitals quiz, a task model that
answers it correctly only when the prompt holds an instruction the seed lacks, and a
reflection model that proposes that instruction only when the feedback names the
problem. Both answer through tests.providers.fakes.FakeProvider (`respond`), over real
HTTP in the provider's wire format.

With SPECIFIC feedback ("... the city name only ...") a run finds the instruction and its
best candidate scores 1.0 where the seed scores 0.0; with USELESS feedback ("Wrong.") the
reflection model has nothing to act on and nothing improves: feedback quality matters.
"""

from __future__ import annotations

import json
import textwrap

CAPITALS = {
    "France": "Paris",
    "Japan": "Tokyo",
    "Kenya": "Nairobi",
    "Peru": "Lima",
    "Canada": "Ottawa",
    "Egypt": "Cairo",
    "Norway": "Oslo",
    "Chile": "Santiago",
    "India": "New Delhi",
    "Spain": "Madrid",
    "Italy": "Rome",
    "Ghana": "Accra",
}
INSTRUCTION = "Answer with the city name only."
SEED = "What is the capital of {country}?"
# What gepa's default reflection prompt starts with (gepa.strategies.instruction_proposal).
REFLECTION_MARK = "I provided an assistant with the following instructions"
FEEDBACK_CLUE = "city name only"

SPECIFIC = textwrap.dedent(
    """
    def score(input, output, expected):
        if str(output).strip() == expected["capital"]:
            return 1.0, {"feedback": "Correct: the city name alone.", "scores": {"exact": 1.0}}
        return 0.0, {
            "feedback": "The output must be the city name only, with no other words.",
            "scores": {"exact": 0.0},
        }
    """
).lstrip()

USELESS = textwrap.dedent(
    """
    def score(input, output, expected):
        if str(output).strip() == expected["capital"]:
            return 1.0, {"feedback": "Right."}
        return 0.0, {"feedback": "Wrong."}
    """
).lstrip()


# As SPECIFIC, but at most 0.9 a case: no candidate is ever perfect on the validation
# cases, so a run goes on to its budget (GEPA stops at a perfect one).
CAPPED = SPECIFIC.replace("return 1.0,", "return 0.9,")


def rows() -> list[dict]:
    return [{"country": c, "capital": city} for c, city in CAPITALS.items()]


def jsonl() -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows()).encode()


def task_answer(prompt: str) -> str:
    country = next((c for c in CAPITALS if c in prompt), None)
    if country is None:
        return "I do not know."
    city = CAPITALS[country]
    if INSTRUCTION in prompt:
        return city
    return f"I believe the capital of {country} is {city}."


def reflection_answer(prompt: str) -> str:
    """A new instruction in a fenced block, as gepa's default prompt asks."""
    start = prompt.index("```") + 3
    current = prompt[start : prompt.index("```", start)].strip("\n")
    if FEEDBACK_CLUE in prompt and INSTRUCTION not in current:
        proposal = f"{current}\n{INSTRUCTION}"
    else:
        proposal = f"{current}\nThink carefully."
    return f"Here is a better instruction.\n```\n{proposal}\n```"


def respond(request) -> str:
    """FakeProvider.respond: the reflection model for gepa's prompts, else the task model."""
    text = request.user
    if REFLECTION_MARK in text:
        return reflection_answer(text)
    return task_answer(text)


# The same quiz as a DSPy program: one predictor, whose instructions DSPy GEPA rewrites.
DSPY_PROGRAM = textwrap.dedent(
    """
    import dspy

    program = dspy.Predict("country -> capital")
    """
).lstrip()
# How DSPy's chat adapter asks for the output fields, and ends them.
DSPY_MARK = "[[ ## completed ## ]]"


def dspy_answer(prompt: str) -> str:
    """The task model behind a DSPy program: the quiz's answer in DSPy's field format."""
    return f"[[ ## capital ## ]]\n{task_answer(prompt)}\n\n{DSPY_MARK}"


# What DSPy GEPA's instruction proposer (dspy.teleprompt.gepa.instruction_proposal) asks.
DSPY_REFLECTION_MARK = "`new_instruction`"


def dspy_reflection_answer(prompt: str) -> str:
    """DSPy GEPA's reflection: the new instruction in DSPy's field format, the one the
    quiz needs only when the feedback names the problem."""
    # The last mark: the first ones are in the prompt's description of its fields.
    start = prompt.rindex("[[ ## current_instruction ## ]]") + len(
        "[[ ## current_instruction ## ]]"
    )
    current = prompt[start : prompt.index("[[ ## examples_with_feedback ## ]]", start)].strip()
    if FEEDBACK_CLUE in prompt and INSTRUCTION not in current:
        proposal = f"{current}\n{INSTRUCTION}"
    else:
        proposal = f"{current}\nThink carefully."
    if "Outputs will be a JSON object" in prompt:  # dspy's JSONAdapter
        return json.dumps({"new_instruction": proposal})
    return f"[[ ## new_instruction ## ]]\n{proposal}\n\n{DSPY_MARK}"


def respond_any(request) -> str:
    """As respond, and a DSPy program's and DSPy GEPA's calls in DSPy's format."""
    text = request.user
    if REFLECTION_MARK in text:
        return reflection_answer(text)
    if DSPY_REFLECTION_MARK in text:
        return dspy_reflection_answer(text)
    if DSPY_MARK in text:
        return dspy_answer(text)
    return task_answer(text)

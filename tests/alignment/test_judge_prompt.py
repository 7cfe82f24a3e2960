"""contract.judge_prompt: which constant is a judge's prompt, why a source has none, and a
rewrite that changes that string literal and nothing else (no Django)."""

from __future__ import annotations

import ast
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract import judge_prompt
from contract.judge_prompt import JudgePrompt, NoPrompt

JUDGE = textwrap.dedent(
    '''
    """A judge, with a docstring that is no prompt."""
    from skynet import llm

    MODEL_NOTE = "a note the code never sends, longer than the prompt by far, on purpose"
    # The rules the model follows.
    JUDGE_PROMPT = """You grade answers.
    Answer PASS or FAIL, then one sentence."""  # keep this comment
    LIMIT = 3


    def score(input, output, expected=None):
        verdict = llm(JUDGE_PROMPT, input=f"Question: {input['q']}\\nAnswer: {output}")
        passed = verdict.strip().upper().startswith("PASS")
        return (1.0 if passed else 0.0), {"feedback": verdict + MODEL_NOTE[:0]}
    '''
).lstrip()


def found(source: str) -> JudgePrompt:
    result = judge_prompt.find_judge_prompt(source)
    assert isinstance(result, JudgePrompt), result
    return result


def refused(source: str) -> NoPrompt:
    result = judge_prompt.find_judge_prompt(source)
    assert isinstance(result, NoPrompt), result
    return result


def offset(source: str, line: int, column: int) -> int:
    lines = source.splitlines(keepends=True)
    return sum(len(text) for text in lines[: line - 1]) + column


def without_literal(source: str, prompt: JudgePrompt) -> str:
    """The source with the prompt's string literal cut out."""
    start = offset(source, prompt.line, prompt.column)
    end = offset(source, prompt.end_line, prompt.end_column)
    return source[:start] + source[end:]


def judge(body: str) -> str:
    return "from skynet import llm\n" + textwrap.dedent(body).lstrip()


# -- finding ------------------------------------------------------------------------


def test_it_finds_the_constant_the_llm_call_sends():
    prompt = found(JUDGE)
    assert prompt.name == "JUDGE_PROMPT"
    assert prompt.value == "You grade answers.\nAnswer PASS or FAIL, then one sentence."
    assert (prompt.line, prompt.end_line, prompt.quote, prompt.prefix) == (6, 7, '"""', "")
    # The docstring and the longer constant the call does not send are not the prompt.
    assert JUDGE[offset(JUDGE, prompt.line, prompt.column) :].startswith('"""You grade')


def test_of_several_constants_in_the_call_it_takes_the_longest():
    source = judge(
        """
        SYSTEM = "You are a strict grader of answers to questions."
        FORMAT = "Say PASS or FAIL."
        UNUSED = "x" * 0 or "a constant nobody sends, longer than both of the others together"

        def score(input, output, expected=None):
            return llm(SYSTEM + "\\n" + FORMAT, input=output) == "PASS", {}
        """
    )
    assert found(source).name == "SYSTEM"


def test_a_constant_the_code_formats_before_the_call_is_found_too():
    source = judge(
        '''
        GRADER = """Grade this answer to {question}: PASS or FAIL."""
        SHORT = "unused"

        def score(input, output, expected=None):
            prompt = GRADER.format(question=input["q"])
            verdict = llm(prompt, input=output)
            return (1.0 if verdict.startswith("PASS") else 0.0), {"feedback": verdict}
        '''
    )
    assert found(source).name == "GRADER"


def test_skynet_dot_llm_counts_as_the_call():
    source = (
        "import skynet\nP = 'Judge it.'\ndef score(i, o, e=None):\n    return skynet.llm(P), {}\n"
    )
    assert found(source).name == "P"
    assert judge_prompt.calls_llm(source) is True
    assert judge_prompt.calls_llm("def score(i, o):\n    return 1.0, {}\n") is False


@pytest.mark.parametrize(
    ("assignment", "code"),
    [
        ('P = f"Grade {LIMIT} answers"', "f_string"),
        ('P = "Grade the answer. " "Say PASS or FAIL."', "concatenated"),
        ('P = "Grade the answer. " + SUFFIX', "concatenated"),
        ('P = b"Grade the answer."', "not_text"),
        ('P = "Grade the answer."; P = "Grade it again."', "assigned_again"),
        ('P = Q = "Grade the answer."', "several_targets"),
    ],
)
def test_a_prompt_that_is_no_plain_constant_is_refused_with_its_reason(assignment, code):
    source = judge(
        f"""
        LIMIT = 3
        SUFFIX = "Say PASS or FAIL."
        {assignment}

        def score(input, output, expected=None):
            return llm(P), {{}}
        """
    )
    assert refused(source) == NoPrompt(code, {"name": "P"})


def test_a_prompt_reassigned_in_a_function_is_assigned_again():
    source = judge(
        """
        P = "Grade the answer."

        def score(input, output, expected=None):
            global P
            P = P + " Be strict."
            return llm(P), {}
        """
    )
    assert refused(source).code == "assigned_again"


def test_a_metric_that_asks_no_model_or_sends_no_constant_has_no_prompt():
    assert refused("P = 'x'\ndef score(i, o):\n    return 1.0, {}\n").code == "no_llm_call"
    inline = judge(
        """
        def score(input, output, expected=None):
            return llm("Answer PASS or FAIL.", input=output), {}
        """
    )
    assert refused(inline).code == "no_prompt_constant"
    assert refused("def score(:\n").code == "syntax_error"


def test_find_constant_reads_a_named_one():
    assert judge_prompt.find_constant(JUDGE, "JUDGE_PROMPT") == found(JUDGE)
    assert judge_prompt.find_constant(JUDGE, "NOPE") == NoPrompt(
        "no_prompt_constant", {"name": "NOPE"}
    )


# -- rewriting ----------------------------------------------------------------------

TEXTS = [
    "A new prompt.\nCite a source, or FAIL.",
    "one line only",
    'She said "PASS" and left.',
    'ends with a quote"',
    'three """ in a row, and ""',
    '"""',
    "a backslash \\ and \\n written out",
    "tab\there, a carriage return\r\nand a nul \x00 and a bell \x07",
    "नमस्ते, क्‍या हाल है? \u200d joiners stay; a line separator \u2028 is escaped",
    "emoji 🙂 and a lone surrogate \ud800",
    "",
]


@pytest.mark.parametrize("text", TEXTS)
def test_replacing_changes_only_the_literal(text):
    before = found(JUDGE)
    new = judge_prompt.replace_prompt(JUDGE, "JUDGE_PROMPT", text)
    ast.parse(new)  # it parses
    after = judge_prompt.find_constant(new, "JUDGE_PROMPT")
    assert isinstance(after, JudgePrompt) and after.value == text
    assert without_literal(new, after) == without_literal(JUDGE, before)
    assert after.quote == '"""'  # the same quotes: they were triple


def test_a_single_quoted_prompt_keeps_its_quotes_until_it_spans_lines():
    source = judge(
        """
        P = 'Judge it.'  # short

        def score(input, output, expected=None):
            return llm(P), {}
        """
    )
    one_line = judge_prompt.replace_prompt(source, "P", "Judge it. Cite a source, or it's a FAIL.")
    assert "P = 'Judge it. Cite a source, or it\\'s a FAIL.'  # short" in one_line
    two_lines = judge_prompt.replace_prompt(source, "P", "Judge it.\nCite a source.")
    assert "P = '''Judge it.\nCite a source.'''  # short" in two_lines


def test_a_raw_prompt_stays_raw_when_it_can():
    source = judge(
        '''
        P = r"""Match \\d+ digits."""

        def score(input, output, expected=None):
            return llm(P), {}
        '''
    )
    new = judge_prompt.replace_prompt(source, "P", "Match \\d+ digits, then \\w+.")
    assert 'P = r"""Match \\d+ digits, then \\w+."""' in new
    ending = judge_prompt.replace_prompt(source, "P", "ends in a backslash\\")
    assert judge_prompt.find_constant(ending, "P").value == "ends in a backslash\\"


def test_replacing_with_a_name_leaves_the_rest():
    new = judge_prompt.replace_with_name(JUDGE, "JUDGE_PROMPT", "__prompt__")
    assert "JUDGE_PROMPT = __prompt__  # keep this comment\nLIMIT = 3\n" in new
    assert new.replace("__prompt__", "") == without_literal(JUDGE, found(JUDGE))


def test_replacing_a_constant_that_is_not_there_raises():
    with pytest.raises(ValueError, match="no_prompt_constant"):
        judge_prompt.replace_prompt(JUDGE, "NOPE", "x")


@settings(max_examples=300, deadline=None)
@given(st.text(), st.sampled_from(['"', "'", '"""', "'''"]), st.sampled_from(["", "r", "R", "u"]))
def test_any_text_reads_back_as_itself(text, quote, prefix):
    literal = judge_prompt.string_literal(text, quote, prefix)
    assert ast.literal_eval(literal) == text
    # The quote character is kept, whatever the text.
    assert literal.lstrip("rR")[0] == quote[0]

"""In real Chromium, with the keyboard only: label cases with 1/0, write a note with N
(Esc leaves it), move with the arrows, reload and find the progress kept; in English,
Spanish and Hindi, on a desktop and a phone screen."""

from __future__ import annotations

import pytest

from evaluations.models import Evaluation, EvaluationCase
from labelling import cases, services
from labelling.models import Label
from submissions import services as submit_services

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
ROWS = [
    (f"Question {i}: what is {i} + {i}?", str(2 * i if i % 3 else i), str(2 * i)) for i in range(8)
]


def _scored_labelling(owner):
    lines = "".join(f'"{q}",{a},{e}\n' for q, a, e in ROWS)
    dataset = submit_services.dataset_create(
        owner=owner, filename="sums.csv", data=f"question,response,expected\n{lines}".encode()
    )
    evaluation = Evaluation.objects.create(
        owner=owner,
        dataset=dataset,
        source="x",
        status=Evaluation.Status.DONE,
        roles={"question": "input", "response": "ignore", "expected": "output"},
        recorded_column="response",
        total=len(ROWS),
        done=len(ROWS),
    )
    for row, (_q, answer, expected) in enumerate(ROWS):
        EvaluationCase.objects.create(
            evaluation=evaluation,
            index=row,
            row=row,
            file_row=row + 2,
            status="valid",
            score=1.0 if answer == expected else 0.0,
            feedback="Right sum." if answer == expected else f"Expected {expected}.",
        )
    return services.labelling_create(
        owner=owner,
        dataset=dataset,
        evaluation=evaluation,
        input_columns=["question"],
        output_column="response",
        expected_column="expected",
    )


def _log_in_by_keyboard(page, live_server, language: str) -> None:
    page.goto(f"{live_server.url}/{language}/accounts/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-pass-123")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/{language}/")


def _case_number(page) -> int:
    return int(page.get_attribute("#labelling-case", "data-position")) + 1


def _wait_for_case(page, number: int) -> None:
    page.wait_for_function(
        "n => { const p = document.getElementById('labelling-case');"
        " return p && Number(p.dataset.position) + 1 === n; }",
        arg=number,
    )


def _fits_the_width(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")


@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize("language", ["en", "es", "hi"])
def test_label_with_the_keyboard_only(
    browser, live_server, django_user_model, screenshot, language, size
):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    labelling = _scored_labelling(owner)
    context = browser.new_context(viewport=SIZES[size], locale="en-US")
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        _log_in_by_keyboard(page, live_server, language)
        page.goto(f"{live_server.url}/{language}/labellings/{labelling.pk}/")
        assert page.locator("html").get_attribute("lang") == language
        assert _case_number(page) == 1
        assert page.is_visible("#key-legend")
        # Before a label, nothing of the metric shows.
        assert page.locator("#labelling-case .metric-score").count() == 0
        assert "Right sum." not in page.inner_text("#labelling-case")
        screenshot(page, f"labelling-{language}-{size}-1-before")

        page.keyboard.press("1")  # pass: saved, case 2 shown, case 1's score revealed
        _wait_for_case(page, 2)
        just = page.inner_text("#label-just")
        assert "Right sum." in just and page.locator("#label-just .metric-score").count() == 1
        assert page.get_attribute("#label-progress progress", "value") == "1"
        screenshot(page, f"labelling-{language}-{size}-2-revealed")

        page.keyboard.press("n")  # the note, without an "n" typed into it
        assert page.evaluate("() => document.activeElement.id") == "label-note"
        page.keyboard.type("off by one")
        page.keyboard.press("Escape")
        assert page.evaluate("() => document.activeElement.id") != "label-note"
        page.keyboard.press("0")  # fail, with the note
        _wait_for_case(page, 3)

        page.keyboard.press("ArrowLeft")
        _wait_for_case(page, 2)
        assert page.input_value("#label-note") == "off by one"
        assert page.get_attribute('button[data-key="0"]', "aria-pressed") == "true"
        assert page.locator("#label-mine .metric-score").count() == 1
        screenshot(page, f"labelling-{language}-{size}-2b-back")
        # On a labelled case, leaving the note saves it alone, and the case stays.
        page.keyboard.press("n")
        page.keyboard.press("End")
        page.keyboard.type(", twice")
        page.keyboard.press("Escape")
        page.wait_for_selector("#label-saved")
        assert _case_number(page) == 2
        assert page.input_value("#label-note") == "off by one, twice"
        page.keyboard.press("ArrowRight")
        _wait_for_case(page, 3)
        page.keyboard.press("1")
        _wait_for_case(page, 4)
        # Two keys at once: the second labels case 5, not case 4 again.
        page.keyboard.press("0")
        page.keyboard.press("1")
        _wait_for_case(page, 6)
        page.wait_for_function(
            "() => document.querySelector('#label-progress progress').value === 5"
        )
        assert _fits_the_width(page)
        screenshot(page, f"labelling-{language}-{size}-3-moved")

        page.reload()
        assert _case_number(page) == 6
        assert page.get_attribute("#label-progress progress", "value") == "5"
        page.goto(f"{live_server.url}/{language}/labellings/{labelling.pk}/")
        assert _case_number(page) == 6  # opens at the first case not labelled
        screenshot(page, f"labelling-{language}-{size}-4-reloaded")
    finally:
        context.close()
    saved = {label.row: (label.value, label.note) for label in Label.objects.all()}
    assert saved == {
        0: (1.0, ""),
        1: (0.0, "off by one, twice"),
        2: (1.0, ""),
        3: (0.0, ""),
        4: (1.0, ""),
    }


def test_the_invitee_sees_the_agreement_with_the_owner(
    browser, live_server, django_user_model, screenshot
):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    carol = django_user_model.objects.create_user(username="carol", password="carol-pass-123")
    labelling = _scored_labelling(owner)
    labelling.kind, labelling.scale = "scale", 4
    labelling.save()
    services.invitation_create(labelling, carol)
    for person, values in ((owner, [4, 3, 1, 2, 4, 1]), (carol, [4, 2, 1, 2, 3])):
        for position, value in enumerate(values):
            case = cases.case_at(labelling, position)
            services.label_save(labelling, person, case, value=str(value), note="")
    context = browser.new_context(viewport=SIZES["desktop"], locale="en-US")
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/en/accounts/login/")
        page.fill("input[name=username]", "carol")
        page.fill("input[name=password]", "carol-pass-123")
        page.keyboard.press("Enter")
        page.wait_for_url(f"{live_server.url}/en/")
        page.goto(f"{live_server.url}/en/labellings/{labelling.pk}/")
        assert _case_number(page) == 6  # carol's first case not labelled
        row = page.locator("#agreement .agreement-row")
        assert "alice" in row.locator(".agreement-with").inner_text()
        assert row.locator(".agreement-n").inner_text() == "5"
        assert page.locator("#invite").count() == 0 and page.locator("#save-version").count() == 0
        page.keyboard.press("2")
        _wait_for_case(page, 7)
        assert "alice" in page.inner_text("#label-just")  # the owner's label, now revealed
        screenshot(page, "labelling-en-desktop-invitee-agreement")
    finally:
        context.close()

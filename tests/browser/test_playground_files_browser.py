"""In real Chromium: a metric's helper modules as tabs beside metric.py. Add a file by its
path, upload a .zip, run the check with them, remove one; and at phone width the tabs
scroll rather than widen the page."""

from __future__ import annotations

import io
import zipfile

import pytest

from checks.models import Check
from metrics import services as metric_services
from tests.browser.conftest import ARTIFACTS, log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

METRIC = """from src.evaluation import eval_score


def score(input, output, expected=None):
    value = eval_score(output, expected["label"])
    return value, {"feedback": f"{output!r} against {expected['label']!r}: {value}."}
"""
EVALUATION = (
    "from .compare import same\n\n\ndef eval_score(a, b):\n    return 1.0 if same(a, b) else 0.0\n"
)
COMPARE = "def same(a, b):\n    return str(a).strip().lower() == str(b).strip().lower()\n"


def set_text(page, selector: str, text: str) -> None:
    page.evaluate(
        "([selector, text]) => document.querySelector(selector).skynetEditor.setValue(text)",
        [selector, text],
    )


def zipped(tmp_path) -> str:
    path = tmp_path / "repo.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("repo-main/src/compare.py", COMPARE)
        archive.writestr("repo-main/notes.md", "# notes\n")
    path.write_bytes(buffer.getvalue())
    return str(path)


def test_helper_files_as_tabs_add_upload_run_and_remove(
    page, live_server, django_user_model, celery_worker_process, screenshot, tmp_path
):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="repo metric", starter="exact_match")
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/en/metrics/{metric.pk}/")
    page.wait_for_selector(".cm-editor")
    tabs = page.locator("#file-tabs [role=tab]")
    assert tabs.all_inner_texts() == ["metric.py", "+ Add a file"]
    set_text(page, "textarea[name=source]", METRIC)

    # A file by its path: its tab opens with an empty editor.
    page.click("#file-tabs >> text=+ Add a file")
    page.fill("#new-file-path", "my-src/evaluation.py")
    page.click("#add-file")
    assert "Python names" in page.inner_text("#files-said")
    page.fill("#new-file-path", "src/evaluation.py")
    page.press("#new-file-path", "Enter")
    page.wait_for_selector('.file-panel.active[data-file-path="src/evaluation.py"] .cm-editor')
    set_text(page, ".file-panel.active textarea[name=file_text]", EVALUATION)

    # A .zip: its .py files come as tabs, what it left out is said.
    page.click("#file-tabs >> text=+ Add a file")
    page.set_input_files("#upload-zip", zipped(tmp_path))
    page.wait_for_selector('.file-panel.active[data-file-path="src/compare.py"]')
    assert "Left out 1 file that is not a Python module: notes.md." in page.inner_text(
        "#files-said"
    )
    assert tabs.all_inner_texts() == [
        "metric.py",
        "src/evaluation.py",
        "src/compare.py",
        "+ Add a file",
    ]
    screenshot(page, "playground-files-tabs")

    # Run saves every file and checks the metric with them.
    page.click("#run-check")
    page.wait_for_selector("#check.status-passed", timeout=60_000)
    version = metric.versions.order_by("-number").first()
    assert version.helper_files == {"src/compare.py": COMPARE, "src/evaluation.py": EVALUATION}
    assert Check.objects.get().files == version.helper_files

    # Arrow keys move between tabs; a removed file goes at the next save.
    page.focus("#file-tabs [aria-selected=true]")
    page.keyboard.press("Home")
    assert page.locator("#file-tabs [aria-selected=true]").inner_text() == "metric.py"
    page.keyboard.press("ArrowRight")
    assert page.locator("#file-tabs [aria-selected=true]").inner_text() == "src/evaluation.py"
    page.once("dialog", lambda dialog: dialog.accept())
    page.click(".file-panel.active button.remove-file")
    assert "src/evaluation.py" not in tabs.all_inner_texts()
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "() => document.getElementById('save-status').textContent.includes('Version 3')"
    )
    assert list(metric.versions.order_by("-number").first().helper_files) == ["src/compare.py"]

    # A folder: its .py files come by their paths in it; caches and the rest stay out.
    folder = tmp_path / "upload" / "extra"
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "__pycache__" / "old.py").write_text("raise SystemExit\n")
    (folder / "weights.py").write_text("RIGHT = 1.0\n")
    (folder / "data.json").write_text("{}\n")
    page.click("#file-tabs >> text=+ Add a file")
    page.set_input_files("#upload-folder", str(folder))
    page.wait_for_selector('.file-panel.active[data-file-path="extra/weights.py"]')
    assert page.inner_text("#files-said") == (
        "Added 1 file: extra/weights.py. "
        "Left out 1 file that is not a Python module: extra/data.json."
    )
    page.once("dialog", lambda dialog: dialog.accept())
    page.click(".file-panel.active button.remove-file")

    # A file the server refuses: nothing is saved, the form comes back with its tabs.
    page.click("#file-tabs >> text=+ Add a file")
    page.fill("#new-file-path", "src/bad.py")
    page.click("#add-file")
    set_text(page, ".file-panel.active textarea[name=file_text]", "def f(:\n")
    page.click("button[name=action][value=save]")
    page.wait_for_selector("#files_error")
    assert "Syntax error in src/bad.py at line 1" in page.inner_text("#files_error")
    page.wait_for_selector('#file-tabs[data-ready] [role=tab]:text("src/bad.py")')
    assert metric.versions.count() == 3
    page.once("dialog", lambda dialog: dialog.accept())
    page.click('#file-tabs [role=tab]:text("src/bad.py")')
    page.click(".file-panel.active button.remove-file")
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.querySelector('#files_error')")

    # At phone width the strip scrolls inside the page; the page does not widen.
    page.set_viewport_size({"width": 375, "height": 800})
    page.reload()
    page.wait_for_selector(".cm-editor")
    wide = page.evaluate("() => document.documentElement.scrollWidth")
    assert wide <= 375
    page.click("#file-tabs >> text=+ Add a file")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 375
    page.locator("#file-tabs").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "playground-files-phone.png"))
    assert errors == []


def test_without_javascript_every_file_shows(browser, live_server, django_user_model):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="repo metric", starter="exact_match")
    metric_services.metric_save(
        metric, source=METRIC, files={"src/evaluation.py": EVALUATION, "src/compare.py": COMPARE}
    )
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1200, "height": 900}
    )
    page = context.new_page()
    try:
        log_in(page, live_server, "alice", "alice-pass-123")
        page.goto(f"{live_server.url}/en/metrics/{metric.pk}/")
        assert page.is_hidden("#file-tabs")
        assert page.is_visible('textarea[name=file_text]:below(:text("src/compare.py"))')
        shown = page.locator(".file-panel.helper-file textarea")
        assert shown.count() == 2
        assert all(shown.nth(i).is_visible() for i in range(2))
        assert "def same(a, b):" in shown.nth(0).input_value()
    finally:
        context.close()

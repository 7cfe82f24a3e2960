// The playground's glue: keyboard shortcuts, traceback links, diagnostics list and the
// unsaved-changes guard. The page works without this file; it only adds comfort.
(function () {
  "use strict";

  function editorOf(textarea) {
    return textarea && textarea.skynetEditor ? textarea.skynetEditor : null;
  }

  function setup() {
    var form = document.getElementById("editor-form");
    var textarea = form ? form.querySelector("textarea[name=source]") : null;
    if (!form || !textarea) return;
    var saving = false;

    function click(action) {
      var button = form.querySelector('button[name=action][value="' + action + '"]');
      if (button) button.click();
    }

    textarea.addEventListener("skynet:save", function () { click("save"); });
    textarea.addEventListener("skynet:run", function () { click("run"); });

    // Ctrl/Cmd+S and Ctrl/Cmd+Enter also work outside the editor (in the cases panel).
    document.addEventListener("keydown", function (event) {
      // Inside the editor its own keymap has handled the key (and said so): a second
      // click here would save twice, or start a second check.
      if (event.defaultPrevented || !(event.ctrlKey || event.metaKey)) return;
      if (event.key === "s" || event.key === "S") { event.preventDefault(); click("save"); }
      else if (event.key === "Enter") { event.preventDefault(); click("run"); }
    });

    // A traceback line jumps to that line in the editor.
    document.addEventListener("click", function (event) {
      var link = event.target.closest ? event.target.closest("a.trace-line") : null;
      if (!link) return;
      var editor = editorOf(textarea);
      if (!editor) return;
      event.preventDefault();
      editor.goToLine(parseInt(link.dataset.line, 10) || 1);
    });

    textarea.addEventListener("skynet:diagnostics", function (event) {
      var list = document.getElementById("diagnostics-list");
      if (!list) return;
      var items = event.detail.diagnostics || [];
      list.textContent = "";
      if (!items.length) {
        var none = document.createElement("li");
        none.className = "none";
        none.textContent = list.dataset.none || "";
        list.appendChild(none);
        return;
      }
      items.forEach(function (item) {
        var li = document.createElement("li");
        var link = document.createElement("a");
        link.href = "#L" + item.line;
        link.className = "trace-line";
        link.dataset.line = item.line;
        link.textContent = "metric.py:" + item.line;
        li.appendChild(link);
        li.appendChild(document.createTextNode(" " + (item.stage_name ? item.stage_name + ": " : "") + item.message));
        list.appendChild(li);
      });
    });

    // When a check's verdict is final, bring its panel into view: the verdict line by the
    // Run button (a live region) has already said it. Someone still typing in the editor or
    // a case (Ctrl+Enter from there) keeps their place and their focus; after a click on
    // Run the panel scrolls in and its heading takes the focus. htmx fires the event
    // before it swaps the panel in, hence the wait.
    document.body.addEventListener("skynet:check-final", function () {
      setTimeout(function () {
        var panel = document.getElementById("check");
        var active = document.activeElement;
        if (!panel || (active && active.closest && active.closest(".cm-editor, input, textarea, select"))) return;
        var heading = panel.querySelector("h2");
        if (heading) {
          heading.setAttribute("tabindex", "-1");
          heading.focus({ preventScroll: true });
        }
        panel.scrollIntoView({ block: "start" });
      }, 30);
    });

    // Warn before leaving with unsaved edits; saving (or running, which saves) clears it.
    document.body.addEventListener("skynet:saved", function () {
      var editor = editorOf(textarea);
      if (editor) editor.markClean();
    });
    form.addEventListener("submit", function () { saving = true; });
    window.addEventListener("beforeunload", function (event) {
      var editor = editorOf(textarea);
      if (!saving && editor && editor.isDirty()) {
        event.preventDefault();
        event.returnValue = "";
      }
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();

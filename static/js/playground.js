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
      // The form as it is now: a save the server refused swapped in a new one.
      var current = document.getElementById("editor-form") || form;
      var button = current.querySelector('button[name=action][value="' + action + '"]');
      if (button) button.click();
    }

    // From metric.py's editor and from each helper file's (the events bubble).
    function fromEditorForm(event) {
      return event.target.closest && event.target.closest("#editor-form");
    }
    document.addEventListener("skynet:save", function (event) { if (fromEditorForm(event)) click("save"); });
    document.addEventListener("skynet:run", function (event) { if (fromEditorForm(event)) click("run"); });

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
      if (window.SkynetFiles) window.SkynetFiles.show("metric.py");
      editor.goToLine(parseInt(link.dataset.line, 10) || 1);
    });

    // "Add the N missing imports": the server adds the import lines of the names the
    // metric uses but never imports, to the text as it is in the editor (one undoable
    // change); nothing is saved until the user saves or runs.
    function csrf() {
      var field = form.querySelector("input[name=csrfmiddlewaretoken]");
      return field ? field.value : "";
    }
    function showImportOffers() {
      // Offers in a check's panel need the editor: they stay hidden without it.
      if (!editorOf(textarea)) return;
      document.querySelectorAll("#check .add-imports-offer[hidden]").forEach(function (offer) {
        offer.hidden = false;
      });
    }
    document.body.addEventListener("htmx:afterSwap", showImportOffers);
    setTimeout(showImportOffers, 0);
    document.addEventListener("click", function (event) {
      var button = event.target.closest ? event.target.closest("button.add-imports") : null;
      var editor = editorOf(textarea);
      if (!button || !editor) return;
      event.preventDefault();
      var body = new URLSearchParams();
      body.set("source", editor.getValue());
      button.disabled = true;
      fetch(button.dataset.url, {
        method: "POST",
        headers: { "X-CSRFToken": csrf(), "Content-Type": "application/x-www-form-urlencoded" },
        body: body.toString(),
        credentials: "same-origin",
      }).then(function (response) { return response.json(); }).then(function (answer) {
        var said = document.getElementById("add-imports-said");
        if (answer.source !== undefined && answer.source !== editor.getValue()) editor.setValue(answer.source);
        if (said) said.textContent = answer.message || answer.error || "";
        if (answer.line) editor.goToLine(answer.line);
      }).catch(function () {}).then(function () { button.disabled = false; });
    });

    textarea.addEventListener("skynet:diagnostics", function (event) {
      var list = document.getElementById("diagnostics-list");
      if (!list) return;
      var items = event.detail.diagnostics || [];
      var offer = document.getElementById("diagnostics-add-imports");
      if (offer) {
        var fixable = items.filter(function (item) { return item.fix_label; });
        offer.hidden = !fixable.length;
        if (fixable.length) offer.querySelector("button").textContent = fixable[0].fix_label;
      }
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
      var current = document.getElementById("editor-form");
      if (current) {
        current.querySelectorAll(".helper-file textarea").forEach(function (area) {
          if (editorOf(area)) editorOf(area).markClean();
        });
      }
      files.changed = false;
      // What the server refused of the files before is no longer so.
      var refused = document.getElementById("files_error");
      if (refused) refused.remove();
    });
    form.addEventListener("submit", function () { saving = true; });
    window.addEventListener("beforeunload", function (event) {
      var editor = editorOf(textarea);
      var current = document.getElementById("editor-form");
      var helpers = current ? Array.prototype.slice.call(current.querySelectorAll(".helper-file textarea")) : [];
      var dirty = (editor && editor.isDirty()) || files.changed || helpers.some(function (area) {
        return editorOf(area) && editorOf(area).isDirty();
      });
      if (!saving && dirty) {
        event.preventDefault();
        event.returnValue = "";
      }
    });

    setupFiles(form);
    // A save the server refused swaps the form in anew: its files become tabs again.
    document.body.addEventListener("htmx:afterSwap", function () {
      var current = document.getElementById("editor-form");
      if (current) setupFiles(current);
    });
  }

  // The metric's files as tabs above the editor: metric.py, each helper module (a panel
  // with its own textarea, mounted as an editor, posted as file_path/file_text) and
  // "+ Add a file" (a path, or a folder or a .zip uploaded to the server, which reads it
  // and answers with its .py files). Without this, every panel shows, one under another.
  var files = { changed: false };
  var PATH = /^(?:[\p{L}_][\p{L}\p{N}_]*\/)*[\p{L}_][\p{L}\p{N}_]*\.py$/u;

  function setupFiles(form) {
    var strip = form.querySelector("#file-tabs");
    if (!strip || strip.dataset.ready) return;
    strip.dataset.ready = "1";
    var column = strip.parentNode;
    var addPanel = form.querySelector("#file-panel-add");
    var template = form.querySelector("#helper-file-template");
    var said = form.querySelector("#files-said");
    var pathField = form.querySelector("#new-file-path");
    var max = parseInt(strip.dataset.max, 10) || 20;
    var made = 0;
    var active = null;
    column.classList.add("files-tabbed");
    strip.hidden = false;
    addPanel.hidden = false;

    function panels() {
      return Array.prototype.slice.call(column.querySelectorAll(".file-panel"));
    }
    function helpers() {
      return panels().filter(function (panel) { return panel.classList.contains("helper-file"); });
    }
    function panelOf(path) {
      return panels().filter(function (panel) { return panel.dataset.filePath === path; })[0] || null;
    }
    function words(name, path) {
      return (strip.dataset[name] || "").replace("%(path)s", path || "");
    }

    function select(panel, focus) {
      active = panel;
      panels().forEach(function (each) {
        var on = each === panel;
        each.classList.toggle("active", on);
        var tab = document.getElementById(each.id + "-tab");
        if (tab) {
          tab.setAttribute("aria-selected", on ? "true" : "false");
          tab.tabIndex = on ? 0 : -1;
          if (on && focus) tab.focus();
        }
      });
      var area = panel.querySelector("textarea");
      var editor = editorOf(area);
      if (editor && editor.view) editor.view.requestMeasure();
    }

    function render() {
      strip.textContent = "";
      panels().forEach(function (panel) {
        var tab = document.createElement("button");
        tab.type = "button";
        tab.id = panel.id + "-tab";
        tab.className = "file-tab" + (panel === addPanel ? " file-tab-add" : "");
        tab.setAttribute("role", "tab");
        tab.setAttribute("aria-controls", panel.id);
        tab.textContent = panel === addPanel ? strip.dataset.addLabel : panel.dataset.filePath;
        panel.setAttribute("role", "tabpanel");
        panel.setAttribute("aria-labelledby", tab.id);
        tab.addEventListener("click", function () { select(panel, false); });
        strip.appendChild(tab);
      });
      select(active && active.parentNode ? active : panels()[0], false);
    }

    // Left and right arrows, Home and End move between the tabs.
    strip.addEventListener("keydown", function (event) {
      var all = panels();
      var index = all.indexOf(active);
      var next = null;
      if (event.key === "ArrowRight") next = all[(index + 1) % all.length];
      else if (event.key === "ArrowLeft") next = all[(index - 1 + all.length) % all.length];
      else if (event.key === "Home") next = all[0];
      else if (event.key === "End") next = all[all.length - 1];
      if (!next) return;
      event.preventDefault();
      select(next, true);
    });

    function addRemoveButton(panel) {
      if (panel.querySelector("button.remove-file")) return;
      var path = panel.dataset.filePath;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "secondary remove-file";
      button.textContent = words("removeLabel", path);
      button.addEventListener("click", function () {
        var area = panel.querySelector("textarea");
        if (area && area.value.trim() && !window.confirm(words("removeConfirm", path))) return;
        var editor = editorOf(area);
        if (editor) editor.destroy();
        panel.remove();
        files.changed = true;
        active = panels()[0];
        render();
      });
      var label = panel.querySelector(".editor-label");
      if (label) label.insertAdjacentElement("afterend", button);
    }

    function addFile(path, text) {
      var panel = template.content.firstElementChild.cloneNode(true);
      made += 1;
      var id = "new-file-" + made;
      panel.id = "file-panel-" + id;
      panel.dataset.filePath = path;
      var label = panel.querySelector("label");
      var area = panel.querySelector("textarea");
      label.textContent = path;
      label.setAttribute("for", "id_" + id);
      area.id = "id_" + id;
      area.setAttribute("aria-label", path);
      area.value = text || "";
      panel.querySelector("input[name=file_path]").value = path;
      column.insertBefore(panel, addPanel);
      if (window.SkynetEditor) window.SkynetEditor.mount(area);
      addRemoveButton(panel);
      files.changed = true;
      return panel;
    }

    function putFile(path, text) {
      var panel = panelOf(path);
      if (!panel) return addFile(path, text);
      var area = panel.querySelector("textarea");
      var editor = editorOf(area);
      if (editor) editor.setValue(text);
      else area.value = text;
      files.changed = true;
      return panel;
    }

    helpers().forEach(addRemoveButton);
    render();

    form.querySelector("#add-file").addEventListener("click", function () {
      var path = pathField.value.trim().replace(/^\.\//, "");
      if (!PATH.test(path) || path === "metric.py") { said.textContent = words("badPath"); return; }
      if (panelOf(path)) { said.textContent = words("pathTaken", path); return; }
      if (helpers().length >= max) { said.textContent = words("tooMany"); return; }
      said.textContent = "";
      pathField.value = "";
      var panel = addFile(path, "");
      render();
      select(panel, false);
      var editor = editorOf(panel.querySelector("textarea"));
      if (editor) editor.focus();
    });
    pathField.addEventListener("keydown", function (event) {
      if (event.key === "Enter") { event.preventDefault(); form.querySelector("#add-file").click(); }
    });

    function csrf() {
      var field = form.querySelector("input[name=csrfmiddlewaretoken]");
      return field ? field.value : "";
    }
    function upload(body, input) {
      var url = form.querySelector(".file-add-upload").dataset.url;
      said.textContent = "";
      input.disabled = true;
      fetch(url, {
        method: "POST",
        headers: { "X-CSRFToken": csrf() },
        body: body,
        credentials: "same-origin",
      }).then(function (response) { return response.json(); }).then(function (answer) {
        var errors = answer.errors || [];
        if (errors.length) { said.textContent = errors.join(" "); return; }
        var last = null;
        (answer.files || []).forEach(function (file) { last = putFile(file.path, file.text); });
        render();
        if (last) select(last, false);
        said.textContent = answer.message || "";
      }).catch(function () {}).then(function () {
        input.disabled = false;
        input.value = "";
      });
    }
    form.querySelector("#upload-folder").addEventListener("change", function (event) {
      var input = event.target;
      var body = new FormData();
      var others = 0;
      var modules = 0;
      Array.prototype.forEach.call(input.files, function (file) {
        var path = file.webkitRelativePath || file.name;
        // Caches, hidden folders (.git, .venv) and installed packages are never a metric's.
        if (/(^|\/)(__pycache__|node_modules|site-packages|\.[^/]*)\//.test(path)) return;
        if (/\.py$/.test(path)) {
          // The server says when there are too many; it need not read hundreds to say so.
          modules += 1;
          if (modules > 100) return;
          body.append("file", file, file.name);
          body.append("path", path);
        } else if (others < 200) {
          others += 1;
          body.append("other_path", path);
        }
      });
      upload(body, input);
    });
    form.querySelector("#upload-zip").addEventListener("change", function (event) {
      var input = event.target;
      if (!input.files.length) return;
      var body = new FormData();
      body.append("archive", input.files[0], input.files[0].name);
      upload(body, input);
    });
  }

  window.SkynetFiles = {
    show: function (path) {
      var form = document.getElementById("editor-form");
      var panel = form ? form.querySelector('.file-panel[data-file-path="' + path + '"]') : null;
      var tab = panel ? document.getElementById(panel.id + "-tab") : null;
      if (tab) tab.click();
    },
  };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();

// SkynetEditor: a CodeMirror 6 editor for metric.py that enhances a plain
// <textarea>. The textarea stays in the form (hidden) and always holds the
// editor's text, so the page submits and works the same without JavaScript.
//
//   const ed = SkynetEditor.mount(textarea, {diagnosticsUrl, completions, theme});
//   ed.view, ed.getValue(), ed.setValue(text), ed.goToLine(line, column?),
//   ed.isDirty(), ed.markClean(), ed.focus(), ed.destroy()
//
// Every textarea[data-skynet-editor] is mounted on DOMContentLoaded (and in
// content htmx swaps in); the instance is kept at textarea.skynetEditor.
import {
  EditorView,
  crosshairCursor,
  drawSelection,
  dropCursor,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
  rectangularSelection,
} from "@codemirror/view";
import { Compartment, EditorSelection, EditorState, Prec } from "@codemirror/state";
import { bracketMatching, foldGutter, foldKeymap, indentOnInput, indentUnit } from "@codemirror/language";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { lintGutter, lintKeymap } from "@codemirror/lint";
import { python } from "@codemirror/lang-python";

import { extraCompletions, parseCompletions } from "./completions.js";
import { DiagnosticsClient } from "./diagnostics.js";
import { layout, themeFor } from "./theme.js";

export const version = "1.0.0";

const DARK_QUERY = "(prefers-color-scheme: dark)";

// Whether the last thing the user did was a Tab press (rather than a click): the editor then
// takes the focus in tab-focus mode, so Tab passes through it until the user types.
let arrivedByTab = false;
if (typeof document !== "undefined") {
  document.addEventListener("keydown", (event) => { arrivedByTab = event.key === "Tab"; }, true);
  document.addEventListener("pointerdown", () => { arrivedByTab = false; }, true);
}

// Tab through a page and the editor would swallow every Tab as an indent. Arriving by Tab,
// the editor lets Tab and Shift+Tab move the focus on until another key is pressed (then
// Tab indents, as in any code editor); Escape, then Tab, still leaves it at any time.
const TAB_PASSES_UNTIL_TYPING_MS = 24 * 60 * 60 * 1000;

function tabFocusOnArrival() {
  return EditorView.domEventHandlers({
    focus(event, view) {
      if (arrivedByTab) view.setTabFocusMode(TAB_PASSES_UNTIL_TYPING_MS);
      return false;
    },
    mousedown(event, view) {
      view.setTabFocusMode(false);
      return false;
    },
  });
}

function keysHelp(textarea) {
  // The page says how the keys work (data-keys-help, in the reader's language).
  const text = textarea.dataset.keysHelp;
  if (!text) return null;
  const help = document.createElement("p");
  help.className = "editor-keys";
  help.id = `${textarea.id || "editor"}-keys`;
  help.textContent = text;
  return help;
}

function fire(textarea, name, detail) {
  return textarea.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, cancelable: true }));
}

function labelFor(textarea) {
  const own = textarea.getAttribute("aria-label");
  if (own && own.trim()) return own.trim();
  const ids = (textarea.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean);
  const byIds = ids
    .map((id) => document.getElementById(id))
    .filter(Boolean)
    .map((el) => el.textContent.trim())
    .join(" ")
    .trim();
  if (byIds) return byIds;
  const labels = textarea.labels ? Array.from(textarea.labels) : [];
  const text = labels.map((l) => l.textContent.trim()).join(" ").trim();
  return text || "Code editor";
}

function optionsFromData(textarea) {
  const data = textarea.dataset;
  const options = {};
  if (data.diagnosticsUrl) options.diagnosticsUrl = data.diagnosticsUrl;
  if (data.completions) options.completions = data.completions;
  if (data.theme) options.theme = data.theme;
  return options;
}

function clampPos(doc, line, column) {
  let n = Math.trunc(Number(line));
  if (!Number.isFinite(n)) n = 1;
  n = Math.min(Math.max(n, 1), doc.lines);
  const l = doc.line(n);
  let c = Math.trunc(Number(column));
  if (column == null || !Number.isFinite(c)) c = 1;
  return l.from + Math.min(Math.max(c - 1, 0), l.length);
}

// options: {diagnosticsUrl?, completions? (array or JSON string), theme? ("auto"|"light"|"dark")}.
// Data attributes on the textarea fill in whatever options leaves out.
export function mount(textarea, options = {}) {
  if (!textarea || textarea.tagName !== "TEXTAREA") {
    throw new TypeError("SkynetEditor.mount needs a <textarea> element");
  }
  if (textarea.skynetEditor) return textarea.skynetEditor;
  const opts = { ...optionsFromData(textarea), ...options };
  const completions = parseCompletions(opts.completions || []);
  const themeMode = opts.theme || "auto";
  const media = typeof window.matchMedia === "function" ? window.matchMedia(DARK_QUERY) : null;
  const themeCompartment = new Compartment();
  const readOnly = textarea.readOnly || textarea.disabled;

  let cleanDoc = null;
  let dirty = false;
  let diagnostics = null;

  const commandKeys = Prec.highest(
    keymap.of([
      {
        key: "Mod-s",
        preventDefault: true,
        run: () => {
          fire(textarea, "skynet:save", { value: view.state.doc.toString() });
          return true;
        },
      },
      {
        key: "Mod-Enter",
        preventDefault: true,
        run: () => {
          fire(textarea, "skynet:run", { value: view.state.doc.toString() });
          return true;
        },
      },
    ]),
  );

  const extensions = [
    lineNumbers(),
    foldGutter(),
    lintGutter(),
    highlightActiveLineGutter(),
    highlightSpecialChars(),
    history(),
    drawSelection(),
    dropCursor(),
    EditorState.allowMultipleSelections.of(true),
    indentOnInput(),
    indentUnit.of("    "),
    EditorState.tabSize.of(4),
    bracketMatching(),
    closeBrackets(),
    autocompletion(),
    rectangularSelection(),
    crosshairCursor(),
    highlightActiveLine(),
    highlightSelectionMatches(),
    python(),
    extraCompletions(completions),
    commandKeys,
    keymap.of([
      ...closeBracketsKeymap,
      ...defaultKeymap,
      ...searchKeymap,
      ...historyKeymap,
      ...foldKeymap,
      ...completionKeymap,
      ...lintKeymap,
      indentWithTab,
    ]),
    layout,
    themeCompartment.of(themeFor(themeMode, media ? media.matches : false)),
    EditorView.contentAttributes.of({
      "aria-label": labelFor(textarea),
      ...(textarea.dataset.keysHelp ? { "aria-describedby": `${textarea.id || "editor"}-keys` } : {}),
    }),
    tabFocusOnArrival(),
    EditorView.updateListener.of((update) => {
      if (!update.docChanged) return;
      textarea.value = update.state.doc.toString();
      const nowDirty = !update.state.doc.eq(cleanDoc);
      if (nowDirty !== dirty) {
        dirty = nowDirty;
        fire(textarea, "skynet:dirty", { dirty });
      }
      if (diagnostics) diagnostics.schedule();
    }),
  ];
  if (readOnly) extensions.push(EditorState.readOnly.of(true), EditorView.editable.of(false));

  const wrapper = document.createElement("div");
  wrapper.className = "skynet-editor";
  const rows = Number(textarea.getAttribute("rows"));
  if (rows > 0) wrapper.style.setProperty("--skynet-editor-min-height", `${Math.max(rows, 4) * 1.5}em`);

  const view = new EditorView({
    state: EditorState.create({ doc: textarea.value, extensions }),
    parent: wrapper,
  });
  cleanDoc = view.state.doc;

  textarea.style.display = "none";
  textarea.insertAdjacentElement("afterend", wrapper);
  const help = keysHelp(textarea);
  if (help) wrapper.insertAdjacentElement("afterend", help);

  // Live theme switch when the system's colour scheme changes.
  const onScheme = (event) => {
    view.dispatch({ effects: themeCompartment.reconfigure(themeFor(themeMode, event.matches)) });
  };
  if (media && themeMode !== "light" && themeMode !== "dark") {
    if (media.addEventListener) media.addEventListener("change", onScheme);
    else if (media.addListener) media.addListener(onScheme);
  }

  // Clicking the textarea's <label> focuses the editor instead of the hidden field.
  const labels = textarea.labels ? Array.from(textarea.labels) : [];
  const onLabelClick = (event) => {
    event.preventDefault();
    view.focus();
  };
  for (const label of labels) label.addEventListener("click", onLabelClick);

  // A form reset puts the textarea back to its default text: follow it.
  const form = textarea.form;
  const onReset = () => setTimeout(() => api.setValue(textarea.value), 0);
  if (form) form.addEventListener("reset", onReset);

  const api = {
    view,
    getValue() {
      return view.state.doc.toString();
    },
    // Replaces the whole text as one undoable change. The textarea follows, and
    // isDirty() compares with the clean text: call markClean() if this is the saved text.
    setValue(text) {
      const value = String(text ?? "");
      if (value === view.state.doc.toString()) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: value } });
    },
    // 1-based line and column (column optional); clamped to the document.
    goToLine(line, column) {
      const pos = clampPos(view.state.doc, line, column);
      view.dispatch({
        selection: EditorSelection.cursor(pos),
        effects: EditorView.scrollIntoView(pos, { y: "center" }),
      });
      view.focus();
    },
    isDirty() {
      return dirty;
    },
    markClean() {
      cleanDoc = view.state.doc;
      if (dirty) {
        dirty = false;
        fire(textarea, "skynet:dirty", { dirty });
      }
    },
    focus() {
      view.focus();
    },
    // Removes the editor and shows the textarea again (holding the current text).
    destroy() {
      if (diagnostics) diagnostics.destroy();
      if (media) {
        if (media.removeEventListener) media.removeEventListener("change", onScheme);
        else if (media.removeListener) media.removeListener(onScheme);
      }
      for (const label of labels) label.removeEventListener("click", onLabelClick);
      if (form) form.removeEventListener("reset", onReset);
      textarea.value = view.state.doc.toString();
      view.destroy();
      wrapper.remove();
      if (help) help.remove();
      textarea.style.display = "";
      delete textarea.skynetEditor;
    },
  };
  textarea.skynetEditor = api;

  if (opts.diagnosticsUrl) {
    diagnostics = new DiagnosticsClient(view, textarea, opts.diagnosticsUrl);
    diagnostics.run();
  }
  return api;
}

// Mounts every textarea[data-skynet-editor] under root (default: the document).
export function mountAll(root = document) {
  const found = [];
  if (root.matches && root.matches("textarea[data-skynet-editor]")) found.push(root);
  if (root.querySelectorAll) found.push(...root.querySelectorAll("textarea[data-skynet-editor]"));
  return found.map((textarea) => {
    try {
      return mount(textarea);
    } catch (error) {
      console.error("SkynetEditor: could not mount", textarea, error);
      return null;
    }
  });
}

if (typeof document !== "undefined") {
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => mountAll(document));
  } else {
    mountAll(document);
  }
  // Content htmx swaps in later.
  document.addEventListener("htmx:load", (event) => mountAll(event.target));
}

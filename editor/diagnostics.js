// Server-side diagnostics: POST the source, turn the JSON answer into lint marks.
import { setDiagnostics } from "@codemirror/lint";

export const DEBOUNCE_MS = 400;

const SEVERITIES = new Set(["error", "warning", "info", "hint"]);

function cookie(name) {
  for (const part of (document.cookie || "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return part.slice(eq + 1).trim();
      }
    }
  }
  return null;
}

// The csrftoken cookie first, then <body hx-headers='{"X-CSRFToken": "..."}'>,
// then a {% csrf_token %} field in the textarea's own form.
export function csrfToken(textarea) {
  const fromCookie = cookie("csrftoken");
  if (fromCookie) return fromCookie;
  const raw = document.body && document.body.getAttribute("hx-headers");
  if (raw) {
    try {
      const headers = JSON.parse(raw);
      if (headers && typeof headers["X-CSRFToken"] === "string") return headers["X-CSRFToken"];
    } catch {
      // Not JSON (htmx also allows "js:" expressions): fall through.
    }
  }
  const field = textarea && textarea.form && textarea.form.querySelector('input[name="csrfmiddlewaretoken"]');
  return field ? field.value : null;
}

function toInt(value) {
  const n = Number(value);
  return Number.isFinite(n) ? Math.trunc(n) : null;
}

// One server diagnostic → a CodeMirror Diagnostic on `doc` (a Text), or null.
// Lines and columns are 1-based; a null column marks the whole line.
export function toCodeMirror(doc, d) {
  if (!d || typeof d !== "object") return null;
  let lineNo = toInt(d.line);
  if (lineNo === null) lineNo = 1;
  lineNo = Math.min(Math.max(lineNo, 1), doc.lines);
  const line = doc.line(lineNo);
  const column = toInt(d.column);
  let from;
  let to;
  if (column === null) {
    from = line.from;
    to = line.to;
  } else {
    from = line.from + Math.min(Math.max(column - 1, 0), line.length);
    const endLineNo = toInt(d.end_line);
    const endColumn = toInt(d.end_column);
    if (endLineNo !== null && endLineNo >= lineNo && endLineNo <= doc.lines) {
      const endLine = doc.line(endLineNo);
      to = endColumn === null ? endLine.to : endLine.from + Math.min(Math.max(endColumn - 1, 0), endLine.length);
    } else if (endColumn !== null && endLineNo === null) {
      to = line.from + Math.min(Math.max(endColumn - 1, 0), line.length);
    } else {
      // No end given: the word at the column, or one character.
      const rest = doc.sliceString(from, line.to);
      const word = /^[\p{L}\p{N}_]+/u.exec(rest);
      to = from + (word ? word[0].length : Math.min(1, rest.length));
    }
    if (to < from) to = from;
  }
  const severity = SEVERITIES.has(d.severity) ? d.severity : "info";
  const out = { from, to, severity, message: String(d.message ?? "") };
  if (typeof d.code === "string" && d.code) out.source = d.code;
  return out;
}

// Keeps one view's diagnostics fresh: schedule() after edits, run() at mount.
export class DiagnosticsClient {
  constructor(view, textarea, url) {
    this.view = view;
    this.textarea = textarea;
    this.url = url;
    this.timer = null;
    this.seq = 0;
    this.controller = null;
    this.sentDoc = null;
    this.last = [];
    this.destroyed = false;
  }

  schedule() {
    if (this.destroyed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), DEBOUNCE_MS);
  }

  async run() {
    if (this.destroyed) return;
    clearTimeout(this.timer);
    this.timer = null;
    // A newer request supersedes the one in flight.
    if (this.controller) this.controller.abort();
    const controller = typeof AbortController === "function" ? new AbortController() : null;
    this.controller = controller;
    const seq = ++this.seq;
    const doc = this.view.state.doc;
    this.sentDoc = doc;
    const headers = { Accept: "application/json", "X-Requested-With": "XMLHttpRequest" };
    const token = csrfToken(this.textarea);
    if (token) headers["X-CSRFToken"] = token;
    let payload;
    try {
      const response = await fetch(this.url, {
        method: "POST",
        headers,
        body: new URLSearchParams({ source: doc.toString() }),
        credentials: "same-origin",
        signal: controller ? controller.signal : undefined,
      });
      if (!response.ok) throw new Error(`diagnostics: HTTP ${response.status}`);
      payload = await response.json();
    } catch (error) {
      // Network or server trouble: keep the marks already shown.
      if (seq === this.seq && !(error && error.name === "AbortError")) {
        this.textarea.dispatchEvent(
          new CustomEvent("skynet:diagnostics-error", { detail: { error } }),
        );
      }
      return;
    } finally {
      if (this.controller === controller) this.controller = null;
    }
    // Stale: a newer request went out, or the text changed (a new one is due).
    if (this.destroyed || seq !== this.seq || this.view.state.doc !== doc) return;
    const list = payload && Array.isArray(payload.diagnostics) ? payload.diagnostics : [];
    const marks = [];
    for (const d of list) {
      const mark = toCodeMirror(doc, d);
      if (mark) marks.push(mark);
    }
    this.last = list;
    this.view.dispatch(setDiagnostics(this.view.state, marks));
    this.textarea.dispatchEvent(new CustomEvent("skynet:diagnostics", { detail: { diagnostics: list } }));
  }

  destroy() {
    this.destroyed = true;
    clearTimeout(this.timer);
    if (this.controller) this.controller.abort();
  }
}

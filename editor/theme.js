// Light and dark looks for the editor. The palette copies static/css/site.css
// (fixed values, not its custom properties, so a forced theme never mixes with the
// page's scheme), and every token colour keeps at least 4.5:1 contrast on the
// background it is drawn on.
import { EditorView } from "@codemirror/view";
import { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { tags as t } from "@lezer/highlight";

const mono =
  'ui-monospace, SFMono-Regular, "DejaVu Sans Mono", Menlo, Consolas, "Liberation Mono", monospace';

// Shared layout: sizing, fonts, borders. Colours live in the two themes below.
export const layout = EditorView.theme({
  "&": {
    fontSize: "14px",
    borderRadius: ".35rem",
    maxHeight: "var(--skynet-editor-max-height, 75vh)",
  },
  // On content and gutters (not the editor) so the gutters run the full height.
  ".cm-content, .cm-gutter": { minHeight: "var(--skynet-editor-min-height, 16em)" },
  ".cm-scroller": {
    fontFamily: mono,
    lineHeight: "1.5",
    overflow: "auto",
    borderRadius: ".35rem",
  },
  ".cm-content": { padding: ".4rem 0" },
  ".cm-gutters": { borderTopLeftRadius: ".35rem", borderBottomLeftRadius: ".35rem" },
  ".cm-tooltip": { fontFamily: "inherit" },
  ".cm-tooltip-autocomplete ul li[aria-selected]": { color: "#fff" },
  ".cm-tooltip-autocomplete ul li[aria-selected] .cm-completionDetail": { color: "inherit", opacity: "0.85" },
  // CodeMirror draws no icon for type "snippet": give it one.
  ".cm-completionIcon-snippet:after": { content: "'»'" },
});

function palette(c, dark) {
  return EditorView.theme(
    {
      "&": { color: c.fg, backgroundColor: c.bg, border: `1px solid ${c.line}` },
      "&.cm-focused": { outline: `2px solid ${c.focus}`, outlineOffset: "1px" },
      ".cm-content": { caretColor: c.caret },
      ".cm-cursor, .cm-dropCursor": { borderLeftColor: c.caret, borderLeftWidth: "2px" },
      "&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection":
        { backgroundColor: c.selection },
      ".cm-activeLine": { backgroundColor: c.activeLine },
      ".cm-gutters": { backgroundColor: c.gutterBg, color: c.gutterFg, borderRight: `1px solid ${c.line}` },
      ".cm-activeLineGutter": { backgroundColor: c.activeGutter, color: c.fg },
      ".cm-foldPlaceholder": { backgroundColor: c.gutterBg, color: c.gutterFg, border: `1px solid ${c.line}` },
      "&.cm-focused .cm-matchingBracket": { backgroundColor: c.bracket, outline: `1px solid ${c.bracketLine}` },
      "&.cm-focused .cm-nonmatchingBracket": { backgroundColor: c.badBracket },
      ".cm-selectionMatch": { backgroundColor: c.selectionMatch },
      ".cm-searchMatch": { backgroundColor: c.searchMatch, outline: `1px solid ${c.searchLine}` },
      ".cm-searchMatch.cm-searchMatch-selected": { backgroundColor: c.searchSelected },
      ".cm-panels": { backgroundColor: c.gutterBg, color: c.fg },
      ".cm-panels-top": { borderBottom: `1px solid ${c.line}` },
      ".cm-panels-bottom": { borderTop: `1px solid ${c.line}` },
      ".cm-textfield": { backgroundColor: c.bg, color: c.fg, border: `1px solid ${c.line}` },
      ".cm-button": { backgroundImage: "none", backgroundColor: c.gutterBg, color: c.fg, border: `1px solid ${c.line}` },
      ".cm-tooltip": { backgroundColor: c.tooltipBg, color: c.fg, border: `1px solid ${c.line}` },
      ".cm-tooltip-autocomplete ul li[aria-selected]": { backgroundColor: c.accent },
      ".cm-completionDetail": { color: c.gutterFg },
      ".cm-diagnostic-error": { borderLeftColor: c.error },
      ".cm-diagnostic-warning": { borderLeftColor: c.warning },
      ".cm-diagnostic-info": { borderLeftColor: c.info },
    },
    { dark },
  );
}

const lightColors = {
  fg: "#1d232a",
  bg: "#fff",
  caret: "#1d232a",
  selection: "#cfdcf7",
  selectionMatch: "#e3ebfb",
  activeLine: "#f2f5fa",
  gutterBg: "#f6f8fa",
  gutterFg: "#5d6875",
  activeGutter: "#e6ebf2",
  line: "#d9dee5",
  bracket: "#d8ecd9",
  bracketLine: "#7cb985",
  badBracket: "#f9d4d1",
  searchMatch: "#fff0a8",
  searchLine: "#d4b106",
  searchSelected: "#ffd666",
  tooltipBg: "#fff",
  accent: "#2457c5",
  focus: "#2457c5",
  error: "#b3261e",
  warning: "#a15c00",
  info: "#2457c5",
};

const darkColors = {
  fg: "#e6e9ee",
  bg: "#1b1f24",
  caret: "#e6e9ee",
  selection: "#2f4a7a",
  selectionMatch: "#2a3648",
  activeLine: "#232830",
  gutterBg: "#171a1f",
  gutterFg: "#9aa4b1",
  activeGutter: "#262c35",
  line: "#2c323a",
  bracket: "#2e4a36",
  bracketLine: "#5fcf85",
  badBracket: "#5a2826",
  searchMatch: "#5a4b12",
  searchLine: "#c9a227",
  searchSelected: "#7a6312",
  tooltipBg: "#20252c",
  accent: "#3d63b8",
  focus: "#7aa2ff",
  error: "#ff8a80",
  warning: "#f2c25c",
  info: "#7aa2ff",
};

// Token colours: contrast ≥ 4.5:1 on #fff / #1b1f24 respectively.
const lightHighlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.operatorKeyword, t.definitionKeyword, t.moduleKeyword], color: "#8a1f9c" },
  { tag: [t.bool, t.null, t.atom], color: "#1a5fb4" },
  { tag: [t.number], color: "#0b6e4f" },
  { tag: [t.string, t.special(t.string)], color: "#a3241b" },
  { tag: [t.escape, t.regexp], color: "#9c4221" },
  { tag: [t.comment, t.lineComment, t.blockComment], color: "#5d6875", fontStyle: "italic" },
  { tag: [t.function(t.definition(t.variableName)), t.function(t.definition(t.propertyName))], color: "#0a5ca8", fontWeight: "600" },
  { tag: [t.definition(t.className), t.className], color: "#8a4b00" },
  { tag: [t.function(t.variableName), t.function(t.propertyName)], color: "#0a5ca8" },
  { tag: [t.self, t.special(t.variableName)], color: "#8a1f9c", fontStyle: "italic" },
  { tag: [t.propertyName], color: "#155e63" },
  { tag: [t.meta, t.annotation], color: "#7a5900" },
  { tag: [t.operator, t.derefOperator], color: "#3b4450" },
  { tag: [t.punctuation, t.bracket, t.paren, t.squareBracket, t.brace], color: "#3b4450" },
  { tag: t.invalid, color: "#b3261e", textDecoration: "underline wavy" },
]);

const darkHighlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.operatorKeyword, t.definitionKeyword, t.moduleKeyword], color: "#d69cff" },
  { tag: [t.bool, t.null, t.atom], color: "#79b8ff" },
  { tag: [t.number], color: "#7ee2b8" },
  { tag: [t.string, t.special(t.string)], color: "#ffab70" },
  { tag: [t.escape, t.regexp], color: "#ffc799" },
  { tag: [t.comment, t.lineComment, t.blockComment], color: "#9aa4b1", fontStyle: "italic" },
  { tag: [t.function(t.definition(t.variableName)), t.function(t.definition(t.propertyName))], color: "#82c7ff", fontWeight: "600" },
  { tag: [t.definition(t.className), t.className], color: "#ffd479" },
  { tag: [t.function(t.variableName), t.function(t.propertyName)], color: "#82c7ff" },
  { tag: [t.self, t.special(t.variableName)], color: "#d69cff", fontStyle: "italic" },
  { tag: [t.propertyName], color: "#8be0e6" },
  { tag: [t.meta, t.annotation], color: "#f2c25c" },
  { tag: [t.operator, t.derefOperator], color: "#c9d1d9" },
  { tag: [t.punctuation, t.bracket, t.paren, t.squareBracket, t.brace], color: "#c9d1d9" },
  { tag: t.invalid, color: "#ff8a80", textDecoration: "underline wavy" },
]);

export const lightTheme = [palette(lightColors, false), syntaxHighlighting(lightHighlight)];
export const darkTheme = [palette(darkColors, true), syntaxHighlighting(darkHighlight)];

// "light" | "dark" | "auto" (anything else means auto).
export function themeFor(mode, systemDark) {
  if (mode === "light") return lightTheme;
  if (mode === "dark") return darkTheme;
  return systemDark ? darkTheme : lightTheme;
}

// Page-supplied completions (the skynet helpers, a REWARD_SPEC snippet), added
// to the Python language's own (keywords, builtins, names in scope).
import { completeFromList, ifNotIn, snippetCompletion } from "@codemirror/autocomplete";
import { pythonLanguage } from "@codemirror/lang-python";

const TYPES = new Set(["function", "variable", "snippet", "keyword", "constant", "class", "module", "property", "method", "text", "type"]);

// Entry: {label, type, detail?, info?, apply?, snippet?, boost?}. `snippet` (or an
// `apply` of type "snippet" containing ${...} fields) becomes a snippetCompletion,
// so Tab walks its fields.
export function toCompletion(entry) {
  if (typeof entry === "string") return { label: entry, type: "variable" };
  if (!entry || typeof entry !== "object" || typeof entry.label !== "string" || !entry.label) return null;
  const base = { label: entry.label };
  base.type = TYPES.has(entry.type) ? entry.type : "variable";
  if (typeof entry.detail === "string") base.detail = entry.detail;
  if (typeof entry.info === "string") base.info = entry.info;
  if (typeof entry.boost === "number") base.boost = entry.boost;
  else base.boost = 1; // rank the page's helpers above same-prefix builtins
  let template = typeof entry.snippet === "string" ? entry.snippet : null;
  if (template === null && base.type === "snippet" && typeof entry.apply === "string" && entry.apply.includes("${")) {
    template = entry.apply;
  }
  if (template !== null) return snippetCompletion(template, base);
  if (typeof entry.apply === "string") base.apply = entry.apply;
  return base;
}

export function parseCompletions(value) {
  let list = value;
  if (typeof value === "string") {
    try {
      list = JSON.parse(value);
    } catch {
      console.warn("SkynetEditor: data-completions is not valid JSON");
      return [];
    }
  }
  if (!Array.isArray(list)) return [];
  return list.map(toCompletion).filter(Boolean);
}

// An extension adding `completions` to Python completion, outside strings and comments.
export function extraCompletions(completions) {
  if (!completions.length) return [];
  return pythonLanguage.data.of({
    autocomplete: ifNotIn(["String", "FormatString", "Comment", "PropertyName"], completeFromList(completions)),
  });
}

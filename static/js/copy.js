// Copy buttons: the run page's best candidate, the API tokens page's new token. Without
// JavaScript (or a clipboard) a button stays hidden; the text can still be selected.
(function () {
  "use strict";
  function canCopy() {
    return !!(navigator.clipboard && navigator.clipboard.writeText);
  }
  function reveal() {
    if (!canCopy()) return;
    document.querySelectorAll("button[data-copy-target][hidden]").forEach(function (button) {
      button.hidden = false;
    });
  }
  function say(button, attribute) {
    var status = button.parentNode.querySelector(".copy-status");
    if (!status) return;
    status.textContent = status.getAttribute(attribute) || "";
    setTimeout(function () { status.textContent = ""; }, 2500);
  }
  document.addEventListener("DOMContentLoaded", reveal);
  // The live part of the page is swapped in by htmx as the run goes on.
  document.addEventListener("htmx:afterSettle", reveal);
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-copy-target]") : null;
    if (!button || !canCopy()) return;
    var source = document.getElementById(button.getAttribute("data-copy-target"));
    if (!source) return;
    var text = source.tagName === "INPUT" ? source.value : source.textContent;
    navigator.clipboard.writeText(text).then(
      function () { say(button, "data-copied"); },
      function () { say(button, "data-failed"); }
    );
  });
})();

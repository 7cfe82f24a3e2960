// The run page: a Copy button for the best candidate's text. Without JavaScript (or a
// clipboard) the button stays hidden; the text can still be selected or downloaded.
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
    navigator.clipboard.writeText(source.textContent).then(
      function () { say(button, "data-copied"); },
      function () { say(button, "data-failed"); }
    );
  });
})();

// Copy buttons on code blocks. Without JavaScript the code is still selectable.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-copy]") : null;
    if (!button) return;
    var code = button.closest(".code-block").querySelector("pre code");
    var text = code ? code.innerText : "";
    var done = function () {
      button.classList.add("copied");
      setTimeout(function () { button.classList.remove("copied"); }, 1500);
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, function () {});
    }
  });
})();

// The labelling page's keys: 1/0 (or 1..N) label the case, N goes to the note (Esc
// leaves it), the arrows move to the previous or next case. Each key clicks a real
// button or link of the page, which works without JavaScript too; htmx sends it and
// swaps the answer (the next case) in. Keys pressed while an answer is on its way wait
// for it, so a fast labeller's second key labels the next case, not this one again.
(function () {
  "use strict";
  var pending = [];
  var busy = false;

  function panel() {
    return document.getElementById("labelling-case");
  }

  function draftKey(root) {
    return "labelling-note:" + root.dataset.labelling + ":" + root.dataset.position;
  }

  // By the key's place, not its letter: on a Hindi or Spanish layout the digits and N
  // are where they are on any other.
  function keyOf(event) {
    var code = event.code || "";
    if (/^(Digit|Numpad)[0-9]$/.test(code)) return code.slice(-1);
    if (code === "KeyN" || event.key === "n" || event.key === "N") return "n";
    if (event.key === "ArrowLeft" || event.key === "ArrowRight") return event.key;
    if (/^[0-9]$/.test(event.key)) return event.key;
    return null;
  }

  function click(element) {
    if (!element) return false;
    element.click();
    return true;
  }

  function act(key) {
    var root = panel();
    if (!root) return false;
    if (key === "n") {
      var note = root.querySelector("textarea[name=note]");
      if (!note) return false;
      note.focus();
      return true;
    }
    if (key === "ArrowLeft") return click(document.getElementById("label-previous"));
    if (key === "ArrowRight") return click(document.getElementById("label-next"));
    return click(root.querySelector('button[data-key="' + key + '"]'));
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || !panel()) return;
    var target = event.target;
    if (target.matches && target.matches("textarea, input, select")) {
      if (event.key === "Escape") {
        event.preventDefault();
        target.blur();
        panel().focus({ preventScroll: true });
      }
      return;
    }
    var key = keyOf(event);
    if (!key) return;
    event.preventDefault(); // an N must not be typed into the note it opens
    if (busy) pending.push(key);
    else act(key);
  });

  // A note typed on a case not labelled yet is kept in the browser until the label
  // takes it along; on a labelled case, leaving the note saves it.
  document.addEventListener("focusout", function (event) {
    var note = event.target;
    var root = panel();
    if (!root || !note.matches || !note.matches("#labelling-case textarea[name=note]")) return;
    if (note.value === note.defaultValue) return;
    if (root.dataset.labelled !== "1") {
      localStorage.setItem(draftKey(root), note.value);
      return;
    }
    var next = event.relatedTarget;
    if (next && next.form === note.form && next.name === "value") return; // it carries the note
    click(document.getElementById("save-note"));
  });

  function restore() {
    var root = panel();
    if (!root) return;
    var note = root.querySelector("textarea[name=note]");
    var draft = localStorage.getItem(draftKey(root));
    if (root.dataset.labelled === "1") localStorage.removeItem(draftKey(root));
    else if (note && draft !== null && !note.value) note.value = draft;
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (panel() && panel().contains(event.target)) busy = true;
  });
  // The page swaps with no settle delay (hx-swap "settle:0ms"), so this runs as the
  // answer lands: htmx has set up the new panel's form and links, and no key can come
  // in between (the letters typed after an N go to the note).
  document.addEventListener("htmx:afterSettle", function () {
    var root = panel();
    if (!root) return;
    busy = false;
    restore();
    if (!document.activeElement || document.activeElement === document.body) {
      root.focus({ preventScroll: true });
    }
    if (root.getBoundingClientRect().top < 0) root.scrollIntoView();
    while (!busy && pending.length) act(pending.shift());
  });
  // An answer that swapped nothing (the network, a 500): keys go on working.
  document.addEventListener("htmx:afterRequest", function (event) {
    if (!event.detail.successful && !event.detail.xhr.status) busy = false;
  });
  document.addEventListener("htmx:responseError", function () {
    busy = false;
  });
  document.addEventListener("DOMContentLoaded", restore);
})();

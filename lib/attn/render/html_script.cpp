// The interactive HTML page's script (see html_script.hpp).
#include "attn/render/html_script.hpp"

namespace attn {

namespace {

// The script's text (data, not a function: the page's behaviour in one piece of JavaScript).
const char* const html_script_text = R"js(
(function () {
  "use strict";
  var doc = document, nav = doc.querySelector("nav.ax-nav");
  var data = doc.getElementById("ax-notes");
  if (!nav || !data) return;
  var notes = JSON.parse(data.textContent);
  var secs = doc.querySelectorAll("main > section");
  secs = Array.prototype.slice.call(secs);
  var prev = nav.querySelector(".ax-prev");
  var next = nav.querySelector(".ax-next");
  var pos = nav.querySelector(".ax-pos");
  var allBtn = nav.querySelector(".ax-all");
  var bug = nav.querySelector(".ax-bugswitch input");
  var panel = doc.querySelector("aside.ax-note");
  var cur = 0, all = secs.length === 1, pinned = null;
  nav.hidden = false;
  doc.body.classList.add("ax-js");
  function show() {
    secs.forEach(function (s, k) { s.hidden = all ? false : k !== cur; });
    pos.textContent = all ? "" : (cur + 1) + " / " + secs.length;
    allBtn.textContent = all ? allBtn.dataset.one : allBtn.dataset.all;
    allBtn.setAttribute("aria-pressed", all ? "true" : "false");
    prev.disabled = all ? true : cur === 0;
    next.disabled = all ? true : cur === secs.length - 1;
    doc.body.setAttribute("data-step", all ? "all" : String(cur));
  }
  function go(k) {
    unpin();
    panel.hidden = true;  // a note belongs to the step it was opened on
    all = false;
    cur = Math.max(0, Math.min(secs.length - 1, k));
    show();
    window.scrollTo(0, 0);
  }
  function add(parent, tag, cls, text) {
    var e = doc.createElement(tag);
    if (cls) e.className = cls;
    e.textContent = text;
    parent.appendChild(e);
    return e;
  }
  function str(t) { return Array.isArray(t) ? t.join("") : t; }
  function explain(td) {
    var n = notes[Number(td.getAttribute("data-n"))];
    panel.textContent = "";
    add(panel, "p", "ax-title", str(n[0]));
    if (n[1].length) {
      var ol = add(panel, "ol", "", "");
      n[1].forEach(function (t) { add(ol, "li", "", str(t)); });
    }
    n[2].forEach(function (t) { add(panel, "p", "ax-result", str(t)); });
    panel.hidden = false;
  }
  function unpin() {
    if (pinned) pinned.classList.remove("ax-on");
    pinned = null;
  }
  function cellOf(e) {
    return e.target.closest ? e.target.closest("td[data-n]") : null;
  }
  doc.addEventListener("mouseover", function (e) {
    var td = cellOf(e);
    if (td) { if (!pinned) explain(td); }
  });
  doc.addEventListener("click", function (e) {
    var td = cellOf(e);
    if (!td) return;
    var same = pinned === td;
    unpin();
    if (same) { panel.hidden = true; return; }
    pinned = td;
    td.classList.add("ax-on");
    explain(td);
  });
  prev.addEventListener("click", function () { go(cur - 1); });
  next.addEventListener("click", function () { go(cur + 1); });
  allBtn.addEventListener("click", function () { all = !all; show(); });
  if (bug) bug.addEventListener("change", function () {
    doc.body.classList.toggle("ax-nobug", !bug.checked);
  });
  doc.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "ArrowLeft") go(cur - 1);
    else if (e.key === "ArrowRight") go(cur + 1);
    else if (e.key === "Escape") { unpin(); panel.hidden = true; }
    else return;
    e.preventDefault();
  });
  function follow() {
    var id = decodeURIComponent(location.hash.slice(1));
    secs.forEach(function (s, k) {
      if (s.id !== id) return;
      if (all) s.scrollIntoView(); else go(k);
    });
  }
  window.addEventListener("hashchange", follow);
  show();
  follow();
})();
)js";

}  // namespace

const char* html_script() { return html_script_text; }

}  // namespace attn

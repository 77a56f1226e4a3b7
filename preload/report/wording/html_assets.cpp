// The HTML report's style and script, inline in every page: no network, no CDN, and the page
// opens from a copied file. The script only adds conveniences (find a rank, open or close the
// tree); the page reads complete without it.
#include "report/wording/html_parts.h"

namespace hangshim::report::html {

const char* const kStyle = R"CSS(
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 1.5em 3em; color: #1d1d1f; background: #fff; }
h1 { font-size: 1.1em; color: #555; font-weight: normal; margin: 1em 0 .3em; }
h2 { font-size: 1.05em; margin: 1.6em 0 .4em; border-bottom: 1px solid #ddd; padding-bottom: .2em; }
h3 { font-size: .95em; margin: 1em 0 .3em; }
#verdict { font-size: 1.2em; font-weight: 600; padding: .6em .8em; border-radius: 6px; margin: .3em 0 .8em; }
#verdict.problem { background: #fde8e7; border-left: 6px solid #c62828; }
#verdict.healthy { background: #e7f5ea; border-left: 6px solid #2e7d32; }
ul.lines { margin: .2em 0; padding-left: 1.4em; }
code, .frame, td.cell, .ranks { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; }
.tools { margin: .5em 0; }
.tools input { width: 8em; }
table.timeline { border-collapse: collapse; margin: .3em 0 1em; }
table.timeline th, table.timeline td { border: 1px solid #ddd; padding: 2px 6px; text-align: center; white-space: nowrap; }
table.timeline th.ranks, table.timeline td.ranks { text-align: left; }
tr.culprit td.ranks { background: #c62828; color: #fff; font-weight: 600; }
tr.culprit { outline: 2px solid #c62828; }
.completed { background: #e7f5ea; color: #2e7d32; }
.pending { background: #fff3cd; color: #8a5300; font-weight: 600; }
.failed { background: #fde8e7; color: #c62828; font-weight: 600; }
.issued { background: #f1f1f1; color: #777; }
.missing { background: repeating-linear-gradient(45deg, #fff, #fff 4px, #f6d5d3 4px, #f6d5d3 8px); color: #c62828; }
.differs { box-shadow: inset 0 0 0 2px #c62828; font-weight: 600; }
.legend span { display: inline-block; padding: 0 .5em; margin-right: .4em; border: 1px solid #ddd; }
details { margin-left: 1.2em; }
details > summary { cursor: pointer; }
details.branch > summary .ranks { background: #e8eefc; padding: 0 .4em; border-radius: 3px; margin-right: .4em; }
details.branch.culprit > summary .ranks { background: #c62828; color: #fff; }
.frame { display: block; margin-left: 1.2em; }
.frame .file { color: #666; }
.ended { color: #777; margin-left: 1.2em; font-style: italic; }
details.locals { margin-left: 2.4em; font-size: 12.5px; }
details.locals td { padding: 0 .6em 0 0; vertical-align: top; }
.found { outline: 3px solid #f9a825; }
.note { color: #666; }
)CSS";

const char* const kScript = R"JS(
(function () {
  // "0-3,7" -> does it hold rank r?
  function holds(list, r) {
    return list.split(",").some(function (part) {
      var ends = part.split("-");
      return ends.length === 2 ? r >= +ends[0] && r <= +ends[1] : +part === r;
    });
  }
  var find = document.getElementById("find-rank");
  function show(r) {
    var marked = document.querySelectorAll(".found");
    for (var i = 0; i < marked.length; i++) marked[i].classList.remove("found");
    if (isNaN(r)) return;
    var all = document.querySelectorAll("[data-ranks]");
    for (var j = 0; j < all.length; j++) {
      if (!holds(all[j].getAttribute("data-ranks"), r)) continue;
      all[j].classList.add("found");
      for (var p = all[j]; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    }
  }
  if (find) find.addEventListener("input", function () { show(parseInt(find.value, 10)); });
  // report.html#rank=5 opens the page on rank 5: a link to give a colleague.
  var wanted = /rank=(\d+)/.exec(location.hash);
  if (wanted && find) {
    find.value = wanted[1];
    show(parseInt(wanted[1], 10));
  }
  function openAll(open) {
    var tree = document.querySelectorAll("#stacks details.branch");
    for (var i = 0; i < tree.length; i++) tree[i].open = open;
  }
  var expand = document.getElementById("expand-all"), collapse = document.getElementById("collapse-all");
  if (expand) expand.addEventListener("click", function () { openAll(true); });
  if (collapse) collapse.addEventListener("click", function () { openAll(false); });
})();
)JS";

}  // namespace hangshim::report::html

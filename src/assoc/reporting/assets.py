"""The style sheet and the script every report carries inline (no library, nothing fetched).

The script makes the item-level tables (``div.datatable``, their rows in a ``<script
type="application/json">`` beside them) searchable, sortable by any column and paginated, and makes
the static tables marked ``sortable`` sortable by a click on a column header.
"""

from __future__ import annotations

CSS = """
:root { --ink: #1b1b1b; --muted: #5f6368; --rule: #d9d9d9; --accent: #1f5fa8; --band: #f6f7f9; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); }
header { padding: 1.2rem 2rem 0.6rem; border-bottom: 1px solid var(--rule); background: var(--band); }
header h1 { margin: 0 0 0.3rem; font-size: 1.6rem; }
header p { margin: 0.2rem 0; color: var(--muted); }
nav { margin-top: 0.6rem; display: flex; flex-wrap: wrap; gap: 0.3rem 1rem; }
nav a { color: var(--accent); text-decoration: none; }
main { padding: 0 2rem 2rem; max-width: 1400px; }
footer { padding: 0 2rem 1.5rem; }
section { border-bottom: 1px solid var(--rule); padding-bottom: 1rem; }
h2 { margin: 1.6rem 0 0.6rem; font-size: 1.3rem; }
h3 { margin: 1.2rem 0 0.4rem; font-size: 1.05rem; }
p.note, .note { color: var(--muted); font-size: 0.9rem; }
table { border-collapse: collapse; margin: 0.4rem 0 0.8rem; font-size: 0.9rem; }
th, td { border-bottom: 1px solid var(--rule); padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
th { background: var(--band); font-weight: 600; white-space: nowrap; }
td.num, td.value, td.interval, td.p { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.sortable th, div.datatable th { cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \\25B2"; font-size: 0.7em; }
th[aria-sort="descending"]::after { content: " \\25BC"; font-size: 0.7em; }
figure { margin: 0.6rem 0 1.2rem; display: inline-block; vertical-align: top; margin-right: 1.5rem; }
figcaption { color: var(--muted); font-size: 0.85rem; max-width: 680px; }
svg.figure { max-width: 100%; height: auto; background: #fff; }
details { margin: 0.4rem 0; }
summary { cursor: pointer; font-weight: 600; }
pre { background: var(--band); padding: 0.6rem; overflow-x: auto; font-size: 0.82rem; }
code { font-size: 0.88em; }
.datatable .controls { display: flex; gap: 0.8rem; align-items: center; margin: 0.3rem 0; flex-wrap: wrap; }
.datatable input[type=search] { padding: 0.25rem 0.4rem; min-width: 18rem; }
.datatable .scroll { overflow-x: auto; max-width: 100%; }
.datatable td { max-width: 28rem; overflow-wrap: break-word; }
.warning { color: #8a4b00; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 1rem; margin: 0.3rem 0 0.8rem; }
dl.kv dt { color: var(--muted); }
dl.kv dd { margin: 0; overflow-wrap: anywhere; }
"""

JS = """
(function () {
  "use strict";
  function shown(value) {
    if (value === null || value === undefined) { return ""; }
    if (typeof value === "number") {
      if (Number.isInteger(value)) { return String(value); }
      var a = Math.abs(value);
      if (a !== 0 && (a >= 1e6 || a < 1e-4)) { return value.toExponential(4); }
      return String(Number(value.toPrecision(6)));
    }
    return String(value);
  }
  function compare(a, b) {
    var na = a === null || a === undefined || a === "", nb = b === null || b === undefined || b === "";
    if (na || nb) { return na === nb ? 0 : (na ? 1 : -1); }
    if (typeof a === "number" && typeof b === "number") { return a - b; }
    return String(a).localeCompare(String(b), undefined, {numeric: true});
  }
  function setSort(headers, index, ascending) {
    headers.forEach(function (th, i) {
      if (i === index) { th.setAttribute("aria-sort", ascending ? "ascending" : "descending"); }
      else { th.removeAttribute("aria-sort"); }
    });
  }
  function dataTable(box) {
    var data = JSON.parse(document.getElementById(box.getAttribute("data-source")).textContent);
    var size = parseInt(box.getAttribute("data-page-size") || "25", 10);
    var state = {rows: data.rows.slice(), filtered: null, column: -1, ascending: true, page: 0};
    var search = box.querySelector("input[type=search]");
    var info = box.querySelector(".info");
    var prev = box.querySelector("button.prev"), next = box.querySelector("button.next");
    var table = box.querySelector("table"), head = table.tHead.rows[0], body = table.tBodies[0];
    var headers = Array.prototype.slice.call(head.cells);
    function filter() {
      var query = search.value.trim().toLowerCase();
      state.filtered = !query ? state.rows : state.rows.filter(function (row) {
        return row.some(function (cell) { return shown(cell).toLowerCase().indexOf(query) >= 0; });
      });
      state.page = 0;
    }
    function render() {
      var rows = state.filtered, pages = Math.max(1, Math.ceil(rows.length / size));
      state.page = Math.min(state.page, pages - 1);
      var start = state.page * size, end = Math.min(rows.length, start + size);
      var html = [];
      for (var i = start; i < end; i++) {
        var cells = rows[i].map(function (cell) {
          var text = shown(cell).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
          return typeof cell === "number" ? "<td class=\\"num\\">" + text + "</td>" : "<td>" + text + "</td>";
        });
        html.push("<tr>" + cells.join("") + "</tr>");
      }
      body.innerHTML = html.join("");
      info.textContent = rows.length ? "rows " + (start + 1) + "\\u2013" + end + " of " + rows.length
        + (rows.length < state.rows.length ? " (" + state.rows.length + " before the search)" : "")
        : "no row matches";
      prev.disabled = state.page === 0;
      next.disabled = state.page >= pages - 1;
    }
    search.addEventListener("input", function () { filter(); render(); });
    prev.addEventListener("click", function () { state.page -= 1; render(); });
    next.addEventListener("click", function () { state.page += 1; render(); });
    headers.forEach(function (th, index) {
      th.addEventListener("click", function () {
        state.ascending = state.column === index ? !state.ascending : true;
        state.column = index;
        var sign = state.ascending ? 1 : -1;
        state.rows.sort(function (a, b) { return sign * compare(a[index], b[index]); });
        setSort(headers, index, state.ascending);
        filter();
        render();
      });
    });
    filter();
    render();
  }
  function sortable(table) {
    var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var state = {column: -1, ascending: true};
    headers.forEach(function (th, index) {
      th.addEventListener("click", function () {
        state.ascending = state.column === index ? !state.ascending : true;
        state.column = index;
        var body = table.tBodies[0], sign = state.ascending ? 1 : -1;
        var rows = Array.prototype.slice.call(body.rows);
        function key(row) {
          var cell = row.cells[index], value = cell.getAttribute("data-value");
          if (value !== null && value !== "nan") { return parseFloat(value); }
          return value === "nan" ? null : cell.textContent;
        }
        rows.sort(function (a, b) { return sign * compare(key(a), key(b)); });
        rows.forEach(function (row) { body.appendChild(row); });
        setSort(headers, index, state.ascending);
      });
    });
  }
  document.querySelectorAll("div.datatable").forEach(dataTable);
  document.querySelectorAll("table.sortable").forEach(sortable);
})();
"""

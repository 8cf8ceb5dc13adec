-- The script embedded in every flame graph SVG (kept apart from flame.lua
-- so the renderer reads as Lua).  It works offline, with no library:
-- click a box to zoom to it, "Reset Zoom" (or Escape) to go back, "Search"
-- (or Ctrl-F, '/') for a regular expression whose boxes turn magenta and
-- whose cumulative share (the union of the matched boxes' extents, so a
-- recursive function is not counted twice) shows bottom right; hovering
-- shows a box's tooltip line bottom left.  The URL keeps the state:
-- flame.svg?s=regex&z=index restores a search and a zoom.
return [==[
"use strict";
var svg, details, matched, searchbtn, unzoombtn, boxes = [], total = 0, W = 0, xpad = 10, fontw = 7;
var zoomed = null, term = null;
function attr(e, k) { return e.getAttribute(k); }
function init(evt) {
  svg = document.documentElement;
  details = document.getElementById("details");
  matched = document.getElementById("matched");
  searchbtn = document.getElementById("search");
  unzoombtn = document.getElementById("unzoom");
  total = +attr(svg, "data-total");
  W = +attr(svg, "width");
  xpad = +attr(svg, "data-xpad");
  fontw = +attr(svg, "data-fontw");
  var gs = document.querySelectorAll("g.f");
  for (var i = 0; i < gs.length; i++) {
    // each box is <g><title/><rect/>[<text/>]</g>, as flame.lua writes it
    var g = gs[i], t = g.firstChild.textContent, r = g.firstChild.nextSibling;
    var b = { i: i, g: g, r: r, t: r.nextSibling, tip: t,
      name: t.substring(0, t.lastIndexOf(" (")),
      s: +attr(g, "data-s"), e: +attr(g, "data-e"), d: +attr(g, "data-d"),
      x: +attr(r, "x"), w: +attr(r, "width"), fill: attr(r, "fill") };
    g.__box = b;
    boxes.push(b);
  }
  document.getElementById("frames").addEventListener("click", function (ev) {
    var b = boxOf(ev.target);
    if (b) zoom(b);
  });
  document.getElementById("frames").addEventListener("mouseover", function (ev) {
    var b = boxOf(ev.target);
    if (b) details.textContent = b.tip;
  });
  document.getElementById("frames").addEventListener("mouseout", function () {
    details.textContent = " ";
  });
  unzoombtn.addEventListener("click", unzoom);
  searchbtn.addEventListener("click", function () {
    if (term !== null) { clearSearch(); return; }
    askSearch();
  });
  window.addEventListener("keydown", function (ev) {
    if (ev.keyCode === 114 || ((ev.ctrlKey || ev.metaKey) && ev.keyCode === 70) || ev.key === "/") {
      ev.preventDefault();
      askSearch();
    } else if (ev.key === "Escape") {
      unzoom();
    }
  });
  var p = params();
  if (p.z !== undefined && boxes[+p.z]) zoom(boxes[+p.z]);
  if (p.s) search(p.s);
}
function params() {
  var out = {}, q = (window.location && window.location.search) || "";
  q.replace(/^\?/, "").split("&").forEach(function (kv) {
    if (!kv) return;
    var i = kv.indexOf("=");
    out[decodeURIComponent(i < 0 ? kv : kv.substring(0, i))] = i < 0 ? "" : decodeURIComponent(kv.substring(i + 1));
  });
  return out;
}
function remember() {
  if (!window.history || !history.replaceState) return;
  var q = [];
  if (zoomed) q.push("z=" + zoomed.i);
  if (term !== null) q.push("s=" + encodeURIComponent(term));
  try { history.replaceState(null, "", (q.length ? "?" + q.join("&") : "?")); } catch (e) { }
}
function boxOf(el) {
  while (el && el !== svg) {
    if (el.__box) return el.__box;
    el = el.parentNode;
  }
  return null;
}
function label(name, w) {
  var n = Math.floor((w - 3) / fontw);
  if (n < 3) return "";
  return name.length <= n ? name : name.substring(0, n - 2) + "..";
}
function place(b, x, w) {
  b.r.setAttribute("x", x.toFixed(2));
  b.r.setAttribute("width", w.toFixed(2));
  var l = label(b.name, w);
  if (!b.t && l) {
    b.t = document.createElementNS("http://www.w3.org/2000/svg", "text");
    b.t.setAttribute("y", +b.r.getAttribute("y") + +b.r.getAttribute("height") - 3);
    b.g.appendChild(b.t);
  }
  if (b.t) {
    b.t.setAttribute("x", (x + 3).toFixed(2));
    b.t.textContent = l;
  }
}
function zoom(z) {
  var s0 = z.s, e0 = z.e, d0 = z.d, sc = (W - 2 * xpad) / (e0 - s0);
  zoomed = z;
  for (var i = 0; i < boxes.length; i++) {
    var b = boxes[i], cl = b.g.classList;
    if (b.d >= d0 && b.s >= s0 && b.e <= e0) {
      cl.remove("hide"); cl.remove("parent");
      place(b, xpad + (b.s - s0) * sc, (b.e - b.s) * sc);
    } else if (b.d < d0 && b.s <= s0 && b.e >= e0) {
      cl.remove("hide"); cl.add("parent");
      place(b, xpad, W - 2 * xpad);
    } else {
      cl.add("hide");
    }
  }
  unzoombtn.setAttribute("class", "show");
  if (term !== null) search(term);
  remember();
}
function unzoom() {
  if (!zoomed) return;
  zoomed = null;
  for (var i = 0; i < boxes.length; i++) {
    var b = boxes[i];
    b.g.classList.remove("hide"); b.g.classList.remove("parent");
    place(b, b.x, b.w);
  }
  unzoombtn.setAttribute("class", "hide");
  if (term !== null) search(term);
  remember();
}
function askSearch() {
  var t = window.prompt("Search for a function (regular expression)", term || "");
  if (t !== null && t !== "") search(t);
}
function clearSearch() {
  term = null;
  for (var i = 0; i < boxes.length; i++) boxes[i].r.setAttribute("fill", boxes[i].fill);
  matched.textContent = " ";
  matched.setAttribute("class", "");
  searchbtn.textContent = "Search";
  searchbtn.setAttribute("class", "");
  remember();
}
// Highlights the boxes whose name matches re and returns the matched share
// (percent) of the visible range: the union of their [s, e) extents, so
// nested matches (recursion) count once.
function search(re) {
  var rx;
  try { rx = new RegExp(re); } catch (e) { matched.textContent = "bad pattern: " + e.message; return null; }
  term = re;
  var lo = zoomed ? zoomed.s : 0, hi = zoomed ? zoomed.e : total, spans = [], hits = 0;
  for (var i = 0; i < boxes.length; i++) {
    var b = boxes[i];
    if (rx.test(b.name)) {
      b.r.setAttribute("fill", "rgb(230,0,230)");
      var s = Math.max(b.s, lo), e = Math.min(b.e, hi);
      if (e > s) { spans.push([s, e]); hits++; }
    } else {
      b.r.setAttribute("fill", b.fill);
    }
  }
  spans.sort(function (a, b) { return a[0] - b[0]; });
  var sum = 0, cs = -1, ce = -1;
  for (var j = 0; j < spans.length; j++) {
    if (spans[j][0] >= ce) { if (ce > cs) sum += ce - cs; cs = spans[j][0]; ce = spans[j][1]; }
    else if (spans[j][1] > ce) ce = spans[j][1];
  }
  if (ce > cs) sum += ce - cs;
  var pct = hi > lo ? 100 * sum / (hi - lo) : 0;
  matched.textContent = "Matched: " + pct.toFixed(2) + "% (" + hits + " boxes)";
  matched.setAttribute("class", "show");
  matched.setAttribute("data-pct", String(pct));
  searchbtn.textContent = "Reset Search";
  searchbtn.setAttribute("class", "show");
  remember();
  return pct;
}
]==]

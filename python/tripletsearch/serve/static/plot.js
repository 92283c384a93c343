// Small SVG plots for the owner's dashboard: lines against axes, and a 2-D map of items.
// No dependencies; every element is made with the DOM (the page's CSP allows no inline code).

const NS = "http://www.w3.org/2000/svg";
const PAD = {left: 48, right: 12, top: 12, bottom: 36};
export const COLOURS = ["#1f5fbf", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e"];

/** An SVG element with its attributes, appended to parent. */
export function el(tag, attrs, parent) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.append(node);
  return node;
}

function text(parent, x, y, words, anchor = "middle") {
  const t = el("text", {x, y, "text-anchor": anchor, "font-size": 11, fill: "#5a5a60"}, parent);
  t.textContent = words;
  return t;
}

function box(svg) {
  const [, , w, h] = svg.getAttribute("viewBox").split(" ").map(Number);
  return {w, h, x0: PAD.left, x1: w - PAD.right, y0: h - PAD.bottom, y1: PAD.top};
}

/** Round tick values from lo to hi: steps of 1, 2 or 5 times a power of ten (about n). */
export function ticks(lo, hi, n = 4) {
  const raw = (hi - lo) / n || 1;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    out.push(+v.toPrecision(12));
  }
  return out;
}

/** An axis's end: ``v`` rounded outward to a tick step (the data always inside). */
function nice(v, up) {
  if (v === 0) return 0;
  const mag = 10 ** Math.floor(Math.log10(Math.abs(v)));
  const step = mag / 2;
  return (up ? Math.ceil(v / step) : Math.floor(v / step)) * step;
}

function fmt(v) {
  return Math.abs(v) >= 100 ? Math.round(v).toString() : (+v.toFixed(2)).toString();
}

/**
 * Lines (series: [{name, x: [], y: [], lo?: [], hi?: [], colour}]) on axes, each point
 * with its interval (lo, hi) when given; yRange: the y axis's least span (widened to hold
 * every point and interval: nothing is drawn outside the axes). Each series is a
 * <polyline> with data-series and data-points attributes; an interval, a <line> with
 * class "interval".
 */
export function plotLines(svg, series, {xLabel, yLabel, yRange}) {
  svg.replaceChildren();
  const b = box(svg);
  const xs = series.flatMap((s) => s.x);
  const ys = series.flatMap((s) => [...s.y, ...(s.lo || []), ...(s.hi || [])]);
  const xHi = nice(Math.max(...xs, 0) || 1, true);
  const [wantLo, wantHi] = yRange || [0, Math.max(1, ...ys)];
  const yLo = Math.min(wantLo, ...ys.map((v) => nice(v, false)));
  const yHi = Math.max(wantHi, ...ys.map((v) => nice(v, true)));
  const X = (v) => b.x0 + ((b.x1 - b.x0) * v) / xHi;
  const Y = (v) => b.y0 - ((b.y0 - b.y1) * (v - yLo)) / (yHi - yLo);
  el("line", {x1: b.x0, y1: b.y0, x2: b.x1, y2: b.y0, stroke: "#c8c8cc"}, svg);
  el("line", {x1: b.x0, y1: b.y0, x2: b.x0, y2: b.y1, stroke: "#c8c8cc"}, svg);
  for (const v of ticks(0, xHi)) text(svg, X(v), b.y0 + 14, fmt(v)).setAttribute("class", "tick x");
  for (const v of ticks(yLo, yHi)) {
    text(svg, b.x0 - 4, Y(v) + 4, fmt(v), "end").setAttribute("class", "tick y");
  }
  text(svg, (b.x0 + b.x1) / 2, b.h - 4, xLabel);
  const yl = text(svg, 12, (b.y0 + b.y1) / 2, yLabel);
  yl.setAttribute("transform", `rotate(-90 12 ${(b.y0 + b.y1) / 2})`);
  for (const s of series) {
    for (let i = 0; s.lo && i < s.x.length; i++) {
      if (s.lo[i] === null || s.hi[i] === null) continue;
      el("line", {x1: X(s.x[i]), x2: X(s.x[i]), y1: Y(s.lo[i]), y2: Y(s.hi[i]),
        stroke: s.colour, "stroke-width": 1, class: "interval"}, svg);
    }
    const pts = s.x.map((x, i) => `${X(x).toFixed(1)},${Y(s.y[i]).toFixed(1)}`).join(" ");
    el("polyline", {points: pts, fill: "none", stroke: s.colour, "stroke-width": 2,
      "data-series": s.name, "data-points": s.x.length}, svg);
    for (let i = 0; i < s.x.length && s.x.length <= 40; i++) {
      el("circle", {cx: X(s.x[i]), cy: Y(s.y[i]), r: 3, fill: s.colour}, svg);
    }
  }
}

/** The items at their 2-D points: pictures (up to 300), else swatches, named on hover. */
export function plotMap(svg, points, items) {
  svg.replaceChildren();
  const b = box(svg);
  const lo = [0, 1].map((j) => Math.min(...points.map((p) => p[j])));
  const hi = [0, 1].map((j) => Math.max(...points.map((p) => p[j])));
  const span = Math.max(hi[0] - lo[0], hi[1] - lo[1]) || 1;
  const size = Math.min(b.w, b.h) - 40;
  const at = (p, j) => 20 + (size * (p[j] - lo[j] + (span - hi[j] + lo[j]) / 2)) / span;
  const pictures = items.length <= 300 && items.every((it) => it.image);
  points.forEach((p, i) => {
    const it = items[i];
    const x = at(p, 0);
    const y = b.h - at(p, 1);
    const node = pictures
      ? el("image", {href: it.image, x: x - 14, y: y - 14, width: 28, height: 28}, svg)
      : el("circle", {cx: x, cy: y, r: items.length > 1000 ? 3 : 7,
        fill: it.hex || "#1f5fbf", stroke: "#1d1d1f", "stroke-width": 0.5}, svg);
    node.setAttribute("class", "item");
    node.dataset.item = it.id;
    el("title", {}, node).textContent = it.name;
  });
}

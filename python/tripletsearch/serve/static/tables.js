// The collect dashboard's tables (dashboard.js): the samplers (participants, flagged,
// withdrawn, fallbacks, buffer) with the refitter's state, and the screens (per form shown:
// the collect's own, the held-out test triplets; answers, skips, implied triplets, median
// time) with each sampler's newest held-out accuracy.

import {cell} from "./roster.js";

const $ = (id) => document.getElementById(id);

/** The collect's screens: per form shown, its answers, skips, implied triplets and time. */
export function trials(t) {
  const acc = Object.entries(t.accuracy).map(([name, a]) => a.accuracy === null
    ? `${name}: no held-out triplets yet`
    : `${name} ${a.accuracy.toFixed(3)} [${a.interval[0].toFixed(3)}, ` +
      `${a.interval[1].toFixed(3)}] on ${a.n_test} test triplets`);
  $("trial").textContent = `Each participant's screens: ${t.form}. Held-out accuracy of ` +
    `each sampler's newest embedding: ${acc.length ? acc.join("; ") : "none fitted yet"}.`;
  const body = $("trials").querySelector("tbody");
  body.replaceChildren();
  for (const f of t.forms) {
    const row = document.createElement("tr");
    row.dataset.form = f.form;
    const time = f.median_ms === null
      ? `fewer than 5 timed (${f.timed})`
      : `${(f.median_ms / 1000).toFixed(1)} s (of ${f.timed})`;
    const role = f.role === "held-out" ? "held-out test (accuracy)" : "the samplers' fits";
    [f.form, role, f.answers, f.skips, f.triplets, time].forEach((v) => cell(row, v));
    body.append(row);
  }
}

/** Per sampler: participants, flagged, withdrawn, fallbacks, buffer; the refitter. */
export function arms(byName, refitter) {
  const body = $("arms").querySelector("tbody");
  body.replaceChildren();
  for (const [name, a] of Object.entries(byName)) {
    const row = document.createElement("tr");
    row.dataset.sampler = name;
    [name, a.state, a.participants, a.flagged, a.withdrawn, a.fallbacks, a.buffer]
      .forEach((v) => cell(row, v));
    body.append(row);
  }
  const r = refitter;
  const last = r.last_refit ? new Date(r.last_refit * 1000).toLocaleTimeString() : "not yet";
  const beat = r.beat_s_ago === null ? "starting" : `beat ${r.beat_s_ago} s ago`;
  $("refitter").textContent = (r.alive
    ? `Refitter running (pid ${r.pid}, ${beat}): last refit ${last}, ` +
      `${r.answers_waiting} answers since it last read them.`
    : "Refitter NOT running: the server restarts it; until then the samplers' buffers " +
      "run down and fallback queries are served.") +
    (r.error ? ` It failed${r.failures > 1 ? ` ${r.failures} times in a row` : ""}: ${r.error}` : "");
  $("refitter").className = r.alive && !r.error ? "small" : "small error";
}

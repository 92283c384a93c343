// The collect owner's dashboard's tables: the participants (who is flagged, and why) and
// the samplers' arms with the refitter's state.

import {$} from "./ui.js";

function cell(row, value, cls) {
  const td = document.createElement("td");
  td.textContent = value === null || value === undefined ? "" : String(value);
  if (cls) td.className = cls;
  row.append(td);
}

function status(p) {
  if (p.withdrawn) return "withdrawn";
  if (p.flagged) return `flagged: ${p.flags.map((f) => f.rule).join(", ")}`;
  return p.done ? "done" : "answering";
}

/** A participant's agreement with everyone else's answers ("41/50, p 0.0001"). */
function agreement(a) {
  if (!a) return "";
  if (a.p_value === null) return `${a.answers} answers, not scored yet`;
  return `${a.agreed}/${a.answers}, p ${Number(a.p_value).toPrecision(2)}`;
}

export function participants(list) {
  const body = $("participants").querySelector("tbody");
  body.replaceChildren();
  for (const p of list) {
    const row = document.createElement("tr");
    if (p.flagged) row.className = "flagged";
    row.dataset.participant = p.id;
    cell(row, p.number);
    cell(row, p.id.slice(0, 8));
    cell(row, p.sampler);
    cell(row, p.answers);
    cell(row, p.skips);
    cell(row, p.fallbacks);
    cell(row, `${p.attention[0]}/${p.attention[1]}`);
    cell(row, `${p.gold[0]}/${p.gold[1]}`);
    cell(row, `${p.clear_repeats[0]}/${p.clear_repeats[1]}` +
      (p.repeats[1] > p.clear_repeats[1] ? ` (+${p.repeats[1] - p.clear_repeats[1]} not judged)` : ""));
    cell(row, agreement(p.agreement));
    cell(row, p.response_ms_median === null ? "" : Math.round(p.response_ms_median));
    cell(row, p.server_ms_median === null ? "" : Math.round(p.server_ms_median));
    cell(row, p.platform_id);
    cell(row, status(p), "status");
    if (p.flags.length) row.lastChild.title = p.flags.map((f) => f.why).join("\n");
    body.append(row);
  }
  const flagged = list.filter((p) => p.flagged).length;
  $("flagged").textContent = `${flagged} flagged (left out of the fits, kept in the database)`;
}

/** Per sampler: participants, flagged, withdrawn, fallbacks, buffer; the refitter. */
export function arms(byName, refitter) {
  const body = $("arms").querySelector("tbody");
  body.replaceChildren();
  for (const [name, a] of Object.entries(byName)) {
    const row = document.createElement("tr");
    row.dataset.sampler = name;
    for (const v of [name, a.state, a.participants, a.flagged, a.withdrawn, a.fallbacks, a.buffer]) {
      cell(row, v);
    }
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

// The participants' table of the owner's dashboard: a participant's cells, their platform
// id (a kept duplicate marked), and a study's dashboard (its participants' table only).

import {$} from "./ui.js";

/** A cell of `row` showing `value` as text (none: empty), of class `cls`. */
export function cell(row, value, cls) {
  const td = document.createElement("td");
  td.textContent = value === null || value === undefined ? "" : String(value);
  if (cls) td.className = cls;
  row.append(td);
}

/** A participant's platform id; a kept duplicate (a second participant of one id, from
 * before one participation per id) marked. */
export function platform(row, p) {
  cell(row, p.duplicate ? `${p.platform_id} (duplicate)` : p.platform_id, "platform");
  if (p.duplicate) row.classList.add("duplicate");
}

/** A study's dashboard: its participants' table. */
export function renderStudy(d) {
  $("title").textContent = `${d.title}: dashboard`;
  $("collect-only").hidden = true;
  $("rules").textContent = "";
  const done = d.participants.filter((p) => p.outcome === "finished").length;
  const flagged = d.participants.filter((p) => p.flagged).length;
  $("summary").textContent = `${d.participants.length} participants, ${done} finished, ` +
    `${flagged} flagged; updated ${new Date().toLocaleTimeString()}`;
  const head = $("participants").querySelector("thead tr");
  const names = ["#", "participant", "enrolled", "platform id", "outcome", "code", "checks"];
  head.replaceChildren(...names
    .map((t) => Object.assign(document.createElement("th"), {textContent: t})));
  const body = $("participants").querySelector("tbody");
  body.replaceChildren();
  for (const p of d.participants) {
    const row = document.createElement("tr");
    row.dataset.participant = p.participant;
    cell(row, p.number);
    cell(row, p.participant.slice(0, 8));
    cell(row, p.enrolled);
    platform(row, p);
    cell(row, p.outcome, "outcome");
    cell(row, p.code, "code");
    cell(row, p.flagged ? p.flagged_by : "", "checks"); // (why: the cell's title)
    if (p.flagged) row.lastChild.title = p.why;
    body.append(row);
  }
  $("flagged").textContent = "";
}


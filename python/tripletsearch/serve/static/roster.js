// The participants' table of the owner's dashboard: a participant's cells, their platform
// id (a kept duplicate marked), a study's dashboard (its participants' table only), and the
// server's notices (a certificate expiring, writes failing) above either dashboard.

import {$} from "./ui.js";

/** A cell of `row` showing `value` as text (none: empty), of class `cls`. */
export function cell(row, value, cls) {
  const td = document.createElement("td");
  td.textContent = value === null || value === undefined ? "" : String(value);
  if (cls) td.className = cls;
  row.append(td);
}

/** A participant's platform id; a kept duplicate (a second participant of one id, from
 * before one participation per id) marked; a "release" button beside an id they hold. */
export function platform(row, p) {
  const mark = p.duplicate ? " (duplicate)" : p.released ? " (released)" : "";
  cell(row, p.platform_id === null ? null : `${p.platform_id}${mark}`, "platform");
  if (p.duplicate) row.classList.add("duplicate");
  if (p.platform_id !== null && !mark) releaseButton(row.lastChild, p);
}

const ADMIN = "tripletsearch.admin"; // where dashboard.js keeps the owner's token (the tab's)

/** A "release" button in `td` (a participant's platform id cell) that, confirmed, frees
 * their platform id for a fresh start (as `tripletsearch participants release`: the
 * participation kept as it is, its page no longer answering). */
function releaseButton(td, p) {
  const id = p.participant || p.id;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "release";
  button.textContent = "release";
  button.title = "Free this platform id for a fresh start (its answers are kept)";
  button.onclick = async () => {
    const ask = `Release participant ${id} (platform id ${p.platform_id})? The id's next ` +
      "visit starts afresh as a new participant; this participation is kept as it is and " +
      "its page stops working.";
    if (!window.confirm(ask)) return;
    button.disabled = true;
    const r = await fetch(`/api/admin/participants/${encodeURIComponent(id)}/release`, {
      method: "POST", body: "{}", headers: {"Content-Type": "application/json",
        Authorization: `Bearer ${sessionStorage.getItem(ADMIN)}`}});
    const body = await r.json().catch(() => ({}));
    $("release-error").textContent = r.ok ? "" : `Not released: ${body.error || r.status}`;
    if (r.ok) td.textContent = `${p.platform_id} (released)`;
    else button.disabled = false;
  };
  td.append(" ", button);
}

/** The summary's word on second sessions refused (a platform id from another visit): "second
 * sessions refused: N; ", or nothing when none were. */
export function refused(d) {
  return d.refused ? `second sessions refused: ${d.refused}; ` : "";
}

/** A study's dashboard: its participants' table. */
export function renderStudy(d) {
  $("title").textContent = `${d.title}: dashboard`;
  $("collect-only").hidden = true;
  $("rules").textContent = "";
  const done = d.participants.filter((p) => p.outcome === "finished").length;
  const flagged = d.participants.filter((p) => p.flagged).length;
  $("summary").textContent = `${d.participants.length} participants, ${done} finished, ` +
    `${flagged} flagged; ${refused(d)}updated ${new Date().toLocaleTimeString()}`;
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

// what the owner must know of the server itself (a certificate expiring, writes failing)
export function notices(list) {
  const box = $("notices");
  box.replaceChildren(...(list || []).map((text) =>
    Object.assign(document.createElement("li"), {textContent: text})));
  box.hidden = !box.children.length;
}

// One session on the page, whatever its mode: show its screens through the mode's
// renderer, send answers and undos, confirm a "this is it" (its keys: keys.js). The free search and
// the participants' page (participant.js) both use it.

import {attempt, client} from "./api.js";
import {rendererFor} from "./modes/index.js";
import {state} from "./state.js";
import {$, announce, progress, show, showHead, swatch} from "./ui.js";

/** Make `session` ({id, token, mode}) the one shown; `finished()` follows its end.
 * `send.answer(screen, choice, found, ms, picks)` and `send.undo(screen)`: how answers and
 * undos are sent (default: the sessions API; a participant's go to the participants' API;
 * `picks`: a rank's positions in order, else null); each resolves to {done, screen,
 * n_queries}. */
export function begin(session, finished, send = {}) {
  state.renderer = rendererFor(session.mode);
  state.session = session;
  state.memory = {};
  state.finished = finished;
  state.sender = send.answer || ((screen, choice, found) => client.answer(session, screen, choice, found));
  state.undoer = send.undo || ((screen) => client.undo(session, screen));
}

/** Show `screen` (the server's) with `nQueries` answers counted so far; `history`: the
 * session's answers that count, from the server (on a resume), for the renderer. */
export function showScreen(screen, nQueries, history) {
  const fresh = state.screen !== null && state.screen.number !== screen.number;
  state.screen = screen;
  state.nQueries = nQueries;
  show("search");
  closeConfirm();
  const r = state.renderer;
  for (const el of document.querySelectorAll("#search [data-part]")) {
    const given = r.parts[el.id];
    el.hidden = given === undefined;
    el.onclick = given ? () => answer(given.choice, given.found) : null;
  }
  const grid = $("grid");
  grid.replaceChildren();
  grid.className = fresh ? "grid fresh" : "grid";
  $("search").removeAttribute("style"); // (a renderer may size its screen: each starts unsized)
  const names = state.showNames;
  const ui = {grid, prompt: $("prompt"), keys: $("keys"), memory: state.memory, answer, names};
  r.render(screen, ui, {nQueries, history});
  // the item the choices are compared with: the head of a query, or a study's target
  showHead(r.head ? r.head(screen) : state.slot && state.slot.target);
  $("undo").disabled = nQueries === 0;
  progress();
  // the new screen: focus on its prompt (never on an item: Enter there would mean "this
  // is it"), and a line for screen readers
  $("prompt").focus();
  state.shownAt = performance.now(); // the person's time on it starts now
  announce(`${state.said || ""}Screen ${nQueries + 1}. ${$("prompt").textContent}`);
  state.said = "";
}

function setBusy(busy) {
  state.busy = busy;
  for (const b of document.querySelectorAll("#search button")) b.disabled = busy;
  if (!busy) {
    $("undo").disabled = state.nQueries === 0;
    if (state.renderer.refresh) state.renderer.refresh(); // (what the screen enables itself)
  }
}

async function send(call) {
  if (state.busy) return null;
  setBusy(true);
  const t0 = performance.now();
  try {
    return await attempt(call);
  } finally {
    // a mode may hold the screen a moment after a click (a double click answers once)
    const rest = (state.renderer.lockMs || 0) - (performance.now() - t0);
    if (rest > 0) await new Promise((ok) => setTimeout(ok, rest));
    setBusy(false);
  }
}

/** Answer the screen shown: position `choice` (null: none); `found` ("this is it") asks
 * for a confirmation first and is sent only with it; `picks`: a rank's positions in the
 * order picked (`choice` the first), sent with it. */
export async function answer(choice, found, picks = null) {
  if (found) return askConfirm(choice);
  return sendAnswer(choice, false, picks);
}

async function sendAnswer(choice, found, picks = null) {
  const pick = choice === null ? null : document.querySelector(`#grid .pick[data-index="${choice}"]`);
  if (pick) pick.classList.add("chosen"); // acknowledged until the next screen
  const ms = Math.round(performance.now() - state.shownAt);
  const r = await send(() => state.sender(state.screen.number, choice, found, ms, picks));
  if (!r) {
    if (pick) pick.classList.remove("chosen");
    return;
  }
  if (r.done) return state.finished();
  state.said = "Answer recorded. ";
  showScreen(r.screen, r.n_queries);
}

function askConfirm(choice) {
  const {text, item} = state.renderer.describe(state.screen, choice, state.showNames);
  $("confirm-text").textContent = text;
  swatch($("confirm-swatch"), item);
  $("confirm").hidden = false;
  $("confirm-yes").onclick = () => {
    closeConfirm();
    sendAnswer(choice, true);
  };
  $("confirm-no").onclick = () => {
    closeConfirm();
    $("prompt").focus();
  };
  $("confirm-no").focus(); // Enter again keeps searching: ending takes "Yes"
  announce(text);
}

function closeConfirm() {
  $("confirm").hidden = true;
}

/** Take back the last answer that counts. */
export async function undo() {
  if (state.nQueries === 0 || $("undo").hidden) return; // (a participant's may not undo)
  const r = await send(() => state.undoer(state.screen.number));
  if (!r) return;
  state.said = "Undone. ";
  showScreen(r.screen, r.n_queries);
}

/** Leave the session unfinished (recorded as abandoned, never as found). */
export async function leave() {
  const s = state.session;
  state.session = null;
  state.screen = null;
  if (s) await attempt(() => client.leave(s));
}

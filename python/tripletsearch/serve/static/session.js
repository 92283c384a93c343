// One session on the page, whatever its mode: show its screens through the mode's
// renderer, send answers and undos, read keys. The free search and the study both use it.

import {attempt, client} from "./api.js";
import {rendererFor} from "./modes/index.js";
import {state} from "./state.js";
import {$, progress, show} from "./ui.js";

/** Make `session` ({id, token, mode}) the one shown; `finished()` follows its end. */
export function begin(session, finished) {
  state.renderer = rendererFor(session.mode);
  state.session = session;
  state.memory = {};
  state.finished = finished;
}

/** Show `screen` (the server's) with `nQueries` answers counted so far. */
export function showScreen(screen, nQueries) {
  state.screen = screen;
  state.nQueries = nQueries;
  show("search");
  const r = state.renderer;
  for (const el of document.querySelectorAll("#search [data-part]")) {
    const given = r.parts[el.id];
    el.hidden = given === undefined;
    el.onclick = given ? () => answer(given.choice, given.found) : null;
  }
  const grid = $("grid");
  grid.replaceChildren();
  grid.className = "grid";
  r.render(screen, {grid, prompt: $("prompt"), keys: $("keys"), memory: state.memory, answer});
  $("undo").disabled = nQueries === 0;
  progress();
}

/** Focus the first item of the screen (keys then work from it). */
export function focusFirst() {
  const first = document.querySelector("#grid .pick");
  if (first) first.focus();
}

function setBusy(busy) {
  state.busy = busy;
  for (const b of document.querySelectorAll("#search button")) b.disabled = busy;
  if (!busy) $("undo").disabled = state.nQueries === 0;
}

async function send(call) {
  if (state.busy) return null;
  setBusy(true);
  try {
    return await attempt(call);
  } finally {
    setBusy(false);
  }
}

/** Answer the screen shown: position `choice` (null: none), `found` ("this is it"). */
export async function answer(choice, found) {
  const s = state.session;
  const r = await send(() => client.answer(s, state.screen.number, choice, found));
  if (!r) return;
  if (r.done) return state.finished();
  showScreen(r.screen, r.n_queries);
}

/** Take back the last answer that counts. */
export async function undo() {
  if (state.nQueries === 0) return;
  const r = await send(() => client.undo(state.session, state.screen.number));
  if (r) showScreen(r.screen, r.n_queries);
}

/** The keys on a screen: the renderer's, and U or Backspace = undo. */
export function onKey(ev) {
  if ($("search").hidden || state.busy || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  if (ev.key.toLowerCase() === "u" || ev.key === "Backspace") {
    ev.preventDefault();
    undo();
    return;
  }
  const a = state.renderer.read(ev, state.screen, document.activeElement);
  if (a) {
    ev.preventDefault();
    answer(a.choice, a.found);
  }
}

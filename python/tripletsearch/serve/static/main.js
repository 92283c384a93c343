// The page of tripletsearch serve: plain ES modules, no dependencies, no requests but to
// this server. Keys: 1-9 pick, Enter = "this is it" on the focused item (mix: accept the
// colour), 0 or N = none is closer, U or Backspace = undo (modes/ say which apply).
//
// main.js wires the page and runs the free search; participant.js runs a participants'
// page (a study's, a collect's); session.js shows one session's screens through its mode's
// renderer (modes/); api.js talks to the server and shows errors; state.js holds the state.

import {attempt, client} from "./api.js";
import {offered, rendererFor} from "./modes/index.js";
import {onKey} from "./keys.js";
import {begin, leave, showScreen, undo} from "./session.js";
import {forget, page, save, saved, state} from "./state.js";
import {initParticipant} from "./participant.js";
import {$, progress, show, showResult} from "./ui.js";

/** A mode's start card: its button and its screen sizes (a choice when it offers one). */
function offerCard(catalogue, renderer) {
  const sizes = catalogue.n_choices[renderer.name];
  const {label, note} = renderer.offer(catalogue);
  const card = document.createElement("div");
  card.className = "mode";
  card.id = `mode-${renderer.name}`;
  const go = document.createElement("button");
  go.className = "primary";
  go.id = renderer.name;
  go.textContent = label;
  card.append(go);
  let size = () => sizes.default;
  if (sizes.max > sizes.min) {
    const select = document.createElement("select");
    select.id = `n-choices-${renderer.name}`;
    for (let n = sizes.min; n <= sizes.max; n++) select.add(new Option(String(n), String(n)));
    select.value = String(sizes.default);
    const what = document.createElement("label");
    what.className = "small";
    what.append("per screen ", select);
    card.append(what);
    size = () => Number(select.value);
  } else {
    const what = document.createElement("span");
    what.className = "small";
    what.textContent = note || `${sizes.min} per screen`;
    card.append(what);
  }
  go.onclick = () => attempt(() => start(renderer.name, size()));
  return card;
}

async function start(mode, nChoices) {
  const s = await client.create(mode, nChoices);
  begin({id: s.id, token: s.token, mode, nChoices}, () => attempt(finished));
  save();
  history.pushState({search: s.id}, ""); // Back returns to the start page
  showScreen(s.screen, 0);
}

/** Leave the search shown (abandoned) and go back to the start page. */
async function toStart() {
  await leave();
  forget();
  show("start");
  state.screen = null;
  progress();
  $("modes").querySelector("button").focus();
}

/** The session kept by the last page load, shown again; false when there is none. */
async function resume() {
  const kept = saved();
  if (!kept || !kept.session) return false;
  try {
    const s = await client.session(kept.session);
    if (!s.done) {
      const session = {...kept.session, mode: s.mode, nChoices: s.n_choices};
      begin(session, () => attempt(finished));
      history.replaceState({search: s.id}, "");
      showScreen(s.screen, s.n_queries, s.history);
      return true;
    }
  } catch (e) {
    /* gone, or of a mode this page cannot show: start afresh */
  }
  forget();
  return false;
}

async function finished() {
  const s = await client.session(state.session);
  state.screen = null;
  showResult(rendererFor(s.mode).result(s));
  history.replaceState(null, "");
}

async function initSearch() {
  const catalogue = await client.catalogue(); // the metadata, no items
  $("title").textContent = catalogue.title;
  $("modes").replaceChildren(...offered(catalogue).map((r) => offerCard(catalogue, r)));
  if (!(await resume())) show("start");
}

document.addEventListener("keydown", onKey);
$("undo").onclick = () => undo();
const LEAVE = "Leave this search? It ends here, recorded as abandoned; you start afresh.";
$("change-mode").onclick = () => history.back(); // as the browser's Back: to the start page
$("start-over").onclick = async () => {
  if (!window.confirm(LEAVE)) return;
  const {mode, nChoices} = state.session;
  await leave();
  history.replaceState(null, "");
  await attempt(() => start(mode, nChoices));
};
window.addEventListener("popstate", () => {
  if (page !== "search" || !state.session || $("search").hidden) return;
  if (!window.confirm(LEAVE)) {
    history.pushState({search: state.session.id}, ""); // stay: Back again asks again
    return;
  }
  attempt(toStart);
});
$("again").onclick = () => {
  forget();
  location.reload();
};
attempt(page === "search" ? initSearch : initParticipant); // by the server's data-page

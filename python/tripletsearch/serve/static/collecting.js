// The collect page: consent, the instructions, then the participant's queries (a head and
// its candidates: pick the most similar, or skip) until the debrief. Answers go to the
// participants' API with the time the person took; a click locks the screen until the
// next query is shown (at least 300 ms), and the next query's pictures are loaded first.

import {attempt, client} from "./api.js";
import {begin, showScreen} from "./session.js";
import {forget, save, saved, state} from "./state.js";
import {$, show, showResult, stopTakingPart} from "./ui.js";

/** The collect page: resume the participant kept by the last load, or ask for consent. */
export async function initCollect() {
  const info = await client.collect();
  $("title").textContent = info.title;
  state.showNames = info.show_names !== false;
  state.maxQueries = info.max_queries;
  document.body.classList.toggle("hide-names", !state.showNames);
  for (const id of ["undo", "start-over", "change-mode"]) $(id).hidden = true;
  $("stop").hidden = false;
  $("stop").onclick = () => attempt(withdraw);
  const kept = saved();
  if (kept && kept.participant) {
    state.participant = kept.participant;
    try {
      return await showQuery(await client.collectNext(state.participant), info);
    } catch (e) {
      forget();
      state.participant = null;
    }
  }
  show("consent");
  $("consent-text").textContent = info.consent;
  $("agree").onclick = () => attempt(() => enrol(info));
  $("decline").onclick = () => {
    showResult({text: "No problem: nothing was recorded."});
    $("again").hidden = true;
  };
}

async function enrol(info) {
  const p = await client.collectEnrol();
  state.participant = {id: p.id, token: p.token};
  save();
  show("instructions");
  $("instructions-text").textContent = info.instructions;
  $("go").onclick = () =>
    attempt(async () => showQuery(await client.collectNext(state.participant), info));
  $("go").focus();
}

/** Send an answer of the screen shown; the reply in the sessions' shape for session.js. */
async function send(screen, choice, found, ms) {
  const body = choice === null ? {screen, skip: true} : {screen, choice};
  body.response_ms = Math.max(0, Math.min(ms, 3600000));
  const r = await client.collectAnswer(state.participant, body);
  state.reply = r;
  if (!r.done) await preload(r.query);
  return r.done ? {done: true} : {done: false, screen: asScreen(r.query), n_queries: screen + 1};
}

/** Load the query's pictures before it is shown (at most 2 s): no picture appears late. */
async function preload(query) {
  const urls = [query.head, ...query.candidates].map((item) => item.image).filter(Boolean);
  const loads = urls.map((url) => {
    const img = new Image();
    img.src = url;
    return img.decode().catch(() => null);
  });
  await Promise.race([Promise.all(loads), new Promise((ok) => setTimeout(ok, 2000))]);
}

function asScreen(query) {
  return {number: query.screen, head: query.head, candidates: query.candidates};
}

async function showQuery(r, info) {
  if (r.done) return debrief(r);
  await preload(r.query);
  const session = {id: state.participant.id, token: state.participant.token, mode: info.mode};
  begin(session, () => debrief(state.reply), send);
  showScreen(asScreen(r.query), r.query.screen);
  $("skip").textContent = "Skip";
}

/** Stop taking part, after a confirmation: the participant is withdrawn. */
function withdraw() {
  return stopTakingPart("Stop taking part? Your answers will not be used.", async () => {
    await client.collectWithdraw(state.participant);
    forget();
    state.participant = null;
  });
}

function debrief(r) {
  state.screen = null; // the header: no query any more
  const lines = r.completion_code ? [`Your completion code: ${r.completion_code}`] : [];
  showResult({text: r.debrief, lines});
  $("again").hidden = true;
  if (r.redirect) {
    $("redirect").hidden = false;
    $("redirect").href = r.redirect;
  }
}

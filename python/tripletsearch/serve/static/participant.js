// A participant's page, any experiment's kind: consent, instructions, their parts in turn
// (each screen by its mode's renderer, modes/), then the end screen (debrief, code, link).
// Stopping withdraws them; a reload resumes where they were.

import {attempt, client, onContinuedElsewhere} from "./api.js";
import {enrolPreview, previewing, showPreviewBanner} from "./preview.js";
import {begin, showScreen} from "./session.js";
import {forget, save, saved, state} from "./state.js";
import {$, preload, progress, show, showResult, stopTakingPart, swatch} from "./ui.js";
import {end} from "./end.js";
import {endedPart, platformLink, sayPlatform} from "./platform.js";
import {continuedElsewhere} from "./elsewhere.js";

let experiment = null; // GET /api/experiment: title, consent, limits
let link = null; // the platform parameters of the page's link (platformLink), or null

/** The participants' page: resume the participant kept by the last load, or ask consent.
 * With a platform (GET /api/experiment's `platform`), its parameters are read from the
 * link (platformLink): a kept participant of another platform id is not resumed (the
 * link's id wins: enrolling it resumes its participant on the server); a required id
 * missing is said and consent disabled; an MTurk preview shows the task, never enrols. */
export async function initParticipant() {
  if (previewing) showPreviewBanner(); // the owner's preview: said plainly, recorded nowhere
  experiment = await client.experiment();
  link = previewing ? null : platformLink(experiment.platform);
  $("title").textContent = experiment.title;
  state.showNames = experiment.show_names !== false;
  state.maxQueries = experiment.max_queries || 0;
  document.body.classList.toggle("hide-names", !state.showNames);
  for (const id of ["start-over", "change-mode"]) $(id).hidden = true;
  $("undo").hidden = !experiment.undo;
  $("stop").hidden = false;
  $("stop").onclick = () => attempt(withdraw);
  onContinuedElsewhere(() => continuedElsewhere(link, showPart));
  const kept = saved();
  const another = kept && kept.participant && link && link.id !== null &&
    kept.participant.platformId !== link.id;
  if (kept && kept.participant && !another && !(link && link.preview)) {
    state.participant = kept.participant;
    try {
      return await showPart(await client.next(state.participant));
    } catch (e) {
      forget();
      state.participant = null;
    }
  }
  if (another) forget();
  const back = await endedPart(link); // finished or withdrew: on another device, at once
  if (back) {
    state.participant = {id: back.id, token: back.token, platformId: link.id};
    save();
    return end(back.end);
  }
  show("consent");
  $("consent-text").textContent = experiment.consent;
  $("agree").onclick = () => attempt(enrol);
  $("decline").onclick = () => {
    showResult({text: "No problem: nothing was recorded."});
    $("again").hidden = true;
  };
  sayPlatform(link, experiment);
}

/** Enrol; a second session of the link's platform id (409 `refused`: the id takes part
 * from another visit) is said on a page of its own, in the server's words. */
async function enrol() {
  let p;
  try {
    p = previewing ? await enrolPreview() : await client.enrol(link && link.params);
  } catch (e) {
    if (!(e.reply && e.reply.refused)) throw e;
    showResult({text: e.message});
    $("again").hidden = true;
    $("stop").hidden = true;
    return;
  }
  state.participant = {id: p.id, token: p.token, platformId: link ? link.id : null};
  save();
  const go = async () => showPart(await client.next(state.participant));
  // one who took part already (resumed by their platform id) read the instructions: on
  // to where they were, or to their end
  if (!experiment.instructions || p.resumed) return go();
  show("instructions");
  $("instructions-text").textContent = experiment.instructions;
  $("go").onclick = () => attempt(go);
  $("go").focus();
}

/** Show a reply of the participants' API: the end, or a part (its target's page first
 * when it has one and no answer yet, else its screen). */
async function showPart(r) {
  if (r.done) return end(r);
  state.slot = {slot: r.slot, n_slots: r.n_slots, target: r.target};
  const finished = () => attempt(() => showPart(state.reply));
  begin({mode: r.mode}, finished, {answer: send, undo: takeBack});
  save();
  await preload(r.screen);
  if (!r.target || r.n_queries > 0) return showScreen(r.screen, r.n_queries, r.history);
  show("target-intro");
  state.screen = null;
  swatch($("target-big"), r.target);
  $("target-big").dataset.item = String(r.target.id);
  $("target-name").textContent = r.target.name;
  progress();
  $("begin").onclick = () => showScreen(r.screen, 0);
  $("begin").focus();
}

/** Send an answer (`picks`: a rank's positions in order, else null); what session.js shows
 * next ({done} when the part is over, or a 409 carries the end decided first elsewhere). */
async function send(screen, choice, found, ms, picks = null) {
  const body = {screen, choice, found, slot: state.slot.slot};
  if (picks) body.picks = picks;
  const most = experiment.max_response_ms;
  if (most) body.response_ms = Math.max(0, Math.min(ms, most));
  let r;
  try {
    r = await client.respond(state.participant, body);
  } catch (e) {
    if (!(e.reply && e.reply.done)) throw e;
    r = e.reply; // the part ended first elsewhere (a withdraw, a finish): that end, shown
  }
  state.reply = r;
  if (r.done || r.slot !== state.slot.slot) return {done: true};
  await preload(r.screen);
  return r;
}

function takeBack(screen) {
  return client.takeBack(state.participant, screen);
}

/** Stop taking part, after a confirmation: the participant is withdrawn, and sees the
 * withdrawn end screen (its code and link back, when the experiment gives them). One who
 * finished every part meanwhile (another tab) is refused and sees the finished end. */
function withdraw() {
  const call = async () => {
    let r;
    try {
      r = await client.withdraw(state.participant);
    } catch (e) {
      if (!(e.reply && e.reply.done)) throw e;
      r = e.reply; // finished: nothing to withdraw from
    }
    forget();
    state.participant = null;
    return r;
  };
  return stopTakingPart("Stop taking part? Your answers will not be used.", call, end);
}

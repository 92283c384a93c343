// The study's page: consent, then for each target its page and its search, then thanks
// (with the study's completion code or a link back to the crowdsourcing platform). A
// participant may stop at any time: that withdraws them.

import {attempt, client} from "./api.js";
import {state, save, saved, forget} from "./state.js";
import {begin, showScreen} from "./session.js";
import {$, progress, show, showResult, stopTakingPart, swatch} from "./ui.js";

/** The study page: resume the participant kept by the last load, or ask for consent. */
export async function initStudy() {
  const study = await client.study();
  $("title").textContent = study.title;
  state.showNames = study.show_names !== false;
  document.body.classList.toggle("hide-names", !state.showNames);
  for (const id of ["start-over", "change-mode"]) $(id).hidden = true;
  $("stop").hidden = false;
  $("stop").onclick = () => attempt(withdraw);
  const kept = saved();
  if (kept && kept.participant) {
    state.participant = kept.participant;
    try {
      await nextTarget();
      return;
    } catch (e) {
      forget();
      state.participant = null;
    }
  }
  show("consent");
  $("consent-text").textContent = study.consent;
  $("agree").onclick = () => attempt(enrol);
  $("decline").onclick = () => {
    showResult({text: "No problem: nothing was recorded."});
    $("again").hidden = true;
  };
}

async function enrol() {
  const p = await client.enrol();
  state.participant = {id: p.id, token: p.token};
  save();
  await nextTarget();
}

/** The participant's current search: its target's page when new, else its screen. */
async function nextTarget() {
  const r = await client.next(state.participant);
  state.screen = null;
  if (r.done) return thanks(r);
  state.slot = {slot: r.slot, n_slots: r.n_slots, target: r.target};
  const session = {id: r.session.id, token: state.participant.token};
  const full = await client.session(session); // its mode (for the renderer), its history
  session.mode = full.mode;
  begin(session, () => attempt(nextTarget));
  save();
  if (r.n_queries > 0) return showScreen(r.session.screen, r.n_queries, full.history);
  show("target-intro");
  swatch($("target-big"), r.target);
  $("target-big").dataset.item = String(r.target.id);
  $("target-name").textContent = r.target.name;
  progress();
  $("begin").onclick = () => showScreen(r.session.screen, 0);
  $("begin").focus();
}

/** Stop taking part, after a confirmation: the participant is withdrawn. */
function withdraw() {
  return stopTakingPart("Stop taking part? Your answers will be left out of the study.", async () => {
    await client.withdraw(state.participant);
    forget();
    state.slot = null;
    state.session = null;
  });
}

function thanks(r) {
  state.slot = null;
  const id = state.participant.id;
  const searches = r.n_slots === 1 ? "the search is" : `all ${r.n_slots} searches are`;
  const lines = [];
  if (r.completion_code) lines.push(`Your completion code: ${r.completion_code}`);
  showResult({text: `Thank you: ${searches} done. Your participant id is ${id}.`, lines});
  $("again").hidden = true;
  if (r.redirect) {
    $("redirect").hidden = false;
    $("redirect").href = r.redirect;
  }
}

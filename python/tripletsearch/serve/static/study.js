// The study's page: consent, then for each target its page and its search, then thanks.

import {attempt, client} from "./api.js";
import {state, save, saved, forget} from "./state.js";
import {begin, focusFirst, showScreen} from "./session.js";
import {$, progress, show, swatch} from "./ui.js";

/** The study page: resume the participant kept by the last load, or ask for consent. */
export async function initStudy() {
  const study = await client.study();
  $("title").textContent = study.title;
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
    show("done");
    $("result").textContent = "No problem: nothing was recorded.";
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
  if (r.done) return thanks(r.n_slots);
  state.slot = {slot: r.slot, n_slots: r.n_slots, target: r.target};
  const session = {id: r.session.id, token: state.participant.token};
  session.mode = (await client.session(session)).mode; // its renderer's
  begin(session, () => attempt(nextTarget));
  save();
  swatch($("target"), r.target); // beside every screen of this search
  $("target").title = r.target.name;
  $("target").hidden = false;
  if (r.n_queries > 0) return showScreen(r.session.screen, r.n_queries);
  show("target-intro");
  swatch($("target-big"), r.target);
  $("target-big").title = r.target.name;
  $("target-name").textContent = r.target.name;
  progress();
  $("begin").onclick = () => {
    showScreen(r.session.screen, 0);
    focusFirst();
  };
  $("begin").focus();
}

function thanks(nSlots) {
  state.slot = null;
  show("done");
  const id = state.participant.id;
  $("result").textContent = `Thank you: all ${nSlots} searches are done. Your participant id is ${id}.`;
  swatch($("result-swatch"), {});
  $("again").hidden = true;
  progress();
}

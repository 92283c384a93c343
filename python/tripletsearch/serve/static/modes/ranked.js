// A rank screen of the collect mode (modes/collect.js): the r candidates most like the
// head, picked in order. A click picks a candidate (its rank shows on its box) or takes a
// picked one back (the later ones renumber down); "Done" (#send-picks) sends them all.

import {$, announce, pickButton} from "../ui.js";
import {card} from "./cards.js";

export const MOST_KEYED = 9; // a rank's candidates have digit keys up to this many

let rank = null; // the rank screen shown: {r, picks (positions, in order), buttons}; else null

/** Whether a rank screen is shown (its picks under way). */
export function ranking() {
  return rank !== null;
}

/** No rank screen shown (the next screen is drawn). */
export function unrank() {
  rank = null;
}

/** Enable "Done" with exactly r picked (a busy moment disabled it). */
export function refreshDone() {
  if (rank) $("send-picks").disabled = rank.picks.length !== rank.r;
}

/** What a screen reader hears of candidate `i` (`item`) on a rank screen. */
function rankLabel(item, i, at) {
  const said = `${i + 1}: ${item.name || "swatch"}`;
  return at ? `${said}, picked ${at} of ${rank.r}` : `${said}, not picked`;
}

/** Draw the rank's picks: each picked box its rank (badge, class, data-rank, aria), the
 * others none; "Done" enabled with exactly r picked. */
function drawPicks() {
  rank.buttons.forEach(({pick, badge, item}, i) => {
    const at = rank.picks.indexOf(i) + 1; // 0: not picked
    pick.classList.toggle("ranked", at > 0);
    if (at) pick.dataset.rank = String(at);
    else delete pick.dataset.rank;
    badge.hidden = !at;
    badge.textContent = at ? String(at) : "";
    pick.setAttribute("aria-pressed", String(at > 0));
    pick.setAttribute("aria-label", rankLabel(item, i, at));
  });
  $("send-picks").disabled = rank.picks.length !== rank.r;
}

/** Pick candidate `i` of the rank shown, or take it back when picked. */
export function toggle(i) {
  const {picks, r} = rank;
  const at = picks.indexOf(i);
  if (at >= 0) {
    picks.splice(at, 1);
    drawPicks();
    announce(`Took back ${i + 1}. Picked ${picks.length} of ${r}.`);
  } else if (picks.length < r) {
    picks.push(i);
    drawPicks();
    announce(`Picked ${picks.length} of ${r}.${picks.length === r ? " Done sends them." : ""}`);
  } else {
    announce(`${r} are picked: take one back first, or press Done.`);
  }
}

/** Take back the last pick of the rank shown (none picked: nothing). */
export function takeBackLast() {
  if (rank.picks.length) toggle(rank.picks[rank.picks.length - 1]);
}

/** The rank's answer: its picks in order, the first as the choice; null unless r picked. */
export function ranked() {
  if (!rank || rank.picks.length !== rank.r) return null;
  return {choice: rank.picks[0], found: false, picks: [...rank.picks]};
}

/** Draw a rank screen: its candidates (a click picks or takes back), "Done", the prompt
 * and the keys; nothing picked yet. */
export function renderRank(screen, ui) {
  const k = screen.candidates.length;
  rank = {r: screen.picks, picks: [], buttons: []};
  screen.candidates.forEach((item, i) => {
    const pick = pickButton(item, i, () => toggle(i));
    if (k > MOST_KEYED) pick.querySelector(".key").remove(); // (no key picks it)
    const badge = document.createElement("span");
    badge.className = "rank";
    badge.setAttribute("aria-hidden", "true");
    pick.append(badge);
    rank.buttons.push({pick, badge, item});
    ui.grid.append(card(item, pick));
  });
  const done = $("send-picks");
  done.hidden = false;
  done.onclick = () => {
    const a = ranked();
    if (a) ui.answer(a.choice, a.found, a.picks);
  };
  drawPicks();
  const r = screen.picks;
  ui.prompt.textContent = ui.names
    ? `Pick the ${r} most like “${screen.head.name}”, most alike first.`
    : `Pick the ${r} most like the one on top, most alike first.`;
  const digits = k <= MOST_KEYED ? `1-${k} pick or take back, ` : "";
  ui.keys.textContent =
    `Keys: ${digits}Backspace takes back the last pick, Enter = Done (${r} picked), 0 = skip.`;
}

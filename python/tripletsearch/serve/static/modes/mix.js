// Mix mode: two swatches a screen and the colour mixed so far; accept it when it is yours.

import {$, colourLines, digit, pickButton} from "../ui.js";

const ACCEPT = {choice: null, found: true}; // this is my colour

export default {
  name: "mix",
  parts: {accept: ACCEPT, mixbar: null},

  offer() {
    return {label: "Mix any colour", note: "two swatches per screen; watch your colour take shape"};
  },

  render(screen, ui, {nQueries, history}) {
    ui.grid.classList.add("two");
    screen.hex.forEach((hex, i) => {
      const card = document.createElement("div");
      card.className = "card";
      card.append(pickButton({hex, name: `swatch ${i + 1}`}, i, () => ui.answer(i, false)));
      ui.grid.append(card);
    });
    ui.prompt.textContent = "Which colour is closer to the one you have in mind?";
    ui.keys.textContent = "Keys: 1 or 2 pick a swatch, Enter accepts your colour, U undoes.";
    const estimate = screen.estimate.hex;
    $("estimate").style.background = estimate;
    $("trail").replaceChildren(
      ...trail(ui.memory, screen, nQueries, history).slice(-48).map((h) => {
        const s = document.createElement("span");
        s.style.background = h;
        return s;
      }),
    );
  },

  read(ev, screen, focused) {
    const i = digit(ev, screen.hex.length);
    if (i !== null) return {choice: i, found: false};
    if (ev.key !== "Enter") return null;
    // Enter accepts, but on a focused button other than a swatch it is that button's
    const onPick = focused && focused.classList.contains("pick");
    return onPick || !(focused && focused.tagName === "BUTTON") ? ACCEPT : null;
  },

  describe(screen) {
    return {text: "Is this your colour?", item: {hex: screen.estimate.hex}};
  },

  result(session) {
    const res = session.result || {};
    const est = res.estimate;
    if (!est) return {text: "Nothing left to show."};
    const lines = colourLines(est.hex, est.lab);
    if (res.nearest) lines.push(`Nearest named colour: ${res.nearest.name} (${res.nearest.hex})`);
    return {text: `Your colour: ${est.hex}`, item: {hex: est.hex}, lines, copy: est.hex};
  },
};

/** The estimates of the screens whose answers count, then the current one's: from the
 * server's history on a resume, else kept in `memory` (an undo drops the last). */
function trail(memory, screen, nQueries, history) {
  if (history) {
    memory.counted = history
      .filter((h) => h.kind === "answer" && !h.undone && !h.found)
      .map((h) => h.shown.estimate.hex);
  }
  const counted = (memory.counted ||= []);
  if (nQueries > counted.length && memory.last) counted.push(memory.last);
  counted.length = Math.min(counted.length, nQueries);
  memory.last = screen.estimate.hex;
  const all = [...counted, memory.last];
  return all.filter((h, i) => i === 0 || all[i - 1] !== h); // unchanged estimates once
}

// Mix mode: two swatches a screen and the colour mixed so far; accept it when it is yours.

import {$, digit, pickButton} from "../ui.js";

const ACCEPT = {choice: null, found: true}; // this is my colour

export default {
  name: "mix",
  parts: {accept: ACCEPT, mixbar: null},

  offer() {
    return {label: "Mix any colour", note: "two swatches per screen; watch your colour take shape"};
  },

  render(screen, ui) {
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
    const trail = (ui.memory.trail ||= []); // the estimates so far
    if (trail[trail.length - 1] !== estimate) trail.push(estimate);
    $("trail").replaceChildren(
      ...trail.slice(-48).map((h) => {
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

  result(session) {
    const est = (session.result || {}).estimate;
    if (!est) return {text: "Nothing left to show.", item: {}};
    return {text: `Your colour: ${est.hex} (L ${est.lab.join(", ")})`, item: {hex: est.hex}};
  },
};

// Collect mode: a head item and its candidates; pick the candidate most like the head (or
// skip). Its sessions are a collect participant's (never started from the start page).

import {$, digit, pickButton} from "../ui.js";

const SKIP = {choice: null, found: false}; // no candidate is like it

export default {
  name: "collect",
  parts: {skip: SKIP},
  lockMs: 300, // the screen stays locked this long after a click: no double answers

  offer() {
    return {label: "Compare items"};
  },

  // the head: in a box of its own above the candidates, as large as theirs
  head(screen) {
    return screen.head;
  },

  render(screen, ui) {
    $("skip").textContent = "Skip";
    screen.candidates.forEach((item, i) => {
      const card = document.createElement("div");
      card.className = "card";
      const label = document.createElement("span");
      label.className = "name";
      label.textContent = item.name;
      card.append(pickButton(item, i, () => ui.answer(i, false)), label);
      ui.grid.append(card);
    });
    ui.prompt.textContent = ui.names
      ? `Which is most like “${screen.head.name}”?`
      : "Which is most like the one on top?";
    ui.keys.textContent = `Keys: 1-${screen.candidates.length} pick, 0 = skip.`;
  },

  read(ev, screen) {
    const i = digit(ev, screen.candidates.length);
    if (i !== null) return {choice: i, found: false};
    if (ev.key === "0") return SKIP;
    return null;
  },

  describe(screen, choice) {
    return {text: "", item: screen.candidates[choice]};
  },

  result(session) {
    return {text: (session.result && session.result.debrief) || "Thank you."};
  },
};

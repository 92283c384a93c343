// Find mode: a screen of catalogue items; pick the closest, say "this is it", or skip.
// With best guesses, a strip under the screen: a click on one asks "this is it" (its
// position follows the screen's: k, k + 1, ...).

import {$, colourLines, digit, pickButton, plural} from "../ui.js";
import {card} from "./cards.js";

const SKIP = {choice: null, found: false}; // none is closer

/** The strip of guesses under the screen (none: hidden), drawn as the screen's items. */
function strip(screen, ui) {
  const guesses = screen.guesses || [];
  $("strip").hidden = guesses.length === 0;
  $("strip-grid").replaceChildren(
    ...guesses.map((item, j) => {
      const at = screen.items.length + j;
      return card(item, pickButton(item, at, () => ui.answer(at, true), true));
    }),
  );
  return guesses.length;
}

export default {
  name: "find",
  parts: {skip: SKIP, strip: null},

  offer(catalogue) {
    // a catalogue that can mix colours is one of named colours
    return {label: catalogue.modes.includes("mix") ? "Find a named colour" : "Find an item"};
  },

  render(screen, ui) {
    screen.items.forEach((item, i) => {
      const found = document.createElement("button");
      found.className = "found";
      found.textContent = "This is it";
      found.setAttribute("aria-label", `${ui.names ? item.name : `item ${i + 1}`}: this is it`);
      found.addEventListener("click", () => ui.answer(i, true));
      const c = card(item, pickButton(item, i, () => ui.answer(i, false)));
      c.append(found);
      ui.grid.append(c);
    });
    const guesses = strip(screen, ui);
    ui.prompt.textContent = "Pick what is closest to what you are looking for.";
    ui.keys.textContent =
      `Keys: 1-${screen.items.length} pick, Enter on a focused item = this is it (asked first), ` +
      `${guesses ? "a click on a guess = this is it (asked first), " : ""}0 = none is closer, U undoes.`;
  },

  read(ev, screen, focused) {
    const i = digit(ev, screen.items.length);
    if (i !== null) return {choice: i, found: false};
    if (ev.key === "Enter" && focused && focused.classList.contains("pick")) {
      return {choice: Number(focused.dataset.index), found: true};
    }
    if (ev.key === "0" || ev.key.toLowerCase() === "n") return SKIP;
    return null;
  },

  describe(screen, choice, names) {
    const item = [...screen.items, ...(screen.guesses || [])][choice];
    const text = names ? `Is “${item.name}” what you are looking for?` : "Is this what you are looking for?";
    return {text, item};
  },

  result(session) {
    const res = session.result || {};
    if (!res.name) return {text: `Nothing left to show after ${plural(session.n_queries, "screen")}.`};
    // the item found: its record
    const item = res.item || {};
    return {
      text: `Found: ${res.name} after ${plural(session.n_queries, "screen")}.`,
      item,
      lines: item.hex ? colourLines(item.hex, res.lab) : [],
      copy: item.hex || null,
    };
  },
};

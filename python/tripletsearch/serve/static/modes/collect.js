// Collect mode: a collect participant's screens (never started from the start page). A
// screen asks one of three things of its candidates:
//
//   one pick       (the payload's `picks` absent or 1): the candidate most like the head;
//                  a click answers
//   a rank         (`picks` r > 1): the r candidates most like the head, most alike
//                  first; a click picks a candidate (its rank shows on its box) or takes a
//                  picked one back (the later ones renumber down), and "Done" sends them
//                  all: {choice: the first, picks: [positions in the order picked]}
//   an odd-one-out (`trial` "odd-one-out", no head, three candidates): the one unlike the
//                  other two; a click answers
//
// Skip answers none (choice null, no picks). A rank, an odd-one-out and a screen of more
// than four candidates are sized to the screen (the grid's class "sized", see app.css): the
// head, every candidate, the prompt and the buttons fit without scrolling.

import {$, digit, pickButton} from "../ui.js";
import {card} from "./cards.js";
import {
  MOST_KEYED, ranked, ranking, refreshDone, renderRank, takeBackLast, toggle, unrank,
} from "./ranked.js";

const SKIP = {choice: null, found: false}; // no candidate is like it
const ODD = "odd-one-out";

/** The kind of `screen`: "rank", "odd" or "one". */
function kindOf(screen) {
  if (screen.trial === ODD) return "odd";
  return screen.picks > 1 ? "rank" : "one";
}

/** How a sized screen lays out `n` candidates: columns and rows on a wide screen (one row
 * of up to four, else two rows) and on a phone (up to three a row, two rows of two for
 * four, four a row from ten on: sixteen take four rows there, and may scroll). */
function arrangement(n) {
  const wide = n <= 4 ? n : Math.ceil(n / 2);
  const narrow = n <= 3 ? n : n === 4 ? 2 : n <= 9 ? 3 : 4;
  return {
    "--wide-cols": wide,
    "--wide-rows": Math.ceil(n / wide),
    "--narrow-cols": narrow,
    "--narrow-rows": Math.ceil(n / narrow),
  };
}

export default {
  name: "collect",
  parts: {skip: SKIP, "send-picks": null},
  lockMs: 300, // the screen stays locked this long after an answer: no double answers

  offer() {
    return {label: "Compare items"};
  },

  // the head: in a box of its own above the candidates, as large as theirs (an
  // odd-one-out has none: hidden)
  head(screen) {
    return screen.head;
  },

  render(screen, ui) {
    const kind = kindOf(screen);
    const k = screen.candidates.length;
    unrank();
    $("skip").textContent = "Skip";
    $("send-picks").hidden = true;
    if (kind !== "one" || k > 4) {
      ui.grid.classList.add("sized");
      for (const [name, value] of Object.entries(arrangement(k))) {
        $("search").style.setProperty(name, String(value));
      }
    }
    if (kind === "rank") return renderRank(screen, ui);
    screen.candidates.forEach((item, i) => {
      const pick = pickButton(item, i, () => ui.answer(i, false));
      if (kind === "odd") {
        pick.setAttribute("aria-label", `${i + 1}: ${item.name} is the odd one out`);
      }
      ui.grid.append(card(item, pick));
    });
    if (kind === "odd") {
      ui.prompt.textContent = "Which one is the odd one out?";
      ui.keys.textContent = `Keys: 1-${k} pick the odd one out, 0 = skip.`;
      return;
    }
    ui.prompt.textContent = ui.names
      ? `Which is most like “${screen.head.name}”?`
      : "Which is most like the one on top?";
    ui.keys.textContent = `Keys: 1-${k} pick, 0 = skip.`;
  },

  // a rank's keys that pick rather than answer: digits toggle a candidate (up to nine
  // candidates), Backspace takes back the last pick (never an undo on a rank screen)
  press(ev, screen) {
    if (!ranking() || kindOf(screen) !== "rank") return false;
    if (ev.key === "Backspace") {
      takeBackLast();
      return true;
    }
    const i = screen.candidates.length <= MOST_KEYED ? digit(ev, screen.candidates.length) : null;
    if (i === null) return false;
    toggle(i);
    return true;
  },

  read(ev, screen, focused) {
    if (ev.key === "0") return SKIP;
    if (kindOf(screen) === "rank") {
      // Enter sends r picks, but on a focused button other than a candidate or Done it is
      // that button's (Skip, Stop)
      if (ev.key !== "Enter") return null;
      const other = focused && focused.tagName === "BUTTON" && !focused.classList.contains("pick");
      return other && focused.id !== "send-picks" ? null : ranked();
    }
    const i = digit(ev, screen.candidates.length);
    return i === null ? null : {choice: i, found: false};
  },

  // what a busy moment left disabled that the screen enables: a rank's Done
  refresh() {
    refreshDone();
  },

  describe(screen, choice) {
    return {text: "", item: screen.candidates[choice]};
  },

  result(session) {
    return {text: (session.result && session.result.debrief) || "Thank you."};
  },
};

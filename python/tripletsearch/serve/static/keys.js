// The keys on a session's screen: the renderer's own first, then undo, then its answers.

import {answer, undo} from "./session.js";
import {state} from "./state.js";
import {$} from "./ui.js";

/** The keys on a screen: the renderer's, and U or Backspace = undo (but where the
 * renderer takes the key itself: a rank's Backspace takes back a pick). */
export function onKey(ev) {
  if ($("search").hidden || state.busy || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  if (!$("confirm").hidden) return; // the confirmation's buttons take the keys
  const r = state.renderer;
  if (r.press && r.press(ev, state.screen, document.activeElement)) {
    ev.preventDefault();
    return;
  }
  if (ev.key.toLowerCase() === "u" || ev.key === "Backspace") {
    ev.preventDefault();
    undo();
    return;
  }
  const a = r.read(ev, state.screen, document.activeElement);
  if (a) {
    ev.preventDefault();
    answer(a.choice, a.found, a.picks || null);
  }
}

// The mode renderers, keyed by the mode names the server lists (GET /api/catalogue's
// "modes", a session's "mode"). A renderer is how the page shows one mode's sessions; every
// renderer has the same shape:
//
//   name                      the server's name of the mode
//   parts                     {id: answer | null}: the search section's optional parts
//                             ([data-part] in index.html) it shows; a part with an answer
//                             ({choice, found}) sends it when clicked
//   offer(catalogue)          {label, note?}: its start button's label and a line beside it
//   render(screen, ui)        draw a screen of the server's into ui.grid, ui.prompt and
//                             ui.keys; a click calls ui.answer(choice, found) (a rank's
//                             Done: ui.answer(choice, found, picks)); ui.memory lives as
//                             long as the session (on this page load)
//   read(ev, screen, focused) the answer {choice, found} (a rank's also picks) a key gives
//                             on this screen, or null
//   press(ev, screen, focused) optional: true when the key acts on the screen itself
//                             without answering (a rank's picks); asked before the
//                             page's own keys (Backspace = undo) and before read
//   refresh()                 optional: enable again what the screen itself enables (a
//                             rank's Done) once a request's busy moment is over
//   result(session)           {text, item}: a finished session (GET /api/sessions/{id})
//
// Adding a mode to the page: a module in this folder and a line below; nothing else
// branches on a mode's name.

import collect from "./collect.js";
import find from "./find.js";
import mix from "./mix.js";

const RENDERERS = new Map([find, mix, collect].map((r) => [r.name, r]));

/** The renderer of `mode`; throws for a mode this page cannot show. */
export function rendererFor(mode) {
  const r = RENDERERS.get(mode);
  if (!r) throw new Error(`this page cannot show a "${mode}" session`);
  return r;
}

/** The renderers of the modes the server offers (in its order) that this page can show. */
export function offered(catalogue) {
  return catalogue.modes.filter((m) => RENDERERS.has(m)).map((m) => RENDERERS.get(m));
}

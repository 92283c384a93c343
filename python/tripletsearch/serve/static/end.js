// The end of a participant's part, whatever its outcome (finished, withdrawn): the
// debrief, the completion code (as text) and the link back to the platform.

import {state} from "./state.js";
import {$, showResult} from "./ui.js";

/** The end screen of an outcome (finished, withdrawn): the debrief, the completion code
 * (as text) and the link back, each when the reply has it. */
export function end(r) {
  state.screen = null; // the header: no screen, part or answers any more
  state.slot = null;
  const lines = r.completion_code ? [`Your completion code: ${r.completion_code}`] : [];
  showResult({text: r.debrief, lines});
  $("done").dataset.outcome = r.outcome || "";
  $("again").hidden = true;
  $("redirect").hidden = !r.redirect;
  if (r.redirect) $("redirect").href = r.redirect;
  else $("redirect").removeAttribute("href");
}

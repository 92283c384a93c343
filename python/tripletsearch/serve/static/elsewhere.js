// A participant's part that continued in another window: the same link opened in another
// window or browser resumed them there (this window's token was replaced, its requests
// refused with a 401 that says `continued_elsewhere`).

import {attempt, client} from "./api.js";
import {previewing} from "./preview.js";
import {forget, save, state} from "./state.js";
import {$, progress, show} from "./ui.js";

/** Say so in plain words, this window's screen gone (nothing left to click), and offer to
 * go on here: the link enrols again (the server resumes the same participant, on the same
 * visit: the link's own values), the other window then stops; without a platform link,
 * the page starts afresh. `link`: the page's platform link; `showPart`: the page's. */
export function continuedElsewhere(link, showPart) {
  state.screen = null;
  state.slot = null;
  show("elsewhere");
  progress(); // (no screen here any more)
  $("elsewhere-here").onclick = () => attempt(() => continueHere(link, showPart));
  $("elsewhere-here").focus();
}

async function continueHere(link, showPart) {
  if (!link || !link.params || previewing) {
    forget();
    location.reload();
    return;
  }
  const p = await client.enrol(link.params);
  state.participant = {id: p.id, token: p.token, platformId: link.id};
  save();
  return showPart(await client.next(state.participant));
}

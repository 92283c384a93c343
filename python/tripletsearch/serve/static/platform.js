// A crowd platform's link (GET /api/experiment's `platform`): the parameters the page
// reads from it and sends at enrolment, and what the consent page says about it (an MTurk
// preview, a required id missing).

import {client} from "./api.js";
import {$} from "./ui.js";

/** The server's {id, token, end} for the participant of `link`'s platform id and visit
 * whose part ended (finished, withdrew), back on another device; null for anyone else
 * (a 404, nothing recorded: consent, as before) and without a platform id. */
export async function endedPart(link) {
  if (!link || link.id === null || link.preview) return null;
  return client.resume(link.params).catch(() => null);
}

/** The link's parameters of the experiment's `platform` ({name, id, params, required,
 * preview}; null: none): {params: {name: value} of the platform's parameters present,
 * id: the platform id (or null), preview: whether the link is a preview (MTurk's
 * assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE)}, or null without a platform. */
export function platformLink(platform, search = location.search) {
  if (!platform) return null;
  const query = new URLSearchParams(search);
  const params = {};
  for (const name of platform.params) {
    const value = query.get(name);
    if (value !== null && value !== "") params[name] = value;
  }
  const id = Object.hasOwn(params, platform.id) ? params[platform.id] : null;
  const p = platform.preview;
  const preview = !!p && params[p.param] === p.value;
  return {params, id, preview, platform};
}

/** The consent page's word on `link` (platformLink's) of `experiment`: a preview (agree disabled: "Accept the HIT to
 * begin", the instructions shown), or a required id missing (a sentence, agree disabled).
 * Text only (textContent): the link's values are never read as HTML. */
export function sayPlatform(link, experiment) {
  if (!link) return;
  let note = $("platform-note");
  if (!note) {
    note = document.createElement("p");
    note.id = "platform-note";
    note.setAttribute("role", "alert");
    $("consent-text").after(note);
  }
  note.textContent = "";
  const agree = $("agree");
  if (link.preview) {
    agree.disabled = true;
    agree.textContent = "Accept the HIT to begin";
    note.textContent = "This is a preview of the task: accept the HIT to take part." +
      (experiment.instructions ? " " + experiment.instructions : "");
  } else if (link.platform.required && link.id === null) {
    agree.disabled = true;
    note.textContent = `This link has no ${link.platform.id}: open the study from your ` +
      `${link.platform.name} account's link (it carries your id) to take part.`;
  }
}

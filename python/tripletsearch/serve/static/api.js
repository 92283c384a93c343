// The client of the server's JSON API (every URL the page uses is here) and the page's one
// error display. Replies are JSON; a reply that is not 2xx throws its "error" message.

import {$} from "./ui.js";

async function request(path, body, token) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers["Authorization"] = "Bearer " + token;
  const r = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = {};
  try {
    data = await r.json();
  } catch (e) {
    /* not JSON: the status text says it */
  }
  if (!r.ok) {
    const e = new Error(data.error || r.statusText);
    e.reply = data; // the refusal's other keys (a refused withdrawal: the end screen)
    throw e;
  }
  return data;
}

const at = (id) => encodeURIComponent(id);

export const client = {
  /** The catalogue's metadata, no items: title, modes, screen sizes per mode. */
  catalogue: () => request("/api/catalogue?limit=0"),
  /** Start a session: the first screen, its id and token. */
  create: (mode, nChoices) => request("/api/sessions", {mode, n_choices: nChoices}),
  /** A session: done, n_queries, the current screen, the result. */
  session: (s) => request(`/api/sessions/${at(s.id)}`, undefined, s.token),
  answer: (s, screen, choice, found) =>
    request(`/api/sessions/${at(s.id)}/answer`, {screen, choice, found}, s.token),
  undo: (s, screen) => request(`/api/sessions/${at(s.id)}/undo`, {screen}, s.token),
  /** Leave a session unfinished: recorded as abandoned. */
  leave: (s) => request(`/api/sessions/${at(s.id)}/leave`, {}, s.token),
  /** The experiment of a participants' page: its kind, title, consent, limits. */
  experiment: () => request("/api/experiment"),
  /** Enrol (consent given) with the platform parameters of the link ({name: value}; none:
   * null): {id, token}, and resumed: true when the platform id had taken part already. */
  enrol: (platform) =>
    request(
      "/api/participants",
      platform && Object.keys(platform).length ? {consent: true, platform} : {consent: true},
    ),
  /** The participant of the link's platform id and visit whose part ended, without
   * consent again: {id, token, resumed, end}; a 404 for anyone else. */
  resume: (platform) => request("/api/participants/resume", {platform}),
  /** The owner's preview participant (the admin token): {id, token, preview}. */
  enrolPreview: (adminToken) => request("/api/preview/participants", {}, adminToken),
  /** A participant's current screen (their next part started when new), or the end. */
  next: (p) => request(`/api/participants/${at(p.id)}/next`, {}, p.token),
  /** Their answer ({screen, choice, found, slot, response_ms}; a rank's also picks: its
   * positions in the order picked, choice the first): what follows. */
  respond: (p, body) => request(`/api/participants/${at(p.id)}/answer`, body, p.token),
  takeBack: (p, screen) => request(`/api/participants/${at(p.id)}/undo`, {screen}, p.token),
  /** Stop taking part: the participant's answers are left out of what is computed. */
  withdraw: (p) => request(`/api/participants/${at(p.id)}/withdraw`, {}, p.token),
};

let elsewhere = null; // the page's handler of a part that continued in another window

/** Call `handler(e)` instead of showing the error of a request refused because the
 * participant's part continued in another window (a 401 with `continued_elsewhere`). */
export function onContinuedElsewhere(handler) {
  elsewhere = handler;
}

/** The error display: the message under the page, read out by screen readers. */
export function showError(e) {
  if (elsewhere && e && e.reply && e.reply.continued_elsewhere) return elsewhere(e);
  $("status").textContent = "Error: " + (e && e.message ? e.message : String(e));
}

/** Run `step` (async); an error goes to the error display. Its result, or null. */
export async function attempt(step) {
  try {
    return await step();
  } catch (e) {
    showError(e);
    return null;
  }
}

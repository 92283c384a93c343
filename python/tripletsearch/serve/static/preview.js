// The owner's preview (/preview): the participant's pages as they are, under a banner that
// says plainly it is a preview. The preview participant is enrolled with the admin token
// (POST /api/preview/participants), typed into the banner's field or given in the link's
// fragment (/preview#token=...: a browser never sends a fragment, so the token is in no
// log); the token is never stored, and the fragment is removed from the address bar.
// Then the preview runs through the participants' own routes, recording nothing that counts.

import {client} from "./api.js";
import {forget, page} from "./state.js";

/** Whether this page is the owner's preview (the server's data-page). */
export const previewing = page === "preview";

/** The admin token of the link's fragment (#token=...), taken off the address bar. */
function tokenFromLink() {
  const found = new URLSearchParams(location.hash.replace(/^#/, "")).get("token");
  if (location.hash) history.replaceState(history.state, "", location.pathname + location.search);
  return found || "";
}

/** The banner: what this page is, the admin token's field, a fresh start. */
export function showPreviewBanner() {
  const banner = document.createElement("div"); // not a section: show() hides those
  banner.id = "preview-banner";
  banner.className = "preview-banner";
  banner.setAttribute("role", "note");
  const what = document.createElement("p");
  const strong = document.createElement("strong");
  strong.textContent = "Preview";
  what.append(
    strong,
    ": the participant's pages as they see them. Nothing here is recorded as a " +
      "participant: no count, fit, export or report includes it.",
  );
  const label = document.createElement("label");
  label.className = "small";
  const field = document.createElement("input");
  field.id = "preview-token";
  field.type = "password";
  field.autocomplete = "off";
  field.value = tokenFromLink();
  label.append("Admin token ", field);
  const again = document.createElement("button");
  again.id = "preview-again";
  again.type = "button";
  again.textContent = "Start a new preview";
  again.onclick = () => {
    forget();
    location.reload();
  };
  const row = document.createElement("p");
  row.className = "actions";
  row.append(label, again);
  banner.append(what, row);
  document.querySelector("main").prepend(banner);
}

/** Enrol a preview participant with the admin token of the banner: {id, token}. */
export async function enrolPreview() {
  const token = document.getElementById("preview-token").value.trim();
  if (!token) throw new Error("enter the admin token in the preview's banner first");
  return client.enrolPreview(token);
}

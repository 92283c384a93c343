// The page's shared pieces: sections, swatches, the progress line, a pick button.

import {state} from "./state.js";

export const $ = (id) => document.getElementById(id);

/** Show the section `id` of the page (and no other); clear the error display. */
export function show(id) {
  for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== id;
  $("status").textContent = "";
}

/** Draw an item into `el`: its picture, or its colour. */
export function swatch(el, item) {
  el.replaceChildren();
  el.style.background = "";
  if (item.image) {
    const img = document.createElement("img");
    img.src = item.image;
    img.alt = item.name || "";
    el.append(img);
  } else if (item.hex) {
    el.style.background = item.hex;
  }
}

/** The progress line: the study's target, the screen, the answers that count. */
export function progress() {
  const parts = [];
  if (state.slot) parts.push(`Target ${state.slot.slot + 1} of ${state.slot.n_slots}`);
  if (state.screen) parts.push(`screen ${state.screen.number + 1}`, `${state.nQueries} answered`);
  $("progress").textContent = parts.join(" · ");
}

/** The button that picks position `i` (key i + 1) showing `item`; a click calls `onPick`. */
export function pickButton(item, i, onPick) {
  const pick = document.createElement("button");
  pick.className = "pick";
  pick.dataset.index = String(i);
  pick.setAttribute("aria-label", `${i + 1}: ${item.name || "swatch"} is closest`);
  swatch(pick, item);
  const key = document.createElement("span");
  key.className = "key";
  key.textContent = String(i + 1);
  pick.append(key);
  pick.addEventListener("click", onPick);
  return pick;
}

/** The position a digit key picks on a screen of `n` (1-9: 0..n-1), else null. */
export function digit(ev, n) {
  return /^[1-9]$/.test(ev.key) && Number(ev.key) <= n ? Number(ev.key) - 1 : null;
}

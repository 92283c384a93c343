// The page's shared pieces: sections, swatches, the progress line, a pick button.

import {state} from "./state.js";

export const $ = (id) => document.getElementById(id);

/** Show the section `id` of the page (and no other); clear the error display. */
export function show(id) {
  for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== id;
  $("status").textContent = "";
}

/** Say `text` to screen readers (a polite live region). */
export function announce(text) {
  $("announce").textContent = text;
}

/** `n` and the noun, in the singular for one: plural(1, "screen") = "1 screen". */
export function plural(n, noun) {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** A colour's lines for an end screen: hex, RGB and, given `lab`, labelled CIELAB. */
export function colourLines(hex, lab) {
  const rgb = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  const lines = [`Hex ${hex}`, `RGB ${rgb.join(", ")}`];
  if (lab) {
    const [L, a, b] = lab.map((v) => v.toFixed(1));
    lines.push(`CIELAB: L* ${L}, a* ${a}, b* ${b}`);
  }
  return lines;
}

/** Draw an item into `el`: its picture, or its colour. */
export function swatch(el, item) {
  el.replaceChildren();
  el.style.background = "";
  if (item && item.image) {
    const img = document.createElement("img");
    img.src = item.image;
    img.alt = item.name || "a picture"; // (pictures only: no name sent)
    el.append(img);
  } else if (item && item.hex) {
    el.style.background = item.hex;
  }
}

/** The head of a query or a study's target above the choices (none: hidden), in a box
 * of its own as large as theirs. */
export function showHead(item) {
  $("head").hidden = !item;
  swatch($("head-box"), item || null);
  $("head-name").textContent = item ? item.name : "";
}

/** The progress line: a participant's target, the screen, the answers that count. */
export function progress() {
  const parts = [];
  if (state.slot && state.slot.target) parts.push(`Target ${state.slot.slot + 1} of ${state.slot.n_slots}`);
  if (state.screen && state.maxQueries) {
    // a participant's queries: this one's place among them (a skip is an answer too)
    parts.push(`query ${state.screen.number + 1} of ${state.maxQueries}`);
  } else if (state.screen) {
    // the screen's place in the search: one past the answers that count (undos step back)
    parts.push(`screen ${state.nQueries + 1}`, `${state.nQueries} answered`);
  }
  $("progress").textContent = parts.join(" · ");
}

/** The button that picks position `i` (key i + 1) showing `item`; a click calls `onPick`.
 * A guess (`guess` true: the strip's) has no key and asks "this is it" when clicked. */
export function pickButton(item, i, onPick, guess = false) {
  const pick = document.createElement("button");
  pick.className = guess ? "pick guess" : "pick";
  pick.dataset.index = String(i);
  const name = item.name || "swatch";
  pick.setAttribute("aria-label", guess ? `${name}: is this it?` : `${i + 1}: ${name} is closest`);
  swatch(pick, item);
  if (!guess) {
    const key = document.createElement("span");
    key.className = "key";
    key.textContent = String(i + 1);
    pick.append(key);
  }
  pick.addEventListener("click", onPick);
  return pick;
}

/** The position a digit key picks on a screen of `n` (1-9: 0..n-1), else null. */
export function digit(ev, n) {
  return /^[1-9]$/.test(ev.key) && Number(ev.key) <= n ? Number(ev.key) - 1 : null;
}

/** The end screen: `text`, the item's swatch or picture (none: no box), its lines (hex,
 * RGB, ...) and a copy button for `copy`. */
export function showResult({text, item, lines, copy}) {
  show("done");
  progress();
  $("result").textContent = text;
  $("result-swatch").hidden = !(item && (item.hex || item.image));
  swatch($("result-swatch"), item);
  $("result-lines").replaceChildren(
    ...(lines || []).map((line) => {
      const li = document.createElement("li");
      li.textContent = line;
      return li;
    }),
  );
  $("copy").hidden = !copy;
  $("copy").textContent = "Copy the hex code";
  $("copy").onclick = async () => {
    await navigator.clipboard.writeText(copy);
    $("copy").textContent = `Copied ${copy}`;
    announce(`${copy} copied`);
  };
  $("result").focus();
}

/** Stop taking part after a confirmation (`question`): `call` withdraws on the server and
 * clears what the page kept; `ending`, given, shows the end screen of its reply (else a
 * plain one). False when the person did not confirm. */
export async function stopTakingPart(question, call, ending = null) {
  if (!window.confirm(question)) return false;
  const reply = await call();
  // nothing is under way any more: the header counts no screen, target or answers
  Object.assign(state, {screen: null, slot: null, session: null, nQueries: 0, maxQueries: 0});
  if (ending && reply && reply.done) {
    ending(reply);
    return true;
  }
  showResult({text: "You have stopped taking part: your answers will not be used. Thank you."});
  $("again").hidden = true;
  return true;
}

/** Load a screen's pictures before it is shown (at most 2 s): no picture appears late. */
export async function preload(screen) {
  const items = Object.values(screen || {}).flatMap((v) => (Array.isArray(v) ? v : [v]));
  const urls = items.map((item) => item && item.image).filter(Boolean);
  if (!urls.length) return;
  const loads = urls.map((url) => {
    const img = new Image();
    img.src = url;
    return img.decode().catch(() => null);
  });
  await Promise.race([Promise.all(loads), new Promise((ok) => setTimeout(ok, 2000))]);
}

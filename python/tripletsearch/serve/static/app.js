// The search page and the study page of tripletsearch serve: plain JavaScript, no
// dependencies, no requests but to this server. Keys: 1-9 pick, Enter = "this is it" on
// the focused item (mix: accept the colour), 0 or N = none is closer, U or Backspace = undo.
"use strict";

const $ = (id) => document.getElementById(id);
const page = document.body.dataset.page;            // "search" or "study"
const STORE = page === "study" ? "ts-study" : "ts-search";
const state = {
  session: null,     // {id, token, mode}
  screen: null,      // the screen shown
  nQueries: 0,       // answers that count
  busy: false,
  participant: null, // study: {id, token}
  slot: null,        // study: {slot, n_slots, target}
  trail: [],         // mix: the estimates so far
};

function show(id) {
  for (const s of ["consent", "start", "target-intro", "search", "done"]) $(s).hidden = s !== id;
  $("status").textContent = "";
}

async function api(path, body, token) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers["Authorization"] = "Bearer " + token;
  const r = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = {};
  try { data = await r.json(); } catch (e) { /* not JSON */ }
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

function save() {
  localStorage.setItem(STORE, JSON.stringify({session: state.session, participant: state.participant}));
}

function swatch(el, item) {
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

function progress() {
  const parts = [];
  if (state.slot) parts.push(`Target ${state.slot.slot + 1} of ${state.slot.n_slots}`);
  if (state.screen) parts.push(`screen ${state.screen.number + 1}`, `${state.nQueries} answered`);
  $("progress").textContent = parts.join(" · ");
}

function render(screen, nQueries) {
  state.screen = screen;
  state.nQueries = nQueries;
  const mix = state.session.mode === "mix";
  show("search");
  const grid = $("grid");
  grid.replaceChildren();
  grid.classList.toggle("two", mix);
  const items = mix ? screen.hex.map((h, i) => ({hex: h, name: `swatch ${i + 1}`})) : screen.items;
  items.forEach((item, i) => {
    const card = document.createElement("div");
    card.className = "card";
    const pick = document.createElement("button");
    pick.className = "pick";
    pick.dataset.index = String(i);
    pick.setAttribute("aria-label", `${i + 1}: ${item.name || "swatch"} is closest`);
    swatch(pick, item);
    const key = document.createElement("span");
    key.className = "key";
    key.textContent = String(i + 1);
    pick.append(key);
    pick.addEventListener("click", () => answer(i, false));
    card.append(pick);
    if (!mix) {
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = item.name;
      const found = document.createElement("button");
      found.className = "found";
      found.textContent = "This is it";
      found.setAttribute("aria-label", `${item.name}: this is it`);
      found.addEventListener("click", () => answer(i, true));
      card.append(name, found);
    }
    grid.append(card);
  });
  $("prompt").textContent = mix
    ? "Which colour is closer to the one you have in mind?"
    : "Pick what is closest to what you are looking for.";
  $("skip").hidden = mix;
  $("accept").hidden = !mix;
  $("mixbar").hidden = !mix;
  $("undo").disabled = nQueries === 0;
  if (mix) {
    $("estimate").style.background = screen.estimate.hex;
    const last = state.trail[state.trail.length - 1];
    if (last !== screen.estimate.hex) state.trail.push(screen.estimate.hex);
    $("trail").replaceChildren(...state.trail.slice(-48).map((h) => {
      const s = document.createElement("span");
      s.style.background = h;
      return s;
    }));
  }
  $("keys").textContent = mix
    ? "Keys: 1 or 2 pick a swatch, Enter accepts your colour, U undoes."
    : `Keys: 1-${items.length} pick, Enter on a focused item = this is it, 0 = none is closer, U undoes.`;
  if (state.slot) {
    $("target").hidden = false;
    swatch($("target"), state.slot.target);
    $("target").title = state.slot.target.name;
  } else {
    $("target").hidden = true;
  }
  progress();
}

function setBusy(busy) {
  state.busy = busy;
  for (const b of document.querySelectorAll("#search button")) b.disabled = busy;
  if (!busy) $("undo").disabled = state.nQueries === 0;
}

async function send(path, body) {
  if (state.busy) return null;
  setBusy(true);
  try {
    return await api(`/api/sessions/${state.session.id}/${path}`, body, state.session.token);
  } catch (e) {
    $("status").textContent = "Error: " + e.message;
    return null;
  } finally {
    setBusy(false);
  }
}

async function answer(choice, found) {
  if (page === "study" && found && state.screen.items[choice].id !== state.slot.target.id) {
    $("status").textContent = "That is not the one you are looking for: keep going.";
    return;
  }
  const r = await send("answer", {screen: state.screen.number, choice, found});
  if (!r) return;
  if (r.done) return finished();
  render(r.screen, r.n_queries);
}

async function undo() {
  if (state.nQueries === 0) return;
  const r = await send("undo", {screen: state.screen.number});
  if (r) render(r.screen, r.n_queries);
}

async function finished() {
  if (page === "study") return nextTarget();
  const s = await api(`/api/sessions/${state.session.id}`, undefined, state.session.token);
  show("done");
  state.screen = null;
  progress();
  const res = s.result || {};
  if (res.estimate) {
    $("result").textContent = `Your colour: ${res.estimate.hex} (L ${res.estimate.lab.join(", ")})`;
    swatch($("result-swatch"), {hex: res.estimate.hex});
  } else if (res.name) {
    $("result").textContent = `Found: ${res.name} after ${s.n_queries} screens.`;
    swatch($("result-swatch"), res.item || {});  // the item found: its record
  } else {
    $("result").textContent = "Nothing left to show.";
    swatch($("result-swatch"), {});
  }
}

// ---------------------------------------------------------------- plain search
async function start(mode) {
  const body = mode === "find" ? {mode, n_choices: Number($("k").value)} : {mode};
  try {
    const s = await api("/api/sessions", body);
    state.session = {id: s.id, token: s.token, mode};
    state.trail = [];
    save();
    render(s.screen, 0);
    document.querySelector(".pick").focus();
  } catch (e) {
    $("status").textContent = "Error: " + e.message;
  }
}

async function resumeSearch() {
  const saved = JSON.parse(localStorage.getItem(STORE) || "null");
  if (!saved || !saved.session) return false;
  state.session = saved.session;
  try {
    const s = await api(`/api/sessions/${state.session.id}`, undefined, state.session.token);
    if (s.done) { localStorage.removeItem(STORE); return false; }
    render(s.screen, s.n_queries);
    return true;
  } catch (e) {
    localStorage.removeItem(STORE);
    return false;
  }
}

// ---------------------------------------------------------------- study
async function enrol() {
  const p = await api("/api/study/participants", {consent: true});
  state.participant = {id: p.id, token: p.token};
  save();
  await nextTarget();
}

async function nextTarget() {
  const r = await api(`/api/study/participants/${state.participant.id}/next`, {}, state.participant.token);
  if (r.done) {
    state.slot = null;
    state.screen = null;
    show("done");
    $("result").textContent = `Thank you: all ${r.n_slots} searches are done. Your participant id is ${state.participant.id}.`;
    swatch($("result-swatch"), {});
    $("again").hidden = true;
    progress();
    return;
  }
  state.slot = {slot: r.slot, n_slots: r.n_slots, target: r.target};
  state.session = {id: r.session.id, token: state.participant.token, mode: "find"};
  state.screen = null;
  save();
  if (r.n_queries === 0) {
    show("target-intro");
    swatch($("target-big"), r.target);
    $("target-big").title = r.target.name;
    $("target-name").textContent = r.target.name;
    progress();
    $("begin").onclick = () => { render(r.session.screen, 0); document.querySelector(".pick").focus(); };
    $("begin").focus();
  } else {
    render(r.session.screen, r.n_queries);
  }
}

async function initStudy() {
  const study = await api("/api/study");
  $("title").textContent = study.title;
  const saved = JSON.parse(localStorage.getItem(STORE) || "null");
  if (saved && saved.participant) {
    state.participant = saved.participant;
    try { await nextTarget(); return; } catch (e) { localStorage.removeItem(STORE); }
  }
  show("consent");
  $("consent-text").textContent = study.consent;
  $("agree").onclick = () => enrol().catch((e) => { $("status").textContent = "Error: " + e.message; });
  $("decline").onclick = () => {
    show("done");
    $("result").textContent = "No problem: nothing was recorded.";
    $("again").hidden = true;
  };
}

async function initSearch() {
  const cat = await api("/api/catalogue?limit=0");  // the metadata, no items
  $("title").textContent = cat.title;
  $("mode-mix").hidden = !cat.modes.includes("mix");
  $("find").textContent = cat.modes.includes("mix") ? "Find a named colour" : "Find an item";
  if (!(await resumeSearch())) show("start");
}

// ---------------------------------------------------------------- keys
document.addEventListener("keydown", (ev) => {
  if ($("search").hidden || state.busy || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const mix = state.session && state.session.mode === "mix";
  const n = mix ? 2 : state.screen.items.length;
  if (/^[1-9]$/.test(ev.key) && Number(ev.key) <= n) {
    ev.preventDefault();
    answer(Number(ev.key) - 1, false);
  } else if (ev.key === "Enter") {
    const el = document.activeElement;
    if (el && el.classList.contains("pick")) {
      ev.preventDefault();
      if (!mix) answer(Number(el.dataset.index), true);
      else answer(null, true);
    } else if (mix && !(el && el.tagName === "BUTTON")) {
      ev.preventDefault();
      answer(null, true);
    }
  } else if (!mix && (ev.key === "0" || ev.key.toLowerCase() === "n")) {
    ev.preventDefault();
    answer(null, false);
  } else if (ev.key.toLowerCase() === "u" || ev.key === "Backspace") {
    ev.preventDefault();
    undo();
  }
});

$("find").onclick = () => start("find");
$("mix").onclick = () => start("mix");
$("skip").onclick = () => answer(null, false);
$("accept").onclick = () => answer(null, true);
$("undo").onclick = () => undo();
$("again").onclick = () => { localStorage.removeItem(STORE); location.reload(); };

(page === "study" ? initStudy() : initSearch()).catch((e) => {
  $("status").textContent = "Error: " + e.message;
});

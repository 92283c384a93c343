// The owner's dashboard. A collect's: answers over time, held-out accuracy per sampler, the
// newest embedding as a map, the participants and who is flagged; a study's: its
// participants' table (platform id, outcome, recorded code, checks). Asks for the admin
// token once (kept for this tab only) and refreshes every 10 seconds.

import {COLOURS, plotLines, plotMap} from "./plot.js";
import {cell, notices, platform, refused, renderStudy} from "./roster.js";
import {arms, trials} from "./tables.js";

const $ = (id) => document.getElementById(id);
const KEY = "tripletsearch.admin";
const EVERY_MS = 10000;
const KIND = location.pathname.split("/")[1]; // /study/dashboard or /collect/dashboard
let timer = null;

async function fetchBoard(token) {
  const r = await fetch(`/api/admin/${KIND}`, {headers: {Authorization: `Bearer ${token}`}});
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || `the server said ${r.status}`);
  return body;
}

// a participant's agreement with everyone else's answers ("41/50, p 0.0001"); not scored
// yet: their picks the refitter last read (not their answers now: checks, skips, since)
const agreement = (a) => !a ? "" : a.p_value === null ? `not scored yet (${a.answers} picks at the last refit)`
  : `${a.agreed}/${a.answers}, p ${Number(a.p_value).toPrecision(2)}`;

function participants(list) {
  const body = $("participants").querySelector("tbody");
  body.replaceChildren();
  for (const p of list) {
    const row = document.createElement("tr");
    if (p.flagged) row.className = "flagged";
    row.dataset.participant = p.id;
    cell(row, p.number);
    cell(row, p.id.slice(0, 8));
    cell(row, p.sampler);
    cell(row, p.answers);
    cell(row, p.skips);
    cell(row, p.fallbacks);
    cell(row, `${p.attention[0]}/${p.attention[1]}`);
    cell(row, `${p.gold[0]}/${p.gold[1]}`);
    cell(row, `${p.clear_repeats[0]}/${p.clear_repeats[1]}` +
      (p.repeats[1] > p.clear_repeats[1] ? ` (+${p.repeats[1] - p.clear_repeats[1]} not judged)` : ""));
    cell(row, agreement(p.agreement));
    cell(row, p.response_ms_median === null ? "" : Math.round(p.response_ms_median));
    cell(row, p.server_ms_median === null ? "" : Math.round(p.server_ms_median));
    platform(row, p);
    cell(row, p.outcome, "outcome");
    cell(row, p.code, "code");
    cell(row, p.status, "status");
    if (p.flags.length) row.lastChild.title = p.flags.map((f) => f.why).join("\n");
    body.append(row);
  }
  const flagged = list.filter((p) => p.flagged).length;
  $("flagged").textContent = `${flagged} flagged (left out of the fits, kept in the database)`;
}

function render(d) {
  notices(d.notices);
  if (d.kind === "study") return renderStudy(d);
  const answers = d.answers.count.length ? d.answers.count.at(-1) : 0;
  $("title").textContent = `${d.title}: dashboard`;
  $("summary").textContent =
    `${d.participants.length} participants, ${answers} answers, ${d.flagged} flagged; ` +
    `${refused(d)}updated ${new Date().toLocaleTimeString()}`;
  const minutes = d.answers.t.length > 0 && d.answers.t.at(-1) > 120;
  plotLines($("answers-plot"), [{name: "answers", x: d.answers.t.map((t) => minutes ? t / 60 : t),
    y: d.answers.count, colour: COLOURS[0]}], {xLabel: minutes ? "minutes" : "seconds",
    yLabel: "answers"});
  const names = Object.keys(d.samplers);
  const series = names.map((name, i) => {
    const scored = d.samplers[name].filter((v) => v.accuracy !== null);
    return {name, x: scored.map((v) => v.n_triplets), y: scored.map((v) => v.accuracy),
      lo: scored.map((v) => v.interval[0]), hi: scored.map((v) => v.interval[1]),
      n: scored.map((v) => v.n_test), colour: COLOURS[i % COLOURS.length]};
  });
  plotLines($("accuracy-plot"), series,
    {xLabel: "triplets fitted (implied)", yLabel: "held-out accuracy", yRange: [0.4, 1]});
  const legend = $("accuracy-legend");
  legend.replaceChildren();
  series.forEach((s) => {
    const key = document.createElement("span");
    key.className = "key";
    key.dataset.series = s.name;
    key.textContent = s.x.length
      ? `${s.name}: ${s.y.at(-1).toFixed(3)} [${s.lo.at(-1).toFixed(3)}, ` +
        `${s.hi.at(-1).toFixed(3)}] on ${s.n.at(-1)} test triplets`
      : `${s.name}: not fitted yet`;
    key.style.borderColor = s.colour;
    legend.append(key);
  });
  if (d.map) {
    plotMap($("map"), d.map.points, d.map.items);
    $("map-caption").textContent =
      `The embedding of sampler ${d.map.sampler} (version ${d.map.version}, ` +
      `${d.map.n_triplets} triplets), on its first two principal axes`;
  } else {
    $("map").replaceChildren();
    $("map-caption").textContent = "No embedding yet: the first fit needs more answers.";
  }
  participants(d.participants);
  arms(d.arms, d.refitter);
  trials(d.trial);
  $("rules").textContent = d.rules.text;
}

async function refresh(token) {
  try {
    render(await fetchBoard(token));
    $("login").hidden = true;
    $("board").hidden = false;
    sessionStorage.setItem(KEY, token);
    clearTimeout(timer);
    timer = setTimeout(() => refresh(token), EVERY_MS);
  } catch (e) {
    sessionStorage.removeItem(KEY);
    $("login").hidden = false;
    $("login-error").textContent = e.message;
  }
}

$("login").addEventListener("submit", (event) => {
  event.preventDefault();
  refresh($("token").value.trim());
});
const kept = sessionStorage.getItem(KEY);
if (kept) refresh(kept);
else $("token").focus();

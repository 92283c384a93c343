// The collect owner's dashboard (/collect/dashboard): answers over time, held-out accuracy
// per sampler, the newest embedding as a map, the participants and who is flagged. Asks
// for the admin token once (kept for this tab only) and refreshes every 10 seconds.

import {COLOURS, plotLines, plotMap} from "./plot.js";
import {arms, participants} from "./tables.js";

const $ = (id) => document.getElementById(id);
const KEY = "tripletsearch.admin";
const EVERY_MS = 10000;
let timer = null;

async function fetchBoard(token) {
  const r = await fetch("/api/admin/collect", {headers: {Authorization: `Bearer ${token}`}});
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || `the server said ${r.status}`);
  return body;
}

function render(d) {
  const answers = d.answers.count.length ? d.answers.count.at(-1) : 0;
  $("title").textContent = `${d.title}: dashboard`;
  $("summary").textContent =
    `${d.participants.length} participants, ${answers} answers, ${d.flagged} flagged; ` +
    `updated ${new Date().toLocaleTimeString()}`;
  const minutes = d.answers.t.length > 0 && d.answers.t.at(-1) > 120;
  plotLines($("answers-plot"), [{name: "answers", x: d.answers.t.map((t) => minutes ? t / 60 : t),
    y: d.answers.count, colour: COLOURS[0]}], {xLabel: minutes ? "minutes" : "seconds",
    yLabel: "answers"});
  const names = Object.keys(d.samplers);
  const series = names.map((name, i) => {
    const scored = d.samplers[name].filter((v) => v.accuracy !== null);
    return {name, x: scored.map((v) => v.n_rows), y: scored.map((v) => v.accuracy),
      lo: scored.map((v) => v.interval[0]), hi: scored.map((v) => v.interval[1]),
      n: scored.map((v) => v.n_test), colour: COLOURS[i % COLOURS.length]};
  });
  plotLines($("accuracy-plot"), series,
    {xLabel: "triplets fitted", yLabel: "held-out accuracy", yRange: [0.4, 1]});
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
      `${d.map.n_rows} triplets), on its first two principal axes`;
  } else {
    $("map").replaceChildren();
    $("map-caption").textContent = "No embedding yet: the first fit needs more answers.";
  }
  participants(d.participants);
  arms(d.arms, d.refitter);
  const r = d.rules;
  $("rules").textContent =
    `Check rules version ${r.version}: attention checks, gold queries and repeats of clear ` +
    `queries passed by fewer than half, a median time per screen under 250 ms, or answers ` +
    `agreeing with everyone else's no more than chance (a one-sided test, each pick ` +
    `weighed by how sure the embedding of the others' answers is, at ` +
    `${r.agreement_level}, judged from ${r.agreement_after} answers once the others gave ` +
    `${r.agreement_rows} triplets; ` +
    (r.scored ? `last scored ${new Date(r.scored * 1000).toLocaleTimeString()} on ` +
      `${r.scored_triplets} triplets)` : "not scored yet)") + ". Hover a status for why.";
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

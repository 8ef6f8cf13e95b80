# ruff: noqa: E501 (the page's CSS and JavaScript are kept inline, one rule a line)
"""The review app's one page: HTML, CSS and JavaScript inline, nothing fetched from elsewhere.

The live server answers the page's four requests under ``/api/``; a static site embeds the
same answers' data (``window.REVIEW_DATA``) and the page computes them itself. Keys are
listed in `KEYS` (shown by ``?`` on the page and in docs/review-app.md).
"""

from __future__ import annotations

import html
import json
from typing import Any

__all__ = ["KEYS", "render_page"]

KEYS: tuple[tuple[str, str], ...] = (
    ("j / k", "next / previous attempt (in the list, and in a transcript)"),
    ("Enter or o", "open the selected attempt's transcript"),
    ("Esc or u", "back to the list (from the note: leave the note, saving it)"),
    ("/", "search the transcripts (Enter runs the search)"),
    ("1 - 9", "toggle the taxonomy's failure mode of that number (saved at once)"),
    ("0", "no failure mode applies: save an empty label (clears the modes)"),
    ("n", "write the note (Enter saves it; Shift+Enter for a new line)"),
    ("c", "show the next comparison (other epochs, the other run's attempts)"),
    ("[ / ]", "previous / next page of the list"),
    ("?", "show or hide the keys"),
)

_CSS = """
*{box-sizing:border-box}body{margin:0;font:14px/1.4 system-ui,sans-serif;color:#1d232b;background:#f6f7f9}
header{background:#1d2a3a;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:baseline;flex-wrap:wrap}
header h1{font-size:16px;margin:0}header .runs{font-size:12px;opacity:.85}
main{padding:10px 16px}.notes{background:#fff6d6;border:1px solid #e8d48a;padding:6px 10px;margin-bottom:8px;font-size:13px}
#filters{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin-bottom:8px}
#filters label{font-size:12px;color:#445}select,input,textarea{font:inherit;padding:3px 5px;border:1px solid #b8c0cc;border-radius:4px;background:#fff}
#q{width:280px}table{border-collapse:collapse;width:100%;background:#fff}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e4e7ec;font-size:13px;vertical-align:top}
th{background:#eef1f5;position:sticky;top:0}tr.sel{background:#dbe9ff}tr:hover{background:#f0f5ff;cursor:pointer}
.o-scored{color:#17663a}.o-limit{color:#9a5b00}.o-harness_error{color:#b3261e}.chip{display:inline-block;padding:0 6px;margin:1px;border-radius:8px;background:#e6e9ef;font-size:12px}
.chip.harness{background:#fde2e1;color:#8a1c14}.chip.find{background:#efe5ff}#pager{margin:6px 0;display:flex;gap:10px;align-items:center}
#status{font-size:12px;color:#556}.cols{display:grid;grid-template-columns:minmax(0,1.25fr) minmax(0,1fr);gap:12px}
.pane{background:#fff;border:1px solid #dde2e8;border-radius:6px;padding:8px 10px;min-width:0}
.msg{border-left:3px solid #c6ccd6;padding:3px 8px;margin:6px 0;white-space:pre-wrap;word-break:break-word;font-size:13px}
.msg.user{border-color:#3b82f6}.msg.assistant{border-color:#10b981}.msg.tool{border-color:#a855f7;background:#faf7ff}.msg.system{border-color:#9ca3af;color:#556}
.role{font-weight:600;font-size:11px;text-transform:uppercase;color:#667}.call{font-family:ui-monospace,monospace;font-size:12px;background:#f1f4f8;padding:3px 6px;margin:3px 0;border-radius:3px}
.err{color:#b3261e;font-weight:600}pre{white-space:pre-wrap;word-break:break-word;font-size:12px;background:#f6f8fa;padding:6px;margin:4px 0;max-height:260px;overflow:auto}
#labeller{background:#f4f8ff;border:1px solid #c9dafc;border-radius:6px;padding:8px;margin-bottom:8px}
.mode{display:inline-flex;gap:4px;align-items:center;margin:2px 10px 2px 0;font-size:13px}.mode kbd{min-width:18px}
kbd{font:11px ui-monospace,monospace;border:1px solid #aab;border-bottom-width:2px;border-radius:3px;padding:0 4px;background:#fff;color:#1d232b}
#note{width:100%;height:56px}#saved{font-size:12px;color:#17663a;margin-left:8px}#tabs button{margin:0 4px 4px 0;font-size:12px}#tabs button.on{background:#1d2a3a;color:#fff}
#help{position:fixed;right:16px;top:50px;background:#fff;border:1px solid #99a;box-shadow:0 4px 14px #0003;padding:10px 14px;display:none;z-index:5}#help.on{display:block}
h3{font-size:14px;margin:8px 0 4px}.muted{color:#667;font-size:12px}
"""

_JS = r"""
"use strict";
const DATA = window.REVIEW_DATA || null;
const $ = (s) => document.querySelector(s);
const esc = (s) => String(s == null ? "" : s).replace(/[&<>"']/g, (c) => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;","'":"&#39;"}[c]));
const FILTERS = ["run","outcome","stratum","limit_type","epoch","mode","finding","score_min","score_max","q"];
let META = null, PAGE = null, SEL = 0, VIEW = "list", CUR = null, CMP = 0, MODES = [], NOTE_DIRTY = false;

// the backend: the live server's API, or the embedded data of a static site
const api = DATA ? {
  meta: async () => DATA.meta,
  attempts: async (p) => staticAttempts(p),
  attempt: async (run, item, epoch) => staticAttempt(run, item, Number(epoch)),
  label: async () => { throw new Error("this is a static copy: labels are saved only by the live app (evalsuite review RUN)"); },
} : {
  meta: () => get("api/meta"),
  attempts: (p) => get("api/attempts?" + new URLSearchParams(p)),
  attempt: (run, item, epoch) => get("api/attempt?" + new URLSearchParams({run, item, epoch})),
  label: (body) => send("api/label", body),
};
async function get(url) { const r = await fetch(url); const b = await r.json(); if (!r.ok) throw new Error(b.error || r.statusText); return b; }
async function send(url, body) {
  const r = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  const b = await r.json(); if (!r.ok) throw new Error(b.error || r.statusText); return b;
}
function keyOf(r) { return r.run_id + "\u001f" + r.item_id + "\u001f" + r.epoch; }
function staticRow(r) { const l = DATA.labels[keyOf(r)]; return Object.assign({}, r, {modes: l ? l.modes : [], labelled: !!l, findings: DATA.findings[keyOf(r)] || []}); }
function staticAttempts(p) {
  const words = (p.q || "").toLowerCase().split(/\s+/).filter(Boolean);
  const num = (v) => v === undefined || v === "" ? null : Number(v);
  const lo = num(p.score_min), hi = num(p.score_max), ep = num(p.epoch);
  const rows = DATA.rows.filter((r) => {
    if (p.run && r.run_id !== p.run) return false;
    if (p.outcome && r.outcome !== p.outcome) return false;
    if (p.stratum && r.stratum !== p.stratum) return false;
    if (p.limit_type && r.limit_type !== p.limit_type) return false;
    if (ep !== null && r.epoch !== ep) return false;
    if ((lo !== null || hi !== null) && (r.score === null || (lo !== null && r.score < lo) || (hi !== null && r.score > hi))) return false;
    const l = DATA.labels[keyOf(r)];
    if (p.mode === "-" && l) return false;
    if (p.mode === "*" && !l) return false;
    if (p.mode && p.mode !== "-" && p.mode !== "*" && !(l && l.modes.includes(p.mode))) return false;
    const f = DATA.findings[keyOf(r)] || [];
    if (p.finding && (!f.length || (p.finding !== "*" && !f.includes(p.finding)))) return false;
    if (words.length) { const t = DATA.text[r.id] || ""; if (!words.every((w) => t.includes(w))) return false; }
    return true;
  });
  const off = Number(p.offset || 0), lim = Number(p.limit || DATA.meta.page_size);
  return {total: rows.length, offset: off, limit: lim, rows: rows.slice(off, off + lim).map(staticRow)};
}
function staticAttempt(run, item, epoch) {
  const row = DATA.rows.find((r) => r.run_id === run && r.item_id === item && r.epoch === epoch);
  if (!row) throw new Error("no attempt of " + item + " at epoch " + epoch + " in run " + run);
  const others = DATA.rows.filter((r) => r.item_id === item && r !== row).map(staticRow);
  const t = DATA.transcripts[row.id] || null;
  return {row: staticRow(row), label: DATA.labels[keyOf(row)] || null, transcript: t,
          missing: t ? null : (DATA.missing[row.id] || "no transcript of this attempt in the run's logs"), others};
}

// routing: #/?filters for the list, #/a/<run>/<item>/<epoch>?filters for a transcript
function parseHash() {
  const h = location.hash.replace(/^#/, "") || "/";
  const [path, qs] = h.split("?");
  const p = Object.fromEntries(new URLSearchParams(qs || ""));
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return {parts, p};
}
function listParams() { const {p} = parseHash(); return p; }
function hashFor(parts, p) {
  const q = new URLSearchParams(Object.entries(p).filter(([, v]) => v !== "" && v != null)).toString();
  return "#/" + parts.map(encodeURIComponent).join("/") + (q ? "?" + q : "");
}
async function route() {
  const {parts, p} = parseHash();
  if (parts[0] === "a" && parts.length === 4) { await showAttempt(parts[1], parts[2], Number(parts[3]), p); }
  else { await showList(p); }
}

function opt(values, cur, all) {
  return `<option value="">${all}</option>` + values.map((v) => `<option value="${esc(v[0])}"${String(v[0]) === String(cur) ? " selected" : ""}>${esc(v[1])}</option>`).join("");
}
function filterBar(p) {
  const m = META;
  return `<div id="filters">
   <select id="f-run" title="run">${opt(m.runs.map((r) => [r.run_id, r.run_id + " · " + r.model]), p.run, "all runs")}</select>
   <select id="f-outcome" title="outcome">${opt(m.outcomes.map((v) => [v, v]), p.outcome, "any outcome")}</select>
   <select id="f-stratum" title="stratum">${opt(m.strata.map((v) => [v, v]), p.stratum, "any stratum")}</select>
   <select id="f-limit_type" title="limit type">${opt(m.limit_types.map((v) => [v, v]), p.limit_type, "any limit")}</select>
   <select id="f-epoch" title="epoch">${opt(m.epochs.map((v) => [v, "epoch " + v]), p.epoch, "any epoch")}</select>
   <select id="f-mode" title="failure mode label">${opt([["*", "labelled"], ["-", "not labelled"]].concat(m.modes.map((x) => [x.name, "mode: " + x.name])), p.mode, "any label")}</select>
   <select id="f-finding" title="scanner finding">${opt([["*", "any finding"]].concat(m.scanners.map((v) => [v, "scanner: " + v])), p.finding, "findings: all")}</select>
   <label>score <input id="f-score_min" size="3" value="${esc(p.score_min || "")}" placeholder="min"> – <input id="f-score_max" size="3" value="${esc(p.score_max || "")}" placeholder="max"></label>
   <input id="q" type="search" placeholder="search messages, tool calls, results ( / )" value="${esc(p.q || "")}">
   <span id="status"></span></div>`;
}
function readFilters() {
  const p = {};
  for (const f of FILTERS) { const el = f === "q" ? $("#q") : $("#f-" + f); if (el && el.value.trim() !== "") p[f] = el.value.trim(); }
  return p;
}
function chips(r) {
  const kinds = Object.fromEntries(META.modes.map((m) => [m.name, m.kind]));
  return r.modes.map((x) => `<span class="chip${kinds[x] === "harness" ? " harness" : ""}">${esc(x)}</span>`).join("") +
    (r.labelled && !r.modes.length ? `<span class="chip">no mode</span>` : "") +
    r.findings.map((x) => `<span class="chip find">⚑ ${esc(x)}</span>`).join("");
}
async function showList(p) {
  VIEW = "list";
  const asked = location.hash;
  const off = Number(p.offset || 0);
  const t0 = performance.now();
  const res = await api.attempts(Object.assign({}, p, {offset: off, limit: META.page_size}));
  if (location.hash !== asked) return;  // a newer filter or search is on its way: drop this answer
  PAGE = {p, res};
  if (SEL >= res.rows.length) SEL = Math.max(0, res.rows.length - 1);
  const body = res.rows.map((r, i) => `<tr data-i="${i}" class="${i === SEL ? "sel" : ""}">
     <td>${esc(r.run_id)}</td><td>${esc(r.item_id)}</td><td>${r.epoch}</td><td>${esc(r.stratum)}</td>
     <td class="o-${esc(r.outcome)}">${esc(r.outcome)}${r.limit_type ? " (" + esc(r.limit_type) + ")" : ""}</td>
     <td>${r.score === null ? "–" : esc(r.score)}</td><td>${chips(r)}</td><td class="muted">${esc((r.reason || "").slice(0, 120))}</td></tr>`).join("");
  $("main").innerHTML = notes() + filterBar(p) + `<table id="list"><thead><tr><th>run</th><th>item</th><th>epoch</th><th>stratum</th><th>outcome</th><th>score</th><th>labels, findings</th><th>reason</th></tr></thead><tbody>${body}</tbody></table>
    <div id="pager"><button id="prev" ${off === 0 ? "disabled" : ""}>[ previous</button><span>${res.total ? off + 1 : 0}–${off + res.rows.length} of ${res.total} attempts</span><button id="next" ${off + res.rows.length >= res.total ? "disabled" : ""}>next ]</button></div>`;
  $("#status").textContent = `${res.total} attempts · ${Math.round(performance.now() - t0)} ms`;
  document.body.dataset.view = "list";
  document.body.dataset.total = String(res.total);
  document.body.dataset.shown = location.hash;
  for (const el of document.querySelectorAll("#filters select")) el.addEventListener("change", applyFilters);
  for (const el of document.querySelectorAll("#f-score_min,#f-score_max,#q")) el.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); applyFilters(); } });
  for (const tr of document.querySelectorAll("#list tbody tr")) tr.addEventListener("click", () => { SEL = Number(tr.dataset.i); openSelected(); });
  $("#prev").addEventListener("click", () => page(-1));
  $("#next").addEventListener("click", () => page(1));
}
function applyFilters() { SEL = 0; location.hash = hashFor([], readFilters()); }
function page(d) {
  const p = Object.assign({}, PAGE.p); const off = Number(p.offset || 0) + d * META.page_size;
  if (off < 0 || off >= PAGE.res.total) return; p.offset = String(off); SEL = 0; location.hash = hashFor([], p);
}
function moveSel(d) {
  const rows = document.querySelectorAll("#list tbody tr"); if (!rows.length) return;
  SEL = Math.min(rows.length - 1, Math.max(0, SEL + d));
  rows.forEach((r, i) => r.classList.toggle("sel", i === SEL)); rows[SEL].scrollIntoView({block: "nearest"});
}
function openSelected() {
  const r = PAGE && PAGE.res.rows[SEL]; if (!r) return;
  location.hash = hashFor(["a", r.run_id, r.item_id, String(r.epoch)], PAGE.p);
}
function notes() { return META.notes.map((n) => `<div class="notes">${esc(n)}</div>`).join(""); }

function transcriptHtml(a, compact) {
  if (!a.transcript) return `<p class="muted">${esc(a.missing)}</p>`;
  const t = a.transcript;
  const grader = t.grader.map((g) => `<div><b>${esc(g.scorer)}</b>: ${esc(JSON.stringify(g.value))}${g.answer ? " · answer " + esc(g.answer) : ""}<br>${esc(g.explanation || "")}
     <pre>${esc(JSON.stringify(g.metadata, null, 1))}</pre></div>`).join("");
  const msgs = t.messages.filter((m) => !(compact && m.role === "system")).map((m) => {
    const calls = (m.tool_calls || []).map((c) => `<div class="call">→ ${esc(c.function)}(${esc(JSON.stringify(c.arguments))})</div>`).join("");
    const head = m.role === "tool" ? `tool result · ${esc(m.function)}` : esc(m.role);
    return `<div class="msg ${esc(m.role)}"><div class="role">${head}</div>${m.error ? `<div class="err">${esc(m.error)}</div>` : ""}${esc(m.text)}${calls}</div>`;
  }).join("");
  return `<h3>Grader</h3>${grader || '<p class="muted">no score</p>'}
    ${t.limit ? `<p class="err">ended on a ${esc(t.limit)}</p>` : ""}${t.error ? `<p class="err">error: ${esc(t.error)}</p>` : ""}
    <h3>Final state</h3><div class="muted">stop reason: ${esc(t.final.stop_reason)}</div><div class="msg assistant">${esc(t.final.completion)}</div>
    <details><summary>store at the end</summary><pre>${esc(JSON.stringify(t.final.store, null, 1))}</pre></details>
    <h3>Messages (${t.messages.length})</h3>${msgs}`;
}
function head(r) {
  return `<b>${esc(r.item_id)}</b> · epoch ${r.epoch} · run ${esc(r.run_id)} · ${esc(r.stratum)} · <span class="o-${esc(r.outcome)}">${esc(r.outcome)}${r.limit_type ? " (" + esc(r.limit_type) + ")" : ""}</span> · score ${r.score === null ? "–" : esc(r.score)}`;
}
function labeller(a) {
  const cur = new Set(a.label ? a.label.modes : []);
  MODES = META.modes.map((m) => m.name);
  const modes = META.modes.map((m, i) => `<label class="mode" title="${esc(m.definition)}"><kbd>${i < 9 ? i + 1 : ""}</kbd><input type="checkbox" data-mode="${esc(m.name)}"${cur.has(m.name) ? " checked" : ""}${META.can_label ? "" : " disabled"}> ${esc(m.name)}${m.kind === "harness" ? ' <span class="chip harness">harness fault</span>' : ""}</label>`).join("");
  const who = `<span class="muted" id="who">${whoText(a.label)}</span>`;
  return `<div id="labeller"><div><b>Failure modes</b> ${who}<span id="saved"></span></div>
    ${modes || '<span class="muted">the suite has no taxonomy file: only notes can be saved</span>'}
    <div><textarea id="note" placeholder="note ( n to write, Enter to save )"${META.can_label ? "" : " disabled"}>${esc(a.label ? a.label.note : "")}</textarea></div></div>`;
}
function whoText(l) { return l ? `labelled by ${esc(l.who)} at ${esc(l.at)} (taxonomy ${esc(l.taxonomy_version)})` : "not labelled"; }
async function showAttempt(run, item, epoch, p) {
  VIEW = "attempt";
  const asked = location.hash;
  if (!PAGE || JSON.stringify(PAGE.p) !== JSON.stringify(p)) { const res = await api.attempts(Object.assign({}, p, {offset: Number(p.offset || 0), limit: META.page_size})); PAGE = {p, res}; }
  const a = await api.attempt(run, item, epoch);
  if (location.hash !== asked) return;  // the reviewer moved on before this answer came
  CUR = a; NOTE_DIRTY = false;
  const i = PAGE.res.rows.findIndex((r) => r.run_id === run && r.item_id === item && r.epoch === epoch);
  if (i >= 0) SEL = i;
  const tabs = a.others.map((o, k) => `<button data-k="${k}" class="${k === CMP ? "on" : ""}">${o.run_id === run ? "epoch " + o.epoch : "run " + esc(o.run_id) + " · epoch " + o.epoch}</button>`).join("");
  $("main").innerHTML = notes() + `<p><a href="${hashFor([], p)}">← list</a> <span class="muted">(Esc)</span> · ${head(a.row)}</p>
    <div class="cols"><div class="pane" id="main-pane">${labeller(a)}${transcriptHtml(a, false)}</div>
    <div class="pane" id="cmp-pane"><div id="tabs"><b>Same item</b> ${tabs || '<span class="muted">no other attempt of this item in the reviewed runs</span>'}</div><div id="cmp"></div></div></div>`;
  document.body.dataset.view = "attempt";
  document.body.dataset.shown = location.hash;
  for (const el of document.querySelectorAll("#labeller input[type=checkbox]")) el.addEventListener("change", () => saveLabel());
  $("#note").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); saveLabel(); $("#note").blur(); }
    else if (e.key === "Escape") { e.preventDefault(); if (NOTE_DIRTY) saveLabel(); $("#note").blur(); }
    e.stopPropagation();
  });
  $("#note").addEventListener("input", () => { NOTE_DIRTY = true; });
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => { CMP = Number(b.dataset.k); showCmp(); });
  if (CMP >= a.others.length) CMP = 0;
  await showCmp();
}
async function showCmp() {
  const o = CUR.others[CMP]; const box = $("#cmp"); if (!o) { box.innerHTML = ""; return; }
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("on", Number(b.dataset.k) === CMP);
  const a = await api.attempt(o.run_id, o.item_id, o.epoch);
  box.innerHTML = `<p>${head(a.row)} ${chips(a.row)}</p>` + transcriptHtml(a, true);
}
async function saveLabel(modes) {
  if (!META.can_label) return;
  const chosen = modes || [...document.querySelectorAll("#labeller input[type=checkbox]")].filter((c) => c.checked).map((c) => c.dataset.mode);
  const r = CUR.row;
  try {
    const saved = await api.label({run_id: r.run_id, item_id: r.item_id, epoch: r.epoch, modes: chosen, note: $("#note").value});
    CUR.label = saved; NOTE_DIRTY = false;
    const row = PAGE && PAGE.res.rows.find((x) => keyOf(x) === keyOf(r));
    if (row) { row.modes = saved.modes; row.labelled = true; }
    $("#who").innerHTML = whoText(saved);
    $("#saved").textContent = "saved " + (saved.modes.length ? saved.modes.join(", ") : "(no mode)") + " at " + saved.at;
    document.body.dataset.saved = keyOf(r) + "|" + saved.modes.join(",");
    document.body.dataset.saves = String(Number(document.body.dataset.saves || 0) + 1);
  } catch (e) { $("#saved").textContent = ""; alert(e.message); }
}
function toggleMode(i) {
  const box = document.querySelectorAll("#labeller input[type=checkbox]")[i]; if (!box || box.disabled) return;
  box.checked = !box.checked; saveLabel();
}
function step(d) {
  if (!PAGE) return; const i = SEL + d;
  if (i < 0 || i >= PAGE.res.rows.length) return;
  SEL = i; openSelected();
}
document.addEventListener("keydown", (e) => {
  const tag = (e.target && e.target.tagName) || "";
  if (e.key === "?" && tag !== "TEXTAREA" && tag !== "INPUT") { $("#help").classList.toggle("on"); return; }
  if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") { if (e.key === "Escape") e.target.blur(); return; }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "/") { e.preventDefault(); if (VIEW !== "list") { location.hash = hashFor([], PAGE ? PAGE.p : {}); setTimeout(() => $("#q") && $("#q").focus(), 80); } else $("#q").focus(); return; }
  if (VIEW === "list") {
    if (e.key === "j" || e.key === "ArrowDown") { e.preventDefault(); moveSel(1); }
    else if (e.key === "k" || e.key === "ArrowUp") { e.preventDefault(); moveSel(-1); }
    else if (e.key === "Enter" || e.key === "o") openSelected();
    else if (e.key === "]") page(1); else if (e.key === "[") page(-1);
  } else {
    if (e.key === "j") step(1); else if (e.key === "k") step(-1);
    else if (e.key === "Escape" || e.key === "u") location.hash = hashFor([], PAGE ? PAGE.p : {});
    else if (/^[1-9]$/.test(e.key)) toggleMode(Number(e.key) - 1);
    else if (e.key === "0") { for (const c of document.querySelectorAll("#labeller input[type=checkbox]")) c.checked = false; saveLabel([]); }
    else if (e.key === "n") { e.preventDefault(); $("#note").focus(); }
    else if (e.key === "c" && CUR && CUR.others.length) { CMP = (CMP + 1) % CUR.others.length; showCmp(); }
  }
});
window.addEventListener("hashchange", () => route().catch(fail));
function fail(e) { $("main").innerHTML = `<div class="notes err">${esc(e.message)}</div>`; }
(async () => {
  try {
    META = await api.meta();
    $("header .runs").textContent = META.runs.map((r) => `${r.run_id} (${r.model}, ${r.suite}@${r.version} ${r.split}, ${r.n_attempts} attempts)`).join(" · ") + " · labeller: " + META.who + (META.can_label ? "" : " · static copy, read-only");
    await route();
    document.body.dataset.ready = "1";
  } catch (e) { fail(e); }
})();
"""


def render_page(data: dict[str, Any] | None = None) -> str:
    """The page; with `data` (a static site's embedded answers) it needs no server."""
    keys = "".join(
        f"<tr><td><kbd>{html.escape(k)}</kbd></td><td>{html.escape(v)}</td></tr>" for k, v in KEYS
    )
    embedded = ""
    if data is not None:
        payload = json.dumps(data, separators=(",", ":"), allow_nan=False)
        # "</" cannot end the script element early; U+2028/9 are fine in JSON since ES2019
        embedded = "<script>window.REVIEW_DATA=" + payload.replace("</", "<\\/") + ";</script>"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:\">"
        f"<title>evalsuite review</title><style>{_CSS}</style></head><body>"
        '<header><h1>evalsuite review</h1><span class="runs"></span>'
        '<span style="margin-left:auto;font-size:12px">keys: <kbd>?</kbd></span></header>'
        f'<div id="help"><b>Keys</b><table>{keys}</table></div><main>loading…</main>'
        f"{embedded}<script>{_JS}</script></body></html>"
    )

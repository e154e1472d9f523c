// SPDX-License-Identifier: Apache-2.0
// vtld's web console: polls vtld's /api every second and draws the library
// as it is. Plain JavaScript, no library; every text from the daemon goes
// into the page as text (textContent), never as markup.
"use strict";

const POLL_MS = 1000;        // drives, elements, jobs
const SLOW_EVERY = 5;        // events, cartridges, library: every 5th poll
const CHART_POINTS = 60;     // a minute of samples per drive
const TOKEN_KEY = "vtl-token"; // sessionStorage only: gone with the tab

// The fields each action takes: the control protocol's arguments (docs/operations.md, "Web console").
const ACTIONS = {
  move: ["from", "to"], load: ["what", "drive"], unload: ["drive", "slot"],
  import: ["barcode", "ie"], export: ["ie"], migrate: ["barcode", "drive", "rate", "native", "library"],
  verify: ["barcode", "library"], recall: ["barcode", "drive", "rate", "library"], release: ["barcode", "force"],
};

const charts = new Map(); // drive address -> [{w, r}] samples
const jobRates = [];       // [{w: copies' MB/s, r: recalls' MB/s}], one a poll
let polls = 0;

function $(id) { return document.getElementById(id); }

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  if (text !== undefined) e.textContent = text;
  return e;
}

function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }

function headers() {
  const h = {};
  if (token()) h.Authorization = "Bearer " + token();
  return h;
}

async function get(path) {
  const r = await fetch(path, {headers: headers(), cache: "no-store"});
  const text = await r.text();
  let doc = null;
  try { doc = JSON.parse(text); } catch (e) { /* not JSON: the daemon's plain-text refusal */ }
  if (!r.ok) throw new Error(path + ": " + r.status + " " + (doc && doc.error ? doc.error : text.trim()));
  return doc;
}

function bytes(n) {
  const u = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < u.length - 1) { n /= 1000; i++; }
  return (i ? n.toFixed(1) : n) + " " + u[i];
}

function duration(s) {
  if (!(s > 0)) return "";
  const m = Math.floor(s / 60);
  return m ? m + " min " + Math.round(s % 60) + " s" : Math.round(s) + " s";
}

function element(e) {
  const d = el("div", {"class": "el" + (e.full ? " full" : ""), "data-address": e.address, "data-type": e.type,
                        "data-barcode": e.barcode || ""});
  d.append(el("span", {"class": "addr"}, e.type + " " + e.number + " · " + e.address));
  d.append(el("span", {"class": "bc"}, e.barcode || "empty"));
  d.title = e.source != null ? "from " + e.source : "";
  return d;
}

function drawElements(doc) {
  const slots = $("slots"), ies = $("mailslots");
  slots.replaceChildren();
  ies.replaceChildren();
  for (const e of doc.elements) {
    if (e.type === "slot") slots.append(element(e));
    else if (e.type === "ie") ies.append(element(e));
  }
}

function drawChart(canvas, samples) {
  const w = canvas.width = canvas.clientWidth || 300, h = canvas.height = canvas.clientHeight || 70;
  const g = canvas.getContext("2d");
  g.clearRect(0, 0, w, h);
  const max = Math.max(1, ...samples.map(s => Math.max(s.w, s.r)));
  const line = (key, color) => {
    g.strokeStyle = color;
    g.lineWidth = 2;
    g.beginPath();
    samples.forEach((s, i) => {
      const x = w - (samples.length - 1 - i) * (w / (CHART_POINTS - 1)), y = h - 4 - (s[key] / max) * (h - 8);
      if (i) g.lineTo(x, y); else g.moveTo(x, y);
    });
    g.stroke();
  };
  line("w", "#2f6fdf");
  line("r", "#1f9d55");
  g.fillStyle = "#6b7385";
  g.font = "11px sans-serif";
  g.fillText(max.toFixed(1) + " MB/s", 4, 12);
}

function drawDrives(status) {
  const box = $("drives");
  $("library-name").textContent = status.library;
  for (const d of status.drives) {
    let card = box.querySelector('.drive[data-address="' + d.address + '"]');
    if (!card) {
      card = el("div", {"class": "drive", "data-address": d.address});
      const head = el("div", {"class": "head"});
      head.append(el("span", {"class": "name"}, "Drive " + d.address + " (LUN " + d.lun + ")"),
                  el("span", {"class": "state"}));
      card.append(head, el("div", {"class": "bc"}), el("div", {"class": "rate"}), el("div", {"class": "moved note"}),
                  el("canvas", {"width": 300, "height": 70}));
      box.append(card);
    }
    card.dataset.state = d.state;
    card.dataset.barcode = d.barcode;
    card.dataset.written = d.written_bytes;
    card.dataset.read = d.read_bytes;
    card.dataset.writeMbS = d.write_mb_s;
    card.dataset.readMbS = d.read_mb_s;
    card.querySelector(".state").textContent = d.state;
    card.querySelector(".bc").textContent = d.barcode || "—";
    card.querySelector(".rate").textContent = "write " + d.write_mb_s.toFixed(1) + " MB/s · read " +
      d.read_mb_s.toFixed(1) + " MB/s";
    card.querySelector(".moved").textContent = "written " + bytes(d.written_bytes) + ", read " + bytes(d.read_bytes) +
      ", object " + d.position + " of " + d.eod + (d.compression !== "-" ? ", " + d.compression : "");
    const s = charts.get(d.address) || [];
    s.push({w: d.write_mb_s, r: d.read_mb_s});
    while (s.length > CHART_POINTS) s.shift();
    charts.set(d.address, s);
    drawChart(card.querySelector("canvas"), s);
  }
  const p = status.pool;
  $("pool").replaceChildren(el("div", {"id": "pool-fill", "data-fill": p.fill_percent},
    "pool " + p.fill_percent.toFixed(1) + " % full" + (p.throttled ? ", hosts throttled to " + p.throttle_rate + " MB/s" : "")),
    bar(p.fill_percent));
}

function bar(percent) {
  const b = el("div", {"class": "bar"}), f = el("div");
  f.style.width = Math.max(0, Math.min(100, percent)) + "%";
  b.append(f);
  return b;
}

function drawJobs(doc) {
  const body = $("jobs").querySelector("tbody");
  body.replaceChildren();
  const rate = {w: 0, r: 0};
  for (const j of doc ? doc.jobs : []) {
    if (j.state === "running" && j.mb_s !== undefined) rate[j.kind === "recall" ? "r" : "w"] += j.mb_s;
  }
  jobRates.push(rate);
  while (jobRates.length > CHART_POINTS) jobRates.shift();
  drawChart($("jobs-chart"), jobRates);
  if (!doc) return;
  for (const j of doc.jobs.slice().reverse()) {
    const pct = j.total ? 100 * j.bytes / j.total : (j.state === "done" ? 100 : 0);
    const tr = el("tr", {"data-id": j.id, "data-state": j.state, "data-progress": pct.toFixed(1),
                         "data-bytes": j.bytes});
    const prog = el("td");
    prog.append(bar(pct), el("span", {"class": "note"}, bytes(j.bytes) + (j.total ? " of " + bytes(j.total) : "")));
    tr.append(el("td", {}, j.id), el("td", {}, j.kind), el("td", {}, j.barcode), el("td", {}, j.state + (j.error ? ": " + j.error : "")),
              prog, el("td", {}, j.mb_s !== undefined ? j.mb_s.toFixed(1) : ""), el("td", {}, duration(j.eta_s)));
    body.append(tr);
  }
}

function drawEvents(doc) {
  const ol = $("events");
  ol.replaceChildren();
  for (const e of doc.events.slice(-50).reverse()) {
    const li = el("li");
    li.append(el("span", {"class": "t"}, e.time_utc + " " + e.actor + ": "), document.createTextNode(e.what));
    ol.append(li);
  }
}

function drawCache(cartridges, library) {
  const n = {};
  for (const c of cartridges.cartridges) n[c.cache] = (n[c.cache] || 0) + 1;
  const words = Object.entries(n).map(([k, v]) => v + " " + k).join(", ");
  const box = $("cache");
  box.replaceChildren(el("div", {"id": "cache-states"}, "cartridges: " + (words || "none")));
  for (const m of library.pool.members) {
    const total = m.used_bytes + m.free_bytes;
    box.append(el("div", {"class": "note"}, m.path + ": " + bytes(m.used_bytes) + " used, " + bytes(m.free_bytes) + " free"),
               bar(total ? 100 * m.used_bytes / total : 0));
  }
}

function connection(error) {
  const c = $("conn");
  c.textContent = error ? error : "live · " + new Date().toLocaleTimeString();
  c.className = "conn" + (error ? " bad" : "");
}

async function poll() {
  try {
    const [status, elements] = await Promise.all([get("/api/status"), get("/api/elements")]);
    drawDrives(status);
    drawElements(elements);
    try {
      drawJobs(await get("/api/jobs"));
      $("jobs-note").textContent = "";
    } catch (e) {
      drawJobs(null);
      $("jobs-note").textContent = e.message;
    }
    if (polls++ % SLOW_EVERY === 0) {
      const [events, cartridges, library] = await Promise.all([get("/api/events"), get("/api/cartridges"), get("/api/library")]);
      drawEvents(events);
      drawCache(cartridges, library);
    }
    connection("");
  } catch (e) {
    connection(e.message);
  }
  setTimeout(poll, POLL_MS);
}

function actionFields() {
  const box = $("action-fields");
  box.replaceChildren();
  for (const f of ACTIONS[$("action-verb").value]) box.append(el("input", {"name": f, "placeholder": f}));
}

async function act(ev) {
  ev.preventDefault();
  const body = new URLSearchParams({verb: $("action-verb").value});
  for (const i of $("action-fields").querySelectorAll("input")) if (i.value) body.append(i.name, i.value);
  const out = $("action-result");
  try {
    const r = await fetch("/api/action", {method: "POST", headers: headers(), body: body});
    const doc = await r.json();
    out.textContent = doc.ok ? (doc.message || "done") : doc.error;
    out.className = "note " + (doc.ok ? "good" : "bad");
    out.dataset.status = r.status;
  } catch (e) {
    out.textContent = e.message;
    out.className = "note bad";
  }
  polls = 0; // redraw everything now
}

function start() {
  const verb = $("action-verb");
  for (const v of Object.keys(ACTIONS)) verb.append(el("option", {"value": v}, v));
  verb.addEventListener("change", actionFields);
  actionFields();
  $("action-form").addEventListener("submit", act);
  $("token").value = token();
  $("token-form").addEventListener("submit", ev => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value);
    polls = 0;
  });
  // A token in the address's fragment (#token=...) is taken once and removed: it never reaches a server log.
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
    $("token").value = token();
    history.replaceState(null, "", location.pathname);
  }
  poll();
}

document.addEventListener("DOMContentLoaded", start);

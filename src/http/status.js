// The status page's script: polls the JSON API every two seconds and redraws. No dependencies.
"use strict";

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const SVG_NS = "http://www.w3.org/2000/svg";
let selected = null;
let lastHistory = [];
let topicTotal;

async function getJson(path) {
  const response = await fetch(path, { cache: "no-store" });
  return { status: response.status, body: await response.json().catch(() => null) };
}

function fmt(n, digits = 0) {
  if (n === null || n === undefined || Number.isNaN(n)) return "–";
  return Number(n).toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

// A duration given in milliseconds, in µs below one millisecond.
function fmtMs(ms) {
  if (ms === null || ms === undefined) return "–";
  if (ms === 0) return "0";
  return ms < 1 ? `${fmt(ms * 1000)} µs` : `${fmt(ms, ms < 10 ? 2 : 0)} ms`;
}

function fmtBytes(n) {
  if (n === null || n === undefined) return "–";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${fmt(n / 1024, 1)} KiB`;
  return `${fmt(n / 1024 / 1024, 1)} MiB`;
}

function clock(ms, seconds) {
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}` + (seconds ? `:${two(d.getSeconds())}` : "");
}

// The smallest "round" number (1, 2, 2.5, 5 times a power of ten) at or above v.
function niceCeil(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v * 0.9999) return m * p;
  return 10 * p;
}

// A time-series chart as SVG in pixel units: y gridlines with labels, times along the bottom,
// the series as a line over a faint area, the latest point marked. `label` formats y values.
function drawChart(svg, points, color, label, floor) {
  const w = Math.max(svg.clientWidth, 200), h = Math.max(svg.clientHeight, 100);
  const left = 54, right = 8, top = 8, bottom = 18;
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  if (points.length < 2) {
    svg.innerHTML = `<text x="${w / 2}" y="${h / 2}" text-anchor="middle">collecting (one point every 5 s)…</text>`;
    svg.removeAttribute("data-last");
    return;
  }
  const max = niceCeil(Math.max(floor, ...points.map((p) => p.v)));
  const t0 = points[0].t, t1 = points[points.length - 1].t;
  const x = (t) => left + ((t - t0) / Math.max(t1 - t0, 1)) * (w - left - right);
  const y = (v) => top + (1 - v / max) * (h - top - bottom);
  let out = "";
  for (const f of [0, 0.5, 1]) {
    const gy = y(max * f).toFixed(1);
    out += `<line class="grid" x1="${left}" x2="${w - right}" y1="${gy}" y2="${gy}"/>`;
    out += `<text x="${left - 6}" y="${Number(gy) + 3.5}" text-anchor="end">${esc(label(max * f))}</text>`;
  }
  const withSeconds = t1 - t0 < 3 * 60 * 1000;
  out += `<text x="${left}" y="${h - 4}">${clock(t0, withSeconds)}</text>`;
  out += `<text x="${(left + w - right) / 2}" y="${h - 4}" text-anchor="middle">${clock((t0 + t1) / 2, withSeconds)}</text>`;
  out += `<text x="${w - right}" y="${h - 4}" text-anchor="end">${clock(t1, withSeconds)}</text>`;
  const line = points.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(" ");
  const base = y(0).toFixed(1);
  out += `<polygon points="${x(t0).toFixed(1)},${base} ${line} ${x(t1).toFixed(1)},${base}" fill="${color}" fill-opacity="0.13"/>`;
  out += `<polyline class="line" points="${line}" fill="none" stroke="${color}" stroke-width="1.8" stroke-linejoin="round"/>`;
  const last = points[points.length - 1];
  out += `<circle cx="${x(last.t).toFixed(1)}" cy="${y(last.v).toFixed(1)}" r="3" fill="${color}"/>`;
  svg.innerHTML = out;
  svg.setAttribute("data-last", String(last.v));
}

function drawCharts() {
  const series = (key) => lastHistory.map((p) => ({ t: p.at_ms, v: p[key] }));
  const last = lastHistory[lastHistory.length - 1] || {};
  drawChart($("chart-rate"), series("requests_per_second"), "#58a6ff", (v) => fmt(v, v < 10 ? 1 : 0), 1);
  drawChart($("chart-p99"), series("p99_ms"), "#d29922", fmtMs, 0.1);
  drawChart($("chart-conns"), series("connections"), "#a371f7", (v) => fmt(v, 1), 1);
  drawChart($("chart-depth"), series("mailbox_depth"), "#3fb950", (v) => fmt(v, 1), 1);
  $("now-rate").textContent = last.requests_per_second === undefined ? "" : fmt(last.requests_per_second, 1);
  $("now-p99").textContent = last.p99_ms === undefined ? "" : fmtMs(last.p99_ms);
  $("now-conns").textContent = last.connections === undefined ? "" : fmt(last.connections);
  $("now-depth").textContent = last.mailbox_depth === undefined ? "" : fmt(last.mailbox_depth);
}

function renderStats(stats, brokers) {
  const depth = stats.mailbox_depth || {};
  const groups = new Set((brokers || []).map((b) => `${b.cluster}/${b.broker_name}`)).size;
  const clusters = [...new Set((brokers || []).map((b) => b.cluster))].sort();
  const clusterNote = clusters.length > 3 ? `${clusters.slice(0, 3).join(", ")}, …` : clusters.join(", ");
  const cards = [
    ["Brokers", fmt(stats.brokers), `${groups} group${groups === 1 ? "" : "s"}`],
    ["Clusters", fmt(stats.clusters), clusterNote],
    ["Topics", fmt(stats.topics), "with queues"],
    ["Connections", fmt(stats.connections), "brokers and clients"],
    ["Requests / s", fmt(stats.requests_per_second, 1), "last minute"],
    ["p99", fmtMs(stats.p99_ms), "last minute"],
    ["Registry queue", fmt(depth.registry), "messages waiting"],
    ["Route cache", fmtBytes(stats.route_cache_bytes), "encoded routes"],
  ];
  $("cards").innerHTML = cards
    .map(([k, v, sub]) => {
      const [num, unit] = String(v).split(" ");
      return `<div class="card"><div class="k">${k}</div><div class="v">${esc(num)}${unit ? `<small>${esc(unit)}</small>` : ""}</div>` +
        `<div class="sub">${esc(sub) || "&nbsp;"}</div></div>`;
    })
    .join("");
  // The server times its points on a clock that never steps; a point not after the one before
  // (a server older than that) is left out rather than drawn with the axis running backwards.
  lastHistory = [];
  for (const p of stats.history || []) {
    if (!lastHistory.length || p.at_ms > lastHistory[lastHistory.length - 1].at_ms) lastHistory.push(p);
  }
  drawCharts();
}

function heartbeat(b) {
  // How much of its time is used up: for a broker loaded from the route snapshot, the server's
  // own count (its timeout runs from the load), while "ago" is its last heartbeat before that.
  const left = b.expires_in_ms ?? Math.max(b.timeout_ms - b.silent_ms, 0);
  const ratio = Math.min(1 - left / Math.max(b.timeout_ms, 1), 1);
  const cls = ratio < 0.5 ? "ok" : ratio < 0.9 ? "warn" : "bad";
  const secs = b.silent_ms / 1000;
  const ago = secs < 60 ? `${fmt(secs, 1)} s ago` : `${fmt(secs / 60, 1)} min ago`;
  const provisional = b.provisional
    ? ` <span class="provisional" title="loaded from the route snapshot at start; not registered since">` +
      `from snapshot (age ${fmt((b.snapshot_age_ms || 0) / 1000, 0)} s)</span>`
    : "";
  return `<div class="beat"><span class="bar"><i class="${cls}" style="width:${Math.max(ratio * 100, 2).toFixed(1)}%"></i></span>` +
    `<span class="${cls === "ok" ? "" : cls}">${ago}</span>${provisional}</div>`;
}

function renderBrokers(brokers) {
  if (!brokers.length) {
    $("brokers").innerHTML = `<tr><td colspan="7" class="empty">No broker registered.</td></tr>`;
    return;
  }
  const sorted = [...brokers].sort((a, b) =>
    a.cluster.localeCompare(b.cluster) || a.broker_name.localeCompare(b.broker_name) || a.broker_id - b.broker_id);
  const rows = [];
  let cluster = null, group = null;
  for (const b of sorted) {
    if (b.cluster !== cluster) {
      cluster = b.cluster;
      group = null;
      const members = sorted.filter((o) => o.cluster === cluster);
      const groups = new Set(members.map((o) => o.broker_name)).size;
      rows.push(`<tr class="cluster"><td colspan="7">${esc(cluster)}<span class="count">${groups} group${groups === 1 ? "" : "s"} · ` +
        `${members.length} broker${members.length === 1 ? "" : "s"}</span></td></tr>`);
    }
    const repeat = b.broker_name === group;
    group = b.broker_name;
    const role = b.broker_id === 0 ? `<span class="role master">master</span>` : `<span class="role">slave ${b.broker_id}</span>`;
    rows.push(
      `<tr class="broker"><td class="${repeat ? "repeat" : ""}">${esc(b.broker_name)}</td><td>${role}</td>` +
      `<td class="addr">${esc(b.addr)}</td><td class="num" title="RocketMQ version code">${esc(b.version)}</td><td>${heartbeat(b)}</td>` +
      `<td class="num">${fmt(b.topics)}</td><td class="num">${esc(b.conn)}</td></tr>`);
  }
  $("brokers").innerHTML = rows.join("");
}

async function renderTopics() {
  const q = $("search").value.trim();
  const { body } = await getJson(`/api/v1/topics?q=${encodeURIComponent(q)}&limit=200`);
  const topics = (body && body.topics) || [];
  $("topics").innerHTML = topics.length
    ? topics.map((t) => `<span class="topic${t === selected ? " sel" : ""}" data-topic="${esc(t)}">${esc(t)}</span>`).join("")
    : `<div class="empty">No topic${q ? ` contains “${esc(q)}” (the search is case-sensitive)` : ""}.</div>`;
  const shown = topics.length >= 200 ? "first 200" : fmt(topics.length);
  $("topic-count").textContent = q ? `${shown} matching` : `${shown}${topicTotal !== undefined ? ` of ${fmt(topicTotal)}` : ""} topics`;
  if (selected) await renderRoute(selected);
}

function perm(p) {
  const r = p & 4, w = p & 2;
  return r && w ? "read-write" : r ? "read only" : w ? "write only" : "none";
}

async function renderRoute(topic) {
  const { status, body } = await getJson(`/api/v1/topics/${encodeURIComponent(topic)}/route`);
  if (status !== 200 || !body) {
    $("route").innerHTML = `<div class="empty"><code>${esc(topic)}</code>: no route (status ${status}).</div>`;
    return;
  }
  const groups = new Map((body.brokerDatas || []).map((g) => [g.brokerName, g]));
  const rows = (body.queueDatas || []).map((q) => {
    const g = groups.get(q.brokerName) || {};
    const addrs = Object.entries(g.brokerAddrs || {}).sort(([a], [b]) => Number(a) - Number(b));
    const master = addrs.filter(([id]) => id === "0").map(([, a]) => esc(a)).join("") || `<span class="warn">none</span>`;
    const slaves = addrs.filter(([id]) => id !== "0").map(([id, a]) => `${esc(a)} <span class="id">#${esc(id)}</span>`).join("<br>") || "–";
    return `<tr><td>${esc(q.brokerName)}</td><td class="addr">${master}</td><td class="addr">${slaves}</td>` +
      `<td class="num">${q.readQueueNums} / ${q.writeQueueNums}</td><td>${perm(q.perm)}</td></tr>`;
  });
  const clusters = [...new Set((body.brokerDatas || []).map((g) => g.cluster))].sort().join(", ");
  $("route").innerHTML = `<h3>Route of <code>${esc(topic)}</code> <span class="in">in ${esc(clusters)}</span></h3>` +
    `<table><thead><tr><th>Group</th><th>Master</th><th>Slaves</th><th class="num">Queues r / w</th><th>Perm</th></tr></thead>` +
    `<tbody>${rows.join("")}</tbody></table>`;
}

// The controller's broker groups (RocketMQ 5 controller mode), when this server runs one.
function renderController(c) {
  $("controller-section").hidden = !(c && c.enabled);
  if (!c || !c.enabled) return;
  const leader = c.serving ? "this peer leads" : c.leader ? `leader ${esc(c.leader)} (${esc(c.leader_address || "")})` : "no leader known";
  $("controller-note").innerHTML = `group ${esc(c.group)} · peer ${esc(c.peer)} · ` +
    `<span class="${c.serving || c.leader ? "" : "bad"}">${leader}</span>`;
  const groups = c.groups || [];
  if (!groups.length) {
    $("controller").innerHTML = `<tr><td colspan="7" class="empty">No broker group registered with the controller.</td></tr>`;
    return;
  }
  $("controller").innerHTML = groups.map((g) => {
    const master = g.master_broker_id === null
      ? `<span class="bad">none</span>`
      : `${esc(g.master_address || "")} <span class="id">#${esc(g.master_broker_id)}</span>`;
    const replicas = (g.replicas || []).map((r) =>
      `<span class="${r.alive ? "ok" : "bad"}" title="${r.alive ? "alive" : "not heard from"}">#${esc(r.broker_id)}</span>`).join(" ");
    return `<tr><td>${esc(g.broker_name)}</td><td>${esc(g.cluster)}</td><td class="addr">${master}</td>` +
      `<td class="num">${fmt(g.master_epoch)}</td><td class="num">${fmt(g.sync_state_set_epoch)}</td>` +
      `<td>${(g.sync_state_set || []).map((id) => `#${esc(id)}`).join(" ")}</td><td>${replicas}</td></tr>`;
  }).join("");
}

async function probe(path, el, okText, badText) {
  try {
    const { status } = await getJson(path);
    el.textContent = status === 200 ? okText : badText;
    el.className = "pill " + (status === 200 ? "ok" : "bad");
  } catch (e) {
    el.textContent = "unreachable";
    el.className = "pill bad";
  }
}

async function refresh() {
  try {
    const [stats, brokers] = await Promise.all([getJson("/api/v1/stats"), getJson("/api/v1/brokers")]);
    if (stats.body) {
      topicTotal = stats.body.topics;
      renderStats(stats.body, brokers.body);
    }
    if (brokers.body) renderBrokers(brokers.body);
    const controller = await getJson("/api/v1/controller");
    renderController(controller.body);
    await Promise.all([
      probe("/livez", $("live"), "live", "not live"),
      probe("/readyz", $("ready"), "ready", "not ready"),
      renderTopics(),
    ]);
    $("updated").textContent = "updated " + clock(Date.now(), true);
    $("updated").className = "fresh";
    document.body.dataset.loaded = "true";
  } catch (e) {
    $("updated").textContent = "update failed: " + e;
    $("updated").className = "stale";
  }
}

$("host").textContent = location.host;
$("topics").addEventListener("click", (event) => {
  const topic = event.target.dataset && event.target.dataset.topic;
  if (topic) {
    selected = topic;
    renderTopics();
  }
});
let typing = null;
$("search").addEventListener("input", () => {
  clearTimeout(typing);
  typing = setTimeout(() => renderTopics(), 150);
});
window.addEventListener("resize", drawCharts);
refresh();
setInterval(refresh, 2000);

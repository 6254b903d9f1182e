/* exploreval episode viewer: list, filter and step through episodes. No dependencies.
 *
 * Data arrive as scripts calling EXV.receive(key, data) (works from file:// and any server):
 *   data/runs.js -> "runs"; data/<k>/index.js -> "index:<k>"; data/<k>/ep/<c>.js -> "chunk:<k>:<c>";
 *   data/<k>/m/<i>.js -> "metric:<k>:<i>" (metric i's values, loaded when a range or sort needs it).
 * Routes (location.hash):
 *   #/list?run=..&suite=..&env=..&preset=..&agent=..&success=1|0&errors=1|0&m=metric:min:max&page=N
 *   #/run/<run_id>/episode/<episode_id>[/step/<t>]
 */
"use strict";
(function () {
  const PAGE = 100;
  const waiting = {};   // key -> [resolve, reject]
  const received = {};  // key -> data
  const EXV = (window.EXV = {
    receive(key, data) {
      if (key === null) key = document.currentScript.dataset.key;  // position-free cached files
      received[key] = data;
      if (waiting[key]) { waiting[key][0](data); delete waiting[key]; }
    },
  });

  const pending = {};   // key -> promise, so two requests for one file share one <script>
  function load(src, key) {
    if (received[key] !== undefined) return Promise.resolve(received[key]);
    if (pending[key]) return pending[key];
    pending[key] = new Promise((resolve, reject) => {
      waiting[key] = [resolve, reject];
      const tag = document.createElement("script");
      tag.src = src;
      tag.dataset.key = key;
      const done = () => { tag.remove(); delete pending[key]; };
      tag.onerror = () => { delete waiting[key]; done(); reject(new Error("could not load " + src)); };
      tag.onload = () => { done(); if (waiting[key]) { delete waiting[key]; reject(new Error(src + " did not provide " + key)); } };
      document.head.appendChild(tag);
    });
    return pending[key];
  }

  // -- small DOM helpers ------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (k === "text") node.textContent = v;
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }
  const app = () => document.getElementById("app");
  const show = (...nodes) => app().replaceChildren(...nodes.filter((x) => x !== null && x !== undefined));
  const fmt = (v) => (v === null || v === undefined ? "–" : typeof v === "number" && !Number.isInteger(v) ? String(+v.toPrecision(4)) : String(v));

  // -- data -------------------------------------------------------------------------------------
  const state = { runs: null, chunk: 1, indexes: [], filtered: null, listHash: "#/list", selected: 0 };

  async function boot() {
    const runs = await load("data/runs.js", "runs");
    state.runs = runs.runs;
    state.chunk = runs.chunk;
    state.indexes = await Promise.all(state.runs.map((r, k) => load(`data/${k}/index.js`, `index:${k}`)));
    state.indexes.forEach(decode);
    window.addEventListener("hashchange", route);
    document.addEventListener("keydown", onKey);
    route();
  }

  function decode(ix) {
    const c = ix.columns;
    ix.text = (name, row) => c[name].values[c[name].codes[row]];
    ix.rowOf = null;
    ix.metrics = {};  // name -> values, filled by needMetrics
  }

  /** Load the values of the named metrics that a run has and the page has not loaded yet. */
  function needMetrics(names) {
    const loads = [];
    state.indexes.forEach((ix, k) => {
      for (const name of new Set(names)) {
        const i = ix.metric_names.indexOf(name);
        if (i < 0 || ix.metrics[name]) continue;
        loads.push(load(`data/${k}/m/${i}.js`, `metric:${k}:${i}`).then((m) => {
          if (m.error) throw new Error(m.error);
          if (m.name !== name) throw new Error(`run ${ix.run_id}'s index changed since this page loaded it (metric ${i} is now ${m.name}, not ${name}); reload the page`);
          ix.metrics[name] = m.values;
        }));
      }
    });
    return Promise.all(loads);
  }

  /** The metrics a list's filters, sort and extra columns read. */
  function metricsOf(f) {
    return [...f.ranges.map((r) => r.name), f.sort.replace(/^-/, "")].filter(Boolean);
  }

  function rowOf(k, id) {
    const ix = state.indexes[k];
    if (!ix.rowOf) { ix.rowOf = new Map(); ix.columns.id.forEach((eid, row) => ix.rowOf.set(eid, row)); }
    return ix.rowOf.get(id);
  }

  function episode(k, row) {
    const c = Math.floor(row / state.chunk);
    const run = state.runs[k];
    const missing = () => new Error(`episode ${state.indexes[k].columns.id[row]} is not in this bundle (it holds ${run.bundled} of ${run.n} episodes of run ${run.run_id}); ` +
      `serve the whole run with: exploreval view ${run.dir}`);
    return load(`data/${k}/ep/${c}.js`, `chunk:${k}:${c}`).then(
      (d) => { const ep = d.episodes[String(row)]; if (!ep) throw missing(); return ep; },
      (err) => { throw run.bundled < run.n ? missing() : err; });
  }

  // -- filters ----------------------------------------------------------------------------------
  const TEXT_FILTERS = ["suite", "env", "preset", "condition", "agent"];

  function parseFilters(query) {
    const p = new URLSearchParams(query || "");
    const f = { run: p.get("run") || "", success: p.get("success") || "", errors: p.get("errors") || "", page: Math.max(0, parseInt(p.get("page") || "0", 10) || 0), sort: p.get("sort") || "", ranges: [] };
    for (const name of TEXT_FILTERS) f[name] = p.get(name) || "";
    for (const m of p.getAll("m")) {
      const [name, lo, hi] = m.split(":");
      if (name) f.ranges.push({ name, lo: lo === "" || lo === undefined ? null : Number(lo), hi: hi === "" || hi === undefined ? null : Number(hi) });
    }
    return f;
  }

  function filterHash(f) {
    const p = new URLSearchParams();
    if (f.run) p.set("run", f.run);
    for (const name of TEXT_FILTERS) if (f[name]) p.set(name, f[name]);
    if (f.success) p.set("success", f.success);
    if (f.errors) p.set("errors", f.errors);
    for (const r of f.ranges) p.append("m", `${r.name}:${r.lo ?? ""}:${r.hi ?? ""}`);
    if (f.sort) p.set("sort", f.sort);
    if (f.page) p.set("page", String(f.page));
    const q = p.toString();
    return "#/list" + (q ? "?" + q : "");
  }

  function applyFilters(f) {
    const out = [];  // pairs k, row flattened
    state.indexes.forEach((ix, k) => {
      if (f.run && ix.run_id !== f.run) return;
      const c = ix.columns;
      const want = {};
      for (const name of TEXT_FILTERS) {
        if (!f[name]) continue;
        want[name] = c[name].values.indexOf(f[name]);
        if (want[name] < 0) return;  // no row of this run can match
      }
      const ranges = f.ranges.map((r) => ({ ...r, col: columnOf(ix, r.name) }));
      if (ranges.some((r) => !Array.isArray(r.col))) return;  // this run has no such metric
      const succ = f.success === "" ? -1 : Number(f.success);
      const errs = f.errors === "" ? -1 : Number(f.errors);
      outer: for (let row = 0; row < ix.n; row++) {
        for (const name in want) if (c[name].codes[row] !== want[name]) continue outer;
        if (succ >= 0 && c.success[row] !== succ) continue;
        if (errs >= 0 && c.has_errors[row] !== errs) continue;
        for (const r of ranges) {
          const v = r.col[row];
          if (v === null || v === undefined) continue outer;
          if (r.lo !== null && v < r.lo) continue outer;
          if (r.hi !== null && v > r.hi) continue outer;
        }
        out.push(k, row);
      }
    });
    return out;
  }

  const LIST_NUMBERS = { steps: "steps", invalid: "invalid", reward: "reward", tokens: "tokens" };

  function columnOf(ix, name) { return ix.metrics[name] || ix.columns[name]; }

  /** The default order: by run, env, preset, seed and repeat (as the run was planned), not the
   *  order episodes finished in; ties keep the log's order (the agents, as listed in the spec). */
  function planOrder(pairs) {
    const text = (ix, name, row) => { const c = ix.columns[name]; return c ? c.values[c.codes[row]] : ""; };
    const order = [];
    for (let i = 0; i < pairs.length; i += 2) {
      const ix = state.indexes[pairs[i]], row = pairs[i + 1];
      order.push([pairs[i], text(ix, "env", row), text(ix, "preset", row), ix.columns.seed[row] ?? 0, ix.columns.repeat[row] ?? 0, i, row]);
    }
    order.sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]) || a[2].localeCompare(b[2]) || a[3] - b[3] || a[4] - b[4] || a[5] - b[5]);
    const out = [];
    for (const o of order) out.push(o[0], o[6]);
    return out;
  }

  /** Sort (run, row) pairs by a list column or metric; "-name" descending; missing values last. */
  function sortRows(pairs, sort) {
    if (!sort) return planOrder(pairs);
    const desc = sort.startsWith("-"), name = desc ? sort.slice(1) : sort;
    const order = [];
    for (let i = 0; i < pairs.length; i += 2) {
      const col = columnOf(state.indexes[pairs[i]], name);
      const v = col ? col[pairs[i + 1]] : null;
      order.push([v === null || v === undefined ? null : v, pairs[i], pairs[i + 1]]);
    }
    order.sort((a, b) => {
      if (a[0] === null) return b[0] === null ? 0 : 1;
      if (b[0] === null) return -1;
      return desc ? b[0] - a[0] : a[0] - b[0];
    });
    const out = [];
    for (const [, k, row] of order) out.push(k, row);
    return out;
  }

  function optionValues(name) {
    const seen = new Set();
    for (const ix of state.indexes) for (const v of ix.columns[name].values) seen.add(v);
    return [...seen].sort();
  }

  function metricNames() {
    const seen = new Set(["steps", "invalid", "reward", "tokens", "cost", "retries"]);
    for (const ix of state.indexes) for (const m of ix.metric_names) seen.add(m);
    return [...seen].sort();
  }

  // -- list view ---------------------------------------------------------------------------------
  async function renderList(query, seq) {
    const f = parseFilters(query);
    state.listHash = filterHash({ ...f, page: f.page });
    await needMetrics(metricsOf(f));
    if (seq !== routeSeq) return;
    const rows = sortRows(applyFilters(f), f.sort);
    state.filtered = rows;
    const total = state.indexes.reduce((s, ix) => s + ix.n, 0);
    const n = rows.length / 2;
    const pages = Math.max(1, Math.ceil(n / PAGE));
    const page = Math.min(f.page, pages - 1);
    const go = (change) => { location.hash = filterHash({ ...f, ...change, page: change.page ?? 0 }); };

    const select = (name, label, values, labels) => el("label", {}, label,
      el("select", { id: "f-" + name, onchange: (e) => go({ [name]: e.target.value }) },
        ...values.map((v, i) => el("option", { value: v, selected: f[name] === v }, labels ? labels[i] : v || "any"))));
    const runSel = state.runs.length > 1
      ? select("run", "run", ["", ...state.runs.map((r) => r.run_id)], ["any", ...state.runs.map((r) => (r.name ? `${r.name} (${r.run_id})` : r.run_id))])
      : null;
    const metricSel = el("select", { id: "f-metric" }, ...metricNames().map((m) => el("option", { value: m }, m)));
    const lo = el("input", { id: "f-min", class: "num", type: "number", step: "any", placeholder: "min" });
    const hi = el("input", { id: "f-max", class: "num", type: "number", step: "any", placeholder: "max" });
    const addRange = (e) => {
      e.preventDefault();
      const r = { name: metricSel.value, lo: lo.value === "" ? null : Number(lo.value), hi: hi.value === "" ? null : Number(hi.value) };
      if (r.lo === null && r.hi === null) return;
      go({ ranges: [...f.ranges.filter((x) => x.name !== r.name), r] });
    };
    const form = el("form", { id: "filters", onsubmit: addRange },
      runSel,
      ...TEXT_FILTERS.map((name) => select(name, name, ["", ...optionValues(name)])),
      select("success", "success", ["", "1", "0"], ["any", "yes", "no"]),
      select("errors", "has errors", ["", "1", "0"], ["any", "yes", "no"]),
      el("label", {}, "metric range", el("span", {}, metricSel, " ", lo, " – ", hi, " ", el("button", { id: "f-add", type: "submit" }, "add"))),
      el("a", { href: "#/list" }, "clear"));
    const chips = el("div", { class: "chips" }, ...f.ranges.map((r) => el("span", { class: "range" },
      `${r.lo ?? "−∞"} ≤ ${r.name} ≤ ${r.hi ?? "∞"}`,
      el("button", { title: "remove", onclick: () => go({ ranges: f.ranges.filter((x) => x !== r) }) }, "×"))));

    const multi = state.runs.length > 1;
    const extra = f.ranges.map((r) => r.name).filter((m) => !LIST_NUMBERS[m]);
    const sorted = f.sort.replace(/^-/, "");  // a metric sorted on is shown, with its mark
    if (sorted && !LIST_NUMBERS[sorted] && sorted !== "seed" && sorted !== "success" && !extra.includes(sorted)) extra.push(sorted);
    const sortable = (label, column) => {
      const mark = f.sort === column ? " ▲" : f.sort === "-" + column ? " ▼" : "";
      const next = f.sort === column ? "-" + column : f.sort === "-" + column ? "" : column;
      return el("th", { class: "sortable", "data-sort": column, title: "sort", onclick: () => go({ sort: next }) }, label + mark);
    };
    // the condition (env options, as the report labels it) when any episode has one: rows that
    // differ only by it would otherwise look like duplicates
    const conditions = state.indexes.some((ix) => (ix.columns.condition?.values || []).some((v) => v));
    const head = el("tr", {}, ...[multi ? "run" : null, "suite", "env", "preset", conditions ? "condition" : null].filter(Boolean).map((h) => el("th", {}, h)),
      sortable("seed", "seed"), el("th", {}, "rep"), el("th", {}, "agent"), sortable("success", "success"),
      ...Object.entries(LIST_NUMBERS).map(([column, label]) => sortable(label, column)),
      el("th", {}, "status"), ...extra.map((m) => sortable(m, m)));
    const body = el("tbody");
    const start = page * PAGE;
    for (let i = start; i < Math.min(n, start + PAGE); i++) {
      const k = rows[2 * i], row = rows[2 * i + 1], ix = state.indexes[k], c = ix.columns;
      const href = `#/run/${encodeURIComponent(ix.run_id)}/episode/${encodeURIComponent(c.id[row])}`;
      const tr = el("tr", { "data-href": href, "data-episode": c.id[row], onclick: () => { location.hash = href; } },
        multi ? el("td", { title: ix.run_id }, ix.name || ix.run_id) : null,
        el("td", {}, ix.text("suite", row)), el("td", {}, ix.text("env", row).replace(/^exploreval\//, "")),
        el("td", {}, ix.text("preset", row)), conditions ? el("td", { class: "condition" }, ix.text("condition", row) || "–") : null,
        el("td", { class: "num" }, fmt(c.seed[row])), el("td", { class: "num" }, fmt(c.repeat[row])),
        el("td", {}, ix.text("agent", row)),
        el("td", { class: c.success[row] ? "yes" : "no" }, c.success[row] ? "yes" : "no"),
        ...Object.keys(LIST_NUMBERS).map((column) => el("td", { class: "num" }, fmt(c[column][row]))),
        el("td", { class: ix.text("status", row) === "ok" ? "" : "no" }, ix.text("status", row)),
        ...extra.map((m) => el("td", { class: "num", "data-metric": m }, fmt((ix.metrics[m] || [])[row]))));
      body.append(tr);
    }
    state.selected = Math.min(state.selected, Math.max(0, body.children.length - 1));
    const pager = el("div", { class: "pager" },
      el("button", { id: "prev-page", disabled: page === 0, onclick: () => go({ ...f, page: page - 1 }) }, "‹ prev"),
      el("span", {}, `page ${page + 1} of ${pages}`),
      el("button", { id: "next-page", disabled: page >= pages - 1, onclick: () => go({ ...f, page: page + 1 }) }, "next ›"));
    const issues = state.indexes.flatMap((ix) => ix.issues.map((m) => `${ix.run_id}: ${m}`));
    show(form, chips,
      el("div", { id: "count" }, `${n.toLocaleString("en")} of ${total.toLocaleString("en")} episodes`),
      issues.length ? el("div", { class: "error" }, issues.join("\n")) : null,
      el("table", { class: "list", id: "episodes" }, el("thead", {}, head), body), pager);
    document.getElementById("where").textContent = state.runs.map((r) => r.name || r.run_id).join(", ");
    markSelected();
  }

  function markSelected() {
    const trs = document.querySelectorAll("#episodes tbody tr");
    trs.forEach((tr, i) => tr.classList.toggle("sel", i === state.selected));
    if (trs[state.selected]) trs[state.selected].scrollIntoView({ block: "nearest" });
  }

  // -- episode view ------------------------------------------------------------------------------
  const cur = { k: -1, row: -1, ep: null, step: 0 };

  let routeSeq = 0;  // a newer navigation makes a slower, older one drop its result

  async function renderEpisode(runId, episodeId, step, seq) {
    const k = state.indexes.findIndex((ix) => ix.run_id === runId);
    if (k < 0) throw new Error(`no run ${runId} in this viewer (runs: ${state.indexes.map((ix) => ix.run_id).join(", ")})`);
    const row = rowOf(k, episodeId);
    if (row === undefined) throw new Error(`run ${runId} has no episode ${episodeId}`);
    if (cur.k !== k || cur.row !== row) {
      app().replaceChildren(el("p", { class: "loading" }, "Loading episode…"));
      const ep = await episode(k, row);
      if (seq !== routeSeq) return;
      cur.ep = ep; cur.k = k; cur.row = row;
    }
    const last = Math.max(0, cur.ep.steps.length - 1);
    cur.step = Math.min(Math.max(0, step || 0), last);
    drawEpisode();
  }

  // One definition of "steps" everywhere (viewer, report, tables): every action the agent took,
  // numbered from 0 (the env's "Step 8" is step 8), split by phase when the episode has several.
  function stepCount(ep) {
    const n = ep.steps.length;
    const phases = {};
    for (const st of ep.steps) phases[st.phase] = (phases[st.phase] || 0) + 1;
    const names = Object.keys(phases);
    const split = names.length > 1 ? " (" + names.map((p) => `${phases[p]} ${p}`).join(" + ") + ")" : "";
    const perTask = (ep.tasks || []).length > 1 ? " per task" : "";
    return `${n} steps${split}${ep.max_steps ? " · cap " + ep.max_steps + perTask : ""}`;
  }

  function stepHash(step) {
    const ix = state.indexes[cur.k];
    return `#/run/${encodeURIComponent(ix.run_id)}/episode/${encodeURIComponent(cur.ep.episode_id)}/step/${step}`;
  }

  function panel(title, ...content) { return el("section", { class: "panel" }, el("h3", {}, title), ...content); }
  // --history mem0 | langmem | amem: what the memory system recalled and stored this step, and
  // what it cost (docs/memory.md). Text only (textContent), like every other panel.
  function memoryPanel(m) {
    if (!m) return null;
    const list = (items, id) => items && items.length
      ? el("ul", { id }, ...items.map((x) => el("li", {}, String(x))))
      : el("p", { class: "muted", id }, "nothing");
    const facts = kv([
      ["model calls", `${m.model_calls} (${m.cached_calls} from the cache)`],
      ["tokens", `${m.prompt_tokens} prompt, ${m.completion_tokens} completion`],
      ["embeddings", `${m.embed_calls} (${m.embed_cached} from the cache)`],
      ["time", `${m.seconds} s`],
    ]);
    return panel(`memory (${m.backend})`, el("div", { id: "memory" },
      el("div", { class: "muted" }, "recalled (shown under the observation)"), list(m.recalled, "memory-recalled"),
      el("div", { class: "muted" }, "stored after the reply"), list(m.stored, "memory-stored"),
      facts,
      m.errors && m.errors.length ? el("div", { id: "memory-errors" }, el("div", { class: "muted" }, "errors"), list(m.errors)) : null));
  }

  function pre(text, id) { return el("pre", { id }, text === null || text === undefined ? "–" : String(text)); }
  function kv(pairs) {
    return el("table", { class: "kv" }, ...pairs.filter((p) => p).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, v instanceof Node ? v : fmt(v)))));
  }

  function viewNode(view) {
    if (!view) return el("p", { class: "muted" }, "This suite registers no picture for its steps.");
    if (view.kind === "error") return el("p", { class: "error" }, "step view failed: " + view.content);
    const box = el("div", { class: "view", id: "step-view" });
    if (view.kind === "text") box.append(pre(view.content));
    else box.innerHTML = view.content;  // server-rendered, escaped markup (report.Svg)
    return el("div", {}, box, view.caption ? el("div", { class: "muted", id: "view-caption" }, view.caption) : null);
  }

  /** The condition of the episode at (k, row), as the list shows it ("" when none). */
  function condition(k, row) {
    const ix = state.indexes[k];
    return ix && ix.columns.condition ? ix.text("condition", row) : "";
  }

  function drawEpisode() {
    const ep = cur.ep, s = ep.steps[cur.step], n = ep.steps.length;
    const head = el("div", { class: "ep-head" },
      el("a", { href: state.listHash, id: "back" }, "‹ list"),
      el("h2", {}, `${ep.env_id.replace(/^exploreval\//, "")} · ${ep.preset ?? "–"} · seed ${ep.seed} · rep ${ep.repeat}`),
      condition(cur.k, cur.row) ? el("span", { id: "ep-condition" }, "condition ", el("b", {}, condition(cur.k, cur.row))) : null,
      el("span", {}, "agent ", el("b", {}, ep.agent.name)),
      el("span", { class: ep.success ? "yes" : "no", id: "ep-success" }, ep.success ? "solved" : "not solved"),
      el("span", { id: "ep-steps" }, stepCount(ep)),
      el("span", {}, `reward ${fmt(ep.total_reward)}`),
      el("span", {}, `tokens ${ep.usage.prompt_tokens} in / ${ep.usage.completion_tokens} out, ${ep.usage.calls} calls`),
      el("span", { class: "muted" }, ep.episode_id));
    const parts = [head];
    if (ep.status !== "ok") parts.push(el("p", { class: "error", id: "ep-error" }, `episode ${ep.status}: ${ep.error ?? ""}`));
    for (const [name, msg] of Object.entries(ep.annotation_errors || {})) parts.push(el("p", { class: "error" }, `annotations ${name} failed: ${msg}`));
    for (const j of ep.judgements || []) {
      // a model's judgement of the whole episode (score --judge-model), with its evidence
      const answered = j.category ? `${j.classification} · ${j.category}` : "";
      const verdict = j.error ? `no valid choice: ${j.error}${answered ? " (it answered " + answered + ")" : ""}` : answered;
      parts.push(el("div", { class: "judgement", id: "ep-judgement" },
        el("b", {}, `judged by ${j.judge_model ?? "a model"} (${j.table}): `), verdict,
        j.evidence ? el("div", { class: "muted" }, "evidence: “", j.evidence, "”") : null,
        j.discovery_steps ? el("div", { class: "muted" }, `discovery turns (1-based): ${j.discovery_steps}`) : null));
    }
    if (!s) {
      parts.push(panel("initial observation", pre(ep.initial_observation, "observation")), panel("picture", viewNode(ep.initial_view)));
      show(...parts);
      return;
    }
    const slider = el("input", { type: "range", min: 0, max: n - 1, value: cur.step, id: "step-slider", oninput: (e) => { location.hash = stepHash(e.target.value); } });
    parts.push(el("div", { class: "stepnav" },
      el("button", { id: "prev-step", disabled: cur.step === 0, onclick: () => moveStep(-1) }, "‹ k"),
      el("span", { id: "step-label" }, `step ${s.t} · ${cur.step + 1} of ${n}${s.phase !== "task" ? " · " + s.phase : ""}${s.task ? " · task " + s.task : ""}`),
      el("button", { id: "next-step", disabled: cur.step >= n - 1, onclick: () => moveStep(1) }, "j ›"),
      slider));
    const strip = el("div", { class: "strip", id: "strip" });
    ep.steps.forEach((st, i) => {
      const cls = [!st.valid ? "invalid" : st.annotations["tide.loop"] ? "loop" : "", i === cur.step ? "cur" : ""].join(" ").trim();
      strip.append(el("span", { class: cls, title: `step ${st.t}: ${st.action}`, onclick: () => { location.hash = stepHash(i); } }));
    });
    parts.push(strip, el("div", { class: "strip-legend", id: "strip-legend" },
      el("span", {}, el("i", {}), "valid action"), el("span", {}, el("i", { class: "invalid" }), "invalid action"),
      el("span", {}, el("i", { class: "loop" }), "in a loop (TIDE's Loop Ratio counts it)"), el("span", {}, el("i", { class: "cur" }), "this step")));

    const u = s.usage;
    const action = el("div", {},
      el("code", { id: "action" }, s.action), " ",
      el("span", { class: "badge " + (s.valid ? "valid" : "invalid"), id: "validity" }, s.valid ? "valid" : "invalid"),
      s.invalid_reason ? el("span", { id: "invalid-reason" }, " " + s.invalid_reason) : null);
    const facts = kv([
      ["action", action],
      ["reward", s.reward],
      s.terminated || s.truncated ? ["ended", s.terminated ? "terminated" : "truncated"] : null,
      ["tokens", u ? `${u.prompt_tokens} prompt, ${u.completion_tokens} completion${u.reasoning_tokens ? ", " + u.reasoning_tokens + " reasoning" : ""}` : "–"],
      ["retries", s.retries], ["latency", s.latency_s ? s.latency_s + " s" : "–"], s.cached ? ["cached", "yes"] : null,
    ]);
    const ann = Object.entries(s.annotations);
    const annTable = ann.length ? kv(ann) : el("p", { class: "muted" }, "no per-step metrics registered for this suite");
    annTable.id = "annotations";
    const prompt = s.prompt
      ? el("details", { id: "prompt" }, el("summary", {}, `${s.prompt.length} messages`),
        ...s.prompt.map(([role, m]) => el("div", { class: "msg " + role }, el("div", { class: "role" }, role), pre(ep.messages[m]))))
      : el("p", { class: "muted", id: "prompt" }, s.prompt_error || "no prompt (scripted agent)");
    const after = cur.step === n - 1 && ep.final_observation ? panel("observation after the last step", pre(ep.final_observation, "final-observation")) : null;
    const left = el("div", {}, panel(`picture after step ${s.t}`, viewNode(s.view)), panel("step", facts), panel("per-step metrics", annTable));
    const right = el("div", {},
      panel("observation (before the action)", pre(s.observation, "observation")), after,
      panel("raw output", pre(s.raw_output, "raw-output")),
      s.reasoning ? panel("reasoning", pre(s.reasoning, "reasoning")) : null,
      panel("prompt as sent", prompt),
      memoryPanel(s.agent_info && s.agent_info.memory),
      panel("info", el("details", {}, el("summary", {}, "env info and agent info"), pre(JSON.stringify({ info: s.info, agent_info: s.agent_info }, null, 1)))));
    parts.push(el("div", { class: "cols" }, left, right));
    show(...parts);
    // the episode's id (its first 8 characters, as the report's links print it), not its row: a
    // row number differs between `exploreval view` (every episode) and a report's bundle
    const ix = state.indexes[cur.k];
    document.getElementById("where").textContent = `${ix.name || ix.run_id} · episode ${ix.columns.id[cur.row].slice(0, 8)}`;
  }

  function moveStep(delta) {
    const n = cur.ep.steps.length;
    const next = Math.min(Math.max(0, cur.step + delta), Math.max(0, n - 1));
    if (next !== cur.step) location.hash = stepHash(next);
  }

  async function moveEpisode(delta) {
    if (!state.filtered) {
      const f = parseFilters(state.listHash.split("?")[1]);
      await needMetrics(metricsOf(f));
      state.filtered = sortRows(applyFilters(f), f.sort);
    }
    const rows = state.filtered;
    let pos = -1;
    for (let i = 0; i < rows.length; i += 2) if (rows[i] === cur.k && rows[i + 1] === cur.row) { pos = i / 2; break; }
    const next = pos + delta;
    if (next < 0 || next >= rows.length / 2) return;
    const ix = state.indexes[rows[2 * next]];
    location.hash = `#/run/${encodeURIComponent(ix.run_id)}/episode/${encodeURIComponent(ix.columns.id[rows[2 * next + 1]])}`;
  }

  // -- routing and keys ---------------------------------------------------------------------------
  async function route() {
    const seq = ++routeSeq;
    const hash = location.hash || "#/list";
    try {
      const m = hash.match(/^#\/run\/([^/]+)\/episode\/([^/]+)(?:\/step\/(\d+))?$/);
      if (m) {
        await renderEpisode(decodeURIComponent(m[1]), decodeURIComponent(m[2]), m[3] ? parseInt(m[3], 10) : 0, seq);
        return;
      }
      cur.k = -1;
      const q = hash.startsWith("#/list") ? hash.slice(6).replace(/^\?/, "") : "";
      await renderList(q, seq);
    } catch (err) {
      if (seq !== routeSeq) return;
      showError(err);
    }
  }

  function showError(err) {
    app().replaceChildren(el("p", { class: "error", id: "route-error" }, String(err.message || err)), el("a", { href: "#/list" }, "back to the list"));
  }

  function onKey(e) {
    const t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) {
      if (e.key === "Escape") t.blur();
      return;
    }
    const onEpisode = cur.k >= 0 && cur.ep;
    const key = e.key;
    if (key === "/") {
      e.preventDefault();
      if (onEpisode) { location.hash = state.listHash; setTimeout(() => focusFilter(), 0); } else focusFilter();
      return;
    }
    if (onEpisode) {
      if (key === "j" || key === "ArrowRight" || key === "ArrowDown") { e.preventDefault(); moveStep(1); }
      else if (key === "k" || key === "ArrowLeft" || key === "ArrowUp") { e.preventDefault(); moveStep(-1); }
      else if (key === "n") moveEpisode(1).catch(showError);
      else if (key === "p") moveEpisode(-1).catch(showError);
      else if (key === "u" || key === "Escape") location.hash = state.listHash;
      return;
    }
    const trs = document.querySelectorAll("#episodes tbody tr");
    if (key === "j" || key === "ArrowDown") { e.preventDefault(); state.selected = Math.min(trs.length - 1, state.selected + 1); markSelected(); }
    else if (key === "k" || key === "ArrowUp") { e.preventDefault(); state.selected = Math.max(0, state.selected - 1); markSelected(); }
    else if (key === "Enter" && trs[state.selected]) location.hash = trs[state.selected].dataset.href;
    else if (key === "n") { const b = document.getElementById("next-page"); if (b && !b.disabled) { state.selected = 0; b.click(); } }
    else if (key === "p") { const b = document.getElementById("prev-page"); if (b && !b.disabled) { state.selected = 0; b.click(); } }
  }

  function focusFilter() { const s = document.querySelector("#filters select"); if (s) s.focus(); }

  window.addEventListener("DOMContentLoaded", () => {
    boot().catch((err) => app().replaceChildren(el("p", { class: "error", id: "boot-error" }, "cannot load the viewer data: " + err.message)));
  });
})();

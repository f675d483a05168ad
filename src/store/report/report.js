// witness report: draws the inline JSON document of one results folder.
// No network, no libraries: tables, SVG charts and the view state, which
// lives in the URL fragment so that a link reproduces a view.
"use strict";
(function () {
  const problems = [];
  const say = (m) => {
    problems.push(m);
    const box = document.getElementById("problems");
    if (box) { box.hidden = false; box.textContent = problems.join("\n"); }
  };
  window.addEventListener("error", (e) => say("script error: " + e.message));
  document.addEventListener("securitypolicyviolation", (e) => say("blocked by the page's policy: " + e.violatedDirective + " " + e.blockedURI));

  const D = JSON.parse(document.getElementById("witness-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  // Okabe and Ito's palette: distinguishable with every common colour-vision deficiency.
  const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
  // Low values light (yellow), high values dark (purple): the same way as
  // the heatmaps `witness plot` draws.
  const VIRIDIS = [[253, 231, 37], [94, 201, 98], [33, 145, 140], [59, 82, 139], [68, 1, 84]];
  const PAGE = 100;
  // Tiers in words (the CSV keeps their names), each with its style.
  const TIERS = { confirmed: "answer changed", inconclusive: "inconclusive", not_confirmed: "answer unchanged" };
  const VERDICTS = new Map(Object.entries(TIERS).map(([k, v]) => [v, "v-" + k]));
  // Colour follows the effect, not the tier: a harm is never green.
  const EFFECTS = new Set(["better", "worse"]);
  // Past eight arms, colours repeat with another dash pattern.
  const DASHES = [null, "7 3", "2 2", "9 3 2 3"];

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "on") for (const [ev, f] of Object.entries(v)) e.addEventListener(ev, f);
      else if (k === "cls") e.className = v;
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
    return e;
  }
  function sv(tag, attrs, ...kids) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, v);
    for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }
  // `frac`: the column holds fractions, so whole values keep their decimals.
  function num(v, frac) {
    if (v === null || v === undefined) return "";
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v) && !frac) return String(v);
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
    return v.toFixed(4);
  }

  // The view: every choice a reader makes, read from and written to the fragment.
  const state = {};
  function readHash() {
    for (const k of Object.keys(state)) delete state[k];
    const p = new URLSearchParams(location.hash.slice(1));
    for (const [k, v] of p) state[k] = v;
  }
  function go(changes) {
    const p = new URLSearchParams(location.hash.slice(1));
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === undefined || v === "") p.delete(k); else p.set(k, v);
    }
    // pushState neither scrolls nor fires hashchange, even when the
    // fragment becomes empty; the page redraws itself.
    const next = p.toString();
    history.pushState(null, "", next ? "#" + next : location.pathname + location.search);
    render();
  }

  const L = D.layout;
  // Variants come as [arm, values of the arm's named axes]; rows name them
  // by index. Rebuild the labels once, as witness prints them.
  L.variants = L.variants.map(([arm, values]) => {
    const a = L.arms[arm];
    const settings = Object.fromEntries(a.named.map((k, i) => [k, values[i]]));
    const label = a.named.length ? `${a.name}[${a.named.map((k, i) => `${k}=${values[i]}`).join(", ")}]` : a.name;
    return { arm, settings, label };
  });
  const relabel = (rows, columns, name) => {
    const k = columns.indexOf(name);
    if (k >= 0) for (const r of rows) if (typeof r[k] === "number" && L.variants[r[k]]) r[k] = L.variants[r[k]].label;
  };
  if (D.summary) relabel(D.summary.rows, D.summary.columns, "arm");
  if (D.race) { relabel(D.race.rows, D.race.columns, "candidate"); relabel(D.race.rows, D.race.columns, "against"); }
  const runById = new Map((D.runs ? D.runs.rows : []).map(([id, variant, scenario, seed, failed, metrics, extra]) => [id, { id, variant, scenario, seed, failed, metrics, extra }]));
  const variantIndex = new Map(L.variants.map((v, i) => [v.label, i]));
  const scenarioIndex = new Map(L.scenarios.map((s, i) => [s.label, i]));
  const metrics = D.summary ? [...new Set(D.summary.rows.map((r) => r[D.summary.columns.indexOf("metric")]))] : [];
  const metric = () => (metrics.includes(state.metric) ? state.metric : metrics[0]);

  // A sortable, paged table; `open(row)` makes a row a link.
  function table(columns, rows, opts) {
    opts = opts || {};
    const key = opts.key;
    const sortCol = key && state[key + "-sort"] !== undefined ? Number(state[key + "-sort"]) : -1;
    const desc = key && state[key + "-desc"] === "1";
    let shown = rows.slice();
    // Numbers (and numbers printed as text) sort as numbers; blanks last.
    const asNum = (v) => (typeof v === "number" ? v : v !== null && v !== "" && !isNaN(Number(v)) ? Number(v) : null);
    if (sortCol >= 0) {
      shown.sort((a, b) => {
        const x = a[sortCol], y = b[sortCol];
        const nx = asNum(x), ny = asNum(y);
        if (x === null || x === "") return y === null || y === "" ? 0 : 1;
        if (y === null || y === "") return -1;
        const c = nx !== null && ny !== null ? nx - ny : String(x).localeCompare(String(y));
        return desc ? -c : c;
      });
    }
    const frac = columns.map((_, k) => rows.some((r) => typeof r[k] === "number" && !Number.isInteger(r[k])));
    const numeric = columns.map((_, k) => rows.every((r) => r[k] === null || r[k] === "" || asNum(r[k]) !== null));
    const limit = key && state[key + "-all"] === "1" ? shown.length : opts.page || PAGE;
    const sortBy = (i) => go({ [key + "-sort"]: i, [key + "-desc"]: sortCol === i && !desc ? "1" : null });
    const head = el("tr", {}, columns.map((c, i) => el("th", {
      scope: "col", cls: key ? "sortable" : null, title: opts.docs && opts.docs[c] ? opts.docs[c] : null,
      tabindex: key ? "0" : null, "data-focus": key ? `${key}-h${i}` : null,
      "aria-sort": i === sortCol ? (desc ? "descending" : "ascending") : null,
      on: key ? { click: () => sortBy(i), keydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(i); } } } : {},
    }, c, i === sortCol ? (desc ? " \u25BC" : " \u25B2") : "")));
    const body = shown.slice(0, limit).map((r, j) => el("tr", {
      cls: opts.open ? "link" : null, tabindex: opts.open ? "0" : null, "data-focus": opts.open && key ? `${key}-r${j}` : null,
      on: opts.open ? { click: () => opts.open(r), keydown: (e) => { if (e.key === "Enter") opts.open(r); } } : {},
    }, r.map((v, k) => el("td", { cls: numeric[k] && v !== "" && v !== null ? "n" : VERDICTS.has(v) ? VERDICTS.get(v) : EFFECTS.has(v) ? "e-" + v : null }, num(v, frac[k])))));
    const t = el("table", { cls: "data" }, el("thead", {}, head), el("tbody", {}, body));
    const more = shown.length > limit
      ? el("p", { cls: "more" }, `${limit} of ${shown.length} rows shown. `, el("button", { on: { click: () => go({ [key + "-all"]: "1" }) } }, "Show all"))
      : null;
    return el("div", { cls: "scroll" }, t, more);
  }

  // Folds keep their state across redraws (and print open).
  const folds = new Set();
  function fold(id, title, open, ...kids) {
    const d = el("details", { "data-fold": id, open: open || folds.has(id) }, el("summary", { "data-focus": "fold-" + id }, title), ...kids);
    d.addEventListener("toggle", () => { if (d.open) folds.add(id); else folds.delete(id); });
    return d;
  }

  function section(id, title, ...kids) {
    return el("section", { id }, el("h2", {}, title), ...kids);
  }

  function provenance() {
    const p = D.provenance;
    const failed = p.failed.length;
    const facts = [
      ["experiment", p.name], ["model", `${p.model} (${p.engine_version})`],
      ["written by", p.written_by ? `witness ${p.written_by}` : "unknown"],
      ["manifest sha256", p.manifest_sha256], ["runs", p.runs],
      ["identity checks", failed === 0 ? "every run passed its accounting identities" : `${failed} run(s) failed`],
      ["sealed", !p.sealed ? "no seal (complete.json is missing)" : p.sizes_match ? "complete.json records every file, and the tables have their sealed sizes; `witness verify` checks their bytes" : "the tables no longer have the sizes complete.json records: run `witness verify`"],
    ];
    if (L.grid_runs !== p.runs) facts.push(["full grid", `${L.grid_runs} runs (a race ran ${p.runs})`]);
    return section("provenance", "Provenance",
      el("table", { cls: "facts" }, el("tbody", {}, facts.map(([k, v]) => el("tr", {}, el("th", { scope: "row" }, k), el("td", { id: "fact-" + k.replace(/ /g, "-") }, v))))),
      failed ? fold("failed", "Failed runs", true, table(["run_id", "failure"], p.failed, { key: "failed", open: (r) => go({ run: r[0] }) })) : null,
      fold("manifest", "Manifest", false, el("pre", { cls: "manifest" }, p.manifest)));
  }

  function layout() {
    const axes = L.axes.map((a) => [a.name, a.values.length, a.values.join(", ")]);
    const arms = L.arms.map((a) => [a.name, a.fixed.map((f) => f.join(" = ")).join(", "), a.axes.map((x) => `${x.name} = ${x.values.join(", ")}`).join("; ")]);
    return section("design", "Design",
      el("p", {}, `${L.scenarios.length} scenario(s) \u00D7 ${L.variants.length} arm variant(s); runs are paired on seeds within a scenario.`),
      axes.length ? table(["common axis", "values", "list"], axes, {}) : null,
      table(["arm", "fixed", "own axes"], arms, {}),
      L.design ? el("ul", {}, L.design.map((l) => el("li", {}, l))) : null);
  }

  // The summary rows of one metric.
  function summaryRows(m) {
    const c = D.summary.columns;
    const mi = c.indexOf("metric");
    return D.summary.rows.filter((r) => r[mi] === m);
  }
  function firstRun(variant, scenario) {
    for (const r of runById.values()) if (r.variant === variant && (scenario === undefined || r.scenario === scenario)) return r.id;
    return null;
  }
  // The scenario label of a summary row, from its common-axis columns.
  function rowScenario(r, c) {
    const parts = L.axes.filter((a) => c.includes(a.name)).map((a) => `${a.name}=${r[c.indexOf(a.name)]}`);
    return parts.length ? parts.join(", ") : "all runs";
  }

  function summary() {
    if (!D.summary) return null;
    const m = metric();
    const c = D.summary.columns;
    const rows = summaryRows(m);
    const ai = c.indexOf("arm"), mi = c.indexOf("mean"), ni = c.indexOf("n");
    // Arms down, scenarios across: the table a reader compares along.
    const scen = [...new Set(rows.map((r) => rowScenario(r, c)))];
    const arms = [...new Set(rows.map((r) => r[ai]))];
    const at = new Map(rows.map((r) => [r[ai] + "\u0000" + rowScenario(r, c), r]));
    const pivot = arms.map((a) => [a, ...scen.map((sc) => { const r = at.get(a + "\u0000" + sc); return r ? r[mi] : null; })]);
    const pick = el("select", { id: "metric", on: { change: (e) => go({ metric: e.target.value }) } }, metrics.map((x) => el("option", { value: x, selected: x === m }, x)));
    const n = [...new Set(rows.map((r) => r[ni]))];
    return section("summary", "Headline metrics",
      el("p", {}, el("label", {}, "Metric ", pick), ` \u2014 mean over ${n.length === 1 ? n[0] + (n[0] === 1 ? " run" : " runs") : "the runs"} per arm variant (rows) and scenario (columns). Select a row to open one of its runs.`),
      D.summary.docs[m] ? el("p", { cls: "doc" }, `${m}: ${D.summary.docs[m]}`) : null,
      table(["arm", ...scen], pivot, {
        key: "summary", open: (r) => { const id = firstRun(variantIndex.get(r[0])); if (id !== null) go({ run: id }); },
      }),
      fold("stats", "Every statistic (n, mean, sd, 95 % Student-t interval)", state["stats-sort"] !== undefined,
        table(c, rows, {
          key: "stats", docs: D.summary.docs,
          open: (r) => { const v = variantIndex.get(r[ai]); const id = firstRun(v, scenarioIndex.get(rowScenario(r, c))); if (id !== null) go({ run: id }); },
        })));
  }

  // Which arm wins, by how much, how sure: one sentence per arm from the
  // effect words of its testable rows.
  function headline(V, col) {
    const metric = V.rows.length ? V.rows[0][col("effect_metric")] : null;
    if (!metric) return null;
    const better = V.rows[0][col("direction")];
    const arms = [...new Set(V.rows.map((r) => r[col("arm")]))];
    const parts = arms.map((arm) => {
      const rows = V.rows.filter((r) => r[col("arm")] === arm && r[col("testable")]);
      if (!rows.length) return `${arm}: nothing to test`;
      const by = (w) => rows.filter((r) => r[col("effect_verdict")] === w);
      const span = (rs) => {
        const xs = rs.map((r) => r[col("effect_mean")]);
        const [lo, hi] = [Math.min(...xs), Math.max(...xs)];
        const f = (x) => (x > 0 ? "+" : "") + x.toFixed(3);
        return lo === hi ? f(lo) : `${f(lo)} to ${f(hi)}`;
      };
      const said = [];
      for (const w of ["better", "worse", "higher", "lower"]) {
        const rs = by(w);
        if (rs.length) said.push(`${w} in ${rs.length} of ${rows.length} scenario(s) (${span(rs)})`);
      }
      for (const w of ["negligible", "equivalent"]) {
        const rs = by(w);
        if (rs.length) said.push(`${w} in ${rs.length}`);
      }
      const open = by("undetermined").length;
      if (open) said.push(`undetermined in ${open}`);
      return `${arm} is ${said.join(", ")}`;
    });
    const way = better === "lower" ? "lower is better" : better === "higher" ? "higher is better" : "no better direction declared";
    return el("p", { id: "headline", cls: "headline" },
      `Against ${V.baseline}, on ${metric} (${way}; adjusted p < ${V.alpha}): ${parts.join("; ")}.`);
  }

  // A forest plot of the paired effects: one row per testable arm and
  // scenario, its mean and 95 % interval, coloured by its effect word.
  function forest(V, col) {
    const rows = V.rows.filter((r) => r[col("testable")] && r[col("effect_ci_low")] !== null);
    if (!rows.length) return null;
    const lo = Math.min(0, ...rows.map((r) => r[col("effect_ci_low")]));
    const hi = Math.max(0, ...rows.map((r) => r[col("effect_ci_high")]));
    const pad = (hi - lo) * 0.05 || 0.05;
    const [a, b] = [lo - pad, hi + pad];
    const W = 720, ml = 300, mr = 16, mt = 28, row = 18, H = mt + rows.length * row + 30;
    const X = (x) => ml + ((x - a) / (b - a)) * (W - ml - mr);
    const g = sv("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", id: "forest", "aria-label": "forest plot of paired effects", class: "chart forest" });
    g.append(sv("text", { x: 8, y: 16, class: "title" }, `Paired effect on ${rows[0][col("effect_metric")]} (arm - ${V.baseline}), 95 % interval`));
    g.append(sv("line", { x1: X(0), x2: X(0), y1: mt - 4, y2: H - 26, class: "zero", stroke: "#555" }));
    const sesoi = rows[0][col("sesoi")];
    if (sesoi) for (const d of [-sesoi, sesoi]) if (d > a && d < b) g.append(sv("line", { x1: X(d), x2: X(d), y1: mt - 4, y2: H - 26, stroke: "#999", "stroke-dasharray": "3 3" }));
    for (let k = 0; k <= 4; k++) {
      const x = a + (k * (b - a)) / 4;
      g.append(sv("text", { x: X(x), y: H - 10, class: "tick mid" }, x.toFixed(2)));
    }
    const COLOURS = { better: "#009E73", worse: "#D55E00" };
    rows.forEach((r, i) => {
      const y = mt + i * row + row / 2;
      const word = r[col("effect_verdict")];
      const c = COLOURS[word] || "#555";
      g.append(sv("text", { x: ml - 8, y: y + 4, class: "tick end" }, `${r[col("arm")]} · ${r[col("scenario")]}`));
      g.append(sv("line", { x1: X(r[col("effect_ci_low")]), x2: X(r[col("effect_ci_high")]), y1: y, y2: y, stroke: c, "stroke-width": "2" }));
      g.append(sv("circle", { cx: X(r[col("effect_mean")]), cy: y, r: 4, fill: c }, sv("title", {}, `${word}: ${r[col("effect_mean")].toFixed(4)}`)));
    });
    return el("div", { cls: "scroll" }, g);
  }

  function verdicts() {
    const V = D.verdicts;
    if (!V) return null;
    const c = V.columns;
    const col = (k) => c.indexOf(k);
    const keep = ["scenario", "arm", "verdict", "flips", "samples", "effect_mean", "effect_ci_low", "effect_ci_high", "effect_verdict", "p_adjusted", "band_lower_bound"];
    const idx = keep.map((k) => c.indexOf(k));
    const tier = keep.indexOf("verdict");
    const rows = V.rows.map((r) => idx.map((i, k) => (k === tier ? TIERS[r[i]] || r[i] : r[i])));
    const claims = V.rows.map((r) => r[col("claim")]);
    const warnings = (V.warnings || []).map((w) => el("p", { cls: "warning" }, `Warning: ${w}`));
    return section("verdicts", `Verdicts against ${V.baseline}`,
      headline(V, col), ...warnings, forest(V, col),
      el("p", {}, `Placebo: ${V.placebo}. "verdict" says whether a seed's answer changed beyond rerun noise; "effect_verdict" says which way the average moved and how sure the test is. Select a row to see its scenario's trajectories.`),
      table(keep, rows, { key: "verdicts", open: (r) => { go({ scenario: r[0] }); const t = document.getElementById("trajectories"); if (t) t.scrollIntoView(); } }),
      fold("claims", "Claims", false, el("ol", { cls: "claims" }, claims.map((x) => el("li", {}, x)))));
  }

  // One SVG line chart with ±1 sd bands.
  function lineChart(title, series, xs, yLabel, from, to) {
    const W = 560, H = 300, ml = 48, mr = 12, mt = 24, mb = 36;
    const lo = from, hi = Math.max(to, from + 1);
    const X = (x) => ml + ((x - lo) / (hi - lo)) * (W - ml - mr);
    const Y = (y) => mt + (1 - y) * (H - mt - mb);
    const g = sv("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title, class: "chart" });
    g.append(sv("text", { x: ml, y: 16, class: "title" }, title));
    for (let k = 0; k <= 4; k++) {
      const y = k / 4;
      g.append(sv("line", { x1: ml, x2: W - mr, y1: Y(y), y2: Y(y), class: "grid" }));
      g.append(sv("text", { x: ml - 6, y: Y(y) + 4, class: "tick end" }, y.toFixed(2)));
    }
    for (let k = 0; k <= 5; k++) {
      const x = Math.round(lo + (k * (hi - lo)) / 5);
      g.append(sv("text", { x: X(x), y: H - mb + 16, class: "tick mid" }, x));
    }
    g.append(sv("text", { x: (ml + W - mr) / 2, y: H - 4, class: "tick mid" }, xs));
    g.append(sv("text", { x: 12, y: mt + (H - mt - mb) / 2, class: "tick mid", transform: `rotate(-90 12 ${mt + (H - mt - mb) / 2})` }, yLabel));
    for (const s of series) {
      const pts = [];
      for (let x = lo; x <= Math.min(hi, s.mean.length - 1); x++) if (s.mean[x] !== null) pts.push(x);
      if (!pts.length) continue;
      if (s.low) {
        const band = pts.map((x) => `${X(x).toFixed(1)},${Y(s.high[x]).toFixed(1)}`).concat(pts.slice().reverse().map((x) => `${X(x).toFixed(1)},${Y(s.low[x]).toFixed(1)}`));
        g.append(sv("polygon", { points: band.join(" "), fill: s.color, "fill-opacity": "0.15", stroke: "none" }));
      }
      g.append(sv("polyline", { points: pts.map((x) => `${X(x).toFixed(1)},${Y(s.mean[x]).toFixed(1)}`).join(" "), fill: "none", stroke: s.color, "stroke-width": "2", "stroke-dasharray": s.dash || null }));
    }
    return g;
  }

  function trajectories() {
    const C = D.curves;
    if (!C || !C.figures.length) return null;
    const labels = C.figures.map((f) => L.scenarios[f.scenario].label);
    const chosen = Math.max(0, labels.indexOf(state.scenario));
    const fig = C.figures[chosen];
    const arms = fig.panels[0].series.map((s) => s.label);
    const hidden = new Set((state.hide || "").split("|").filter(Boolean));
    const len = Math.max(...fig.panels.flatMap((p) => p.series.map((s) => s.mean.length))) - 1;
    const whole = (v, d) => (Number.isFinite(Number(v)) && v !== "" && v !== undefined ? Math.round(Number(v)) : d);
    const from = Math.max(0, Math.min(len - 1, whole(state.from, 0)));
    const to = Math.max(from + 1, Math.min(len, whole(state.to, len)));
    const color = (label) => PALETTE[arms.indexOf(label) % PALETTE.length];
    const dash = (label) => DASHES[Math.floor(arms.indexOf(label) / PALETTE.length) % DASHES.length];
    const pick = el("select", { id: "scenario", on: { change: (e) => go({ scenario: e.target.value }) } }, labels.map((l, i) => el("option", { value: l, selected: i === chosen }, l)));
    const toggles = arms.map((a) => el("label", { cls: "toggle" }, el("input", {
      type: "checkbox", checked: !hidden.has(a),
      on: { change: (e) => { const h = new Set(hidden); if (e.target.checked) h.delete(a); else h.add(a); go({ hide: [...h].join("|") }); } },
    }), sv("svg", { width: 26, height: 10, class: "key" }, sv("line", { x1: 1, x2: 25, y1: 5, y2: 5, stroke: color(a), "stroke-width": 3, "stroke-dasharray": dash(a) })), a));
    const range = el("p", {}, `${C.x} from `, el("input", { type: "number", id: "from", min: 0, max: len, value: from, on: { change: (e) => go({ from: e.target.value }) } }),
      " to ", el("input", { type: "number", id: "to", min: 1, max: len, value: to, on: { change: (e) => go({ to: e.target.value }) } }),
      " ", el("button", { on: { click: () => go({ from: null, to: null }) } }, "Whole run"));
    const charts = fig.panels.map((p) => lineChart(p.title, p.series.filter((s) => !hidden.has(s.label)).map((s) => ({ ...s, color: color(s.label), dash: dash(s.label) })), C.x, C.y, from, to));
    return section("trajectories", "Trajectories",
      el("p", {}, el("label", {}, "Scenario ", pick)),
      el("h3", { id: "trajectory-title" }, fig.title),
      el("div", { cls: "toggles" }, toggles), range,
      el("div", { cls: "charts" }, charts));
  }

  function colour(t) {
    const x = Math.max(0, Math.min(1, t)) * (VIRIDIS.length - 1);
    const i = Math.min(VIRIDIS.length - 2, Math.floor(x)), f = x - i;
    const c = VIRIDIS[i].map((v, k) => Math.round(v + f * (VIRIDIS[i + 1][k] - v)));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }

  // A heatmap of the chosen metric over two axes, one panel per value of
  // the facet, wrapping into a grid; each cell is the mean over its runs.
  function heatmap() {
    if (!D.summary) return null;
    const m = metric();
    const c = D.summary.columns;
    const rows = summaryRows(m);
    const cells = rows.map((r) => {
      const v = L.variants[variantIndex.get(r[c.indexOf("arm")])];
      const at = { arm: L.arms[v.arm].name, ...v.settings };
      for (const a of L.axes) if (c.includes(a.name)) at[a.name] = String(r[c.indexOf(a.name)]);
      return { at, n: r[c.indexOf("n")], mean: r[c.indexOf("mean")] };
    });
    const axes = [...new Set(cells.flatMap((x) => Object.keys(x.at)))].filter((a) => new Set(cells.map((x) => x.at[a])).size > 1);
    if (axes.length === 0) return null;
    const pickAxis = (k, dflt) => (axes.includes(state[k]) ? state[k] : dflt);
    const xa = pickAxis("x", axes.find((a) => a !== "arm") || axes[0]);
    const ya = pickAxis("y", axes.find((a) => a !== xa && a !== "arm") || null);
    const fa = pickAxis("facet", axes.includes("arm") && xa !== "arm" && ya !== "arm" ? "arm" : null);
    // Cells of arms without one of the chosen axes cannot be placed.
    const placed = cells.filter((x) => [xa, ya, fa].every((a) => !a || x.at[a] !== undefined));
    const dropped = [...new Set(cells.filter((x) => !placed.includes(x)).map((x) => x.at.arm))];
    const values = (a) => (a ? [...new Set(placed.map((x) => x.at[a]))] : [""]);
    const xv = values(xa), yv = values(ya), fv = values(fa);
    const all = placed.map((x) => x.mean).filter((v) => v !== null);
    const lo = Math.min(...all), hi = Math.max(...all);
    const sel = (k, v, opts) => el("select", { id: "hm-" + k, on: { change: (e) => go({ [k]: e.target.value }) } }, opts.map((o) => el("option", { value: o, selected: o === v }, o || "(none)")));
    const panels = fv.map((f) => {
      const cw = Math.max(18, Math.min(48, Math.floor(520 / xv.length))), ch = Math.max(14, Math.min(32, Math.floor(360 / yv.length)));
      // Room for the longest y label, and for x labels turned when narrow.
      const ml = 10 + 6.5 * Math.max(2, ...yv.map((y) => String(y).length)), mt = 24;
      const turn = xv.some((x) => 6.5 * String(x).length > cw - 2);
      const mb = turn ? 14 + 4.6 * Math.max(...xv.map((x) => String(x).length)) : 22;
      const title = fa ? `${fa} = ${f}` : m;
      const caption = `${xa}${ya ? " \u00D7 " + ya : ""}`;
      const w = Math.max(ml + cw * xv.length + 8, ml + 7.5 * Math.max(title.length, caption.length) + 8), h = mt + ch * yv.length + mb + 18;
      const g = sv("svg", { viewBox: `0 0 ${w} ${h}`, width: w, height: h, class: "heat", role: "img", "aria-label": `${m}${f ? " for " + f : ""}` });
      g.append(sv("text", { x: ml, y: 16, class: "title" }, title));
      yv.forEach((y, j) => {
        g.append(sv("text", { x: ml - 4, y: mt + j * ch + ch / 2 + 4, class: "tick end" }, ya ? y : ""));
        xv.forEach((x, i) => {
          const hit = placed.filter((k) => k.at[xa] === x && (!ya || k.at[ya] === y) && (!fa || k.at[fa] === f) && k.mean !== null);
          if (!hit.length) return;
          const n = hit.reduce((s, k) => s + k.n, 0);
          const v = hit.reduce((s, k) => s + k.mean * k.n, 0) / n;
          const r = sv("rect", { x: ml + i * cw, y: mt + j * ch, width: cw - 1, height: ch - 1, fill: colour(hi > lo ? (v - lo) / (hi - lo) : 0.5), "data-value": num(v) });
          r.append(sv("title", {}, `${xa} = ${x}${ya ? ", " + ya + " = " + y : ""}: ${m} = ${num(v)} (${n} runs)`));
          g.append(r);
        });
      });
      xv.forEach((x, i) => {
        const cx = ml + i * cw + cw / 2, cy = mt + yv.length * ch + 12;
        g.append(turn
          ? sv("text", { x: cx, y: cy, class: "tick end", transform: `rotate(-45 ${cx} ${cy})` }, x)
          : sv("text", { x: cx, y: cy, class: "tick mid" }, x));
      });
      g.append(sv("text", { x: ml, y: mt + yv.length * ch + mb + 12, class: "tick" }, caption));
      return el("figure", {}, g);
    });
    const key = sv("svg", { width: 260, height: 34, viewBox: "0 0 260 34", class: "heat", role: "img", "aria-label": "colour scale" },
      [...Array(20).keys()].map((i) => sv("rect", { x: 30 + i * 10, y: 2, width: 10, height: 14, fill: colour(i / 19) })),
      sv("text", { x: 30, y: 30, class: "tick" }, num(lo)), sv("text", { x: 230, y: 30, class: "tick end" }, num(hi)),
      sv("text", { x: 130, y: 30, class: "tick mid" }, m));
    return section("heatmap", "Heatmap",
      el("p", {}, el("label", {}, "x ", sel("x", xa, axes)), " ", el("label", {}, "y ", sel("y", ya || "", ["", ...axes])), " ", el("label", {}, "panels by ", sel("facet", fa || "", ["", ...axes])),
        ` \u2014 ${m} from ${num(lo)} (light) to ${num(hi)} (dark), mean over each cell's runs${({ lower: "; lower is better", higher: "; higher is better" })[(D.summary.better || {})[m]] || ""}.`),
      dropped.length ? el("p", { cls: "doc" }, `Left out: ${dropped.join(", ")} (no value on the chosen axes).`) : null,
      key, el("div", { cls: "panels" }, panels));
  }

  function ranking() {
    const R = D.ranking;
    if (!R) return null;
    const id = R.columns.indexOf("run_id");
    return section("ranking", "Ranking", el("p", {}, `By the model's key: ${R.key}.`), table(R.columns, R.rows, { key: "ranking", page: 50, open: (r) => go({ run: r[id] }) }));
  }

  function race() {
    const R = D.race;
    if (!R) return null;
    const res = L.axes.find((a) => a.name === R.resource);
    const rungs = R.rungs.map(([k, a, b, n, runs, removed]) => [k, res.values.slice(a, b).join(", "), n, runs, removed]);
    return section("race", "Race",
      el("p", {}, `${R.method} on ${R.resource} by ${R.metric}: ${R.runs} of the full grid's ${R.grid_runs} runs (${(100 * R.runs / R.grid_runs).toFixed(1)} %).`),
      table(["rung", R.resource, "candidates", "runs", "removed"], rungs, {}),
      table(R.columns, R.rows, { key: "race", page: 50 }));
  }

  function runs() {
    const U = D.runs;
    if (!U) return null;
    const rows = [...runById.values()].map((r) => [r.id, r.variant === null ? "" : L.variants[r.variant].label, r.scenario === null ? "" : L.scenarios[r.scenario].label, r.seed, r.failed ? "failed" : "", ...r.metrics]);
    return section("runs", "Runs", table(["run_id", "arm", "scenario", "seed", "failed", ...U.metrics], rows, { key: "runs", open: (r) => go({ run: r[0] }) }));
  }

  // The run chosen in the fragment: parameters, metrics, trajectory.
  function drill() {
    if (state.run === undefined || !D.runs) return null;
    const r = runById.get(Number(state.run));
    if (!r) return section("run", `Run ${state.run}`, el("p", {}, "This run is not among the runs listed in this report (see the notes above)."));
    const U = D.runs;
    // The base, then what the arm fixes, then what the run's place sets.
    const from = new Map();
    const v = r.variant === null ? null : L.variants[r.variant];
    if (v) for (const [k, x] of L.arms[v.arm].fixed) from.set(k, [x, "fixed by the arm"]);
    if (v) for (const [k, x] of Object.entries(v.settings)) from.set(k, [x, "the arm's axis"]);
    if (r.scenario !== null) for (const [k, x] of Object.entries(L.scenarios[r.scenario].settings)) from.set(k, [x, "the scenario"]);
    if (U.seed && r.seed !== null) from.set(U.seed, [String(r.seed), "the seed"]);
    for (const [k, x] of Object.entries(r.extra)) from.set(k, [x, "the run's design point"]);
    const params = U.base.map(([k, x]) => (from.has(k) ? [k, ...from.get(k)] : [k, x, ""]));
    const all = [...runById.values()].filter((x) => x.variant === r.variant && x.scenario === r.scenario).map((x) => x.id);
    // The listed runs nearest this one, not hundreds of buttons.
    const at = all.indexOf(r.id);
    const siblings = all.slice(Math.max(0, at - 12), at + 13);
    const T = U.trajectories && U.trajectories.runs[String(r.id)];
    const chart = T ? lineChart(`run ${r.id}`, U.trajectories.columns.map((c, k) => ({ label: c, color: PALETTE[k % PALETTE.length], mean: T[k] })), U.trajectories.x, "fraction", 0, T[0].length - 1) : null;
    return section("run", `Run ${r.id}`,
      el("p", { id: "run-place" }, `${r.variant === null ? "" : L.variants[r.variant].label} \u2014 ${r.scenario === null ? "" : L.scenarios[r.scenario].label}, seed ${r.seed}${r.failed ? " \u2014 failed its identities" : ""}`),
      el("p", {}, `Same arm and scenario (${all.length} listed): `, siblings.map((id) => el("button", { cls: id === r.id ? "current" : null, on: { click: () => go({ run: id }) } }, id))),
      T ? null : el("p", { cls: "doc" }, "This run's own trajectory is not in the report (see the note at the top); its scenario's mean curves are."),
      el("div", { cls: "two" },
        table(["metric", "value"], U.metrics.map((m, k) => [m, r.metrics[k]]), {}),
        table(["parameter", "value", "set by"], params, { page: 200 })),
      chart ? el("div", { cls: "charts" }, chart, el("p", { cls: "legend" }, U.trajectories.columns.map((c, k) => el("span", {}, sv("svg", { width: 26, height: 10, class: "key" }, sv("line", { x1: 1, x2: 25, y1: 5, y2: 5, stroke: PALETTE[k % PALETTE.length], "stroke-width": 3 })), c)))) : null,
      el("p", {}, el("button", { on: { click: () => go({ run: null }) } }, "Close")));
  }

  let shownRun;
  function render() {
    const focused = document.activeElement && document.activeElement.getAttribute("data-focus");
    readHash();
    const app = document.getElementById("app");
    const p = D.provenance;
    const failed = p.failed.length;
    const names = ["summary", "verdicts", "trajectories", "heatmap", "ranking", "race", "runs", "design", "provenance"];
    const titles = { summary: "metrics", verdicts: "verdicts", trajectories: "trajectories", heatmap: "heatmap", ranking: "ranking", race: "race", runs: "runs", design: "design", provenance: "provenance" };
    const parts = [summary(), verdicts(), trajectories(), heatmap(), ranking(), race(), runs(), layout(), provenance()];
    const facts = `${p.model} (${p.engine_version}) \u00B7 ${p.runs} runs \u00B7 ${failed ? failed + " failed their identities" : "every run passed its identities"} \u00B7 manifest ${p.manifest_sha256.slice(0, 12)}\u2026`;
    app.replaceChildren(...[
      el("header", {}, el("h1", {}, p.name), el("p", { cls: "sub", id: "facts" }, facts),
        el("nav", {}, names.filter((_, i) => parts[i]).map((n) => el("button", { on: { click: () => document.getElementById(n).scrollIntoView() } }, titles[n])))),
      p.description ? el("p", { cls: "lead" }, p.description) : null,
      D.notes.length ? el("aside", { cls: "notes" }, el("strong", {}, "Reduced to stay small: "), D.notes.join("; "), ".") : null,
      drill(), ...parts].filter(Boolean));
    document.documentElement.dataset.view = location.hash.slice(1);
    // A run opened from a table is shown at the top of the page.
    if (state.run !== undefined && state.run !== shownRun && shownRun !== undefined) window.scrollTo(0, 0);
    shownRun = state.run === undefined ? null : state.run;
    if (focused) {
      const again = document.querySelector(`[data-focus="${focused}"]`);
      if (again) again.focus({ preventScroll: true });
    }
  }

  window.addEventListener("hashchange", render);
  window.addEventListener("popstate", render);
  // Printed, every fold is open.
  window.addEventListener("beforeprint", () => document.querySelectorAll("details").forEach((d) => { d.dataset.was = d.open ? "1" : ""; d.open = true; }));
  window.addEventListener("afterprint", () => document.querySelectorAll("details").forEach((d) => { d.open = d.dataset.was === "1"; }));
  render();
  document.documentElement.dataset.readyMs = performance.now().toFixed(0);
})();

/* place view: the offline results viewer's page script (docs/viewer.md).
 *
 * Plain JavaScript, no framework and nothing fetched: data.js has already assigned
 * window.PLACE_VIEW (place/view/data.py), and this script renders it as hash routes, so
 * the site works from file://. Every text goes through textContent (never innerHTML), so
 * a record's text cannot inject markup.
 */
(function () {
  "use strict";

  var DATA = window.PLACE_VIEW;
  var app = document.getElementById("app");
  var nav = document.getElementById("nav");
  var PAGE = 100;
  var itemState = {}; // per run: the item table's filters, sort and page (kept across routes)

  // -- DOM helpers ----------------------------------------------------------------------

  function h(tag, attrs) {
    var el = document.createElement(tag);
    var a = attrs || {};
    Object.keys(a).forEach(function (k) {
      var v = a[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "class") el.className = v;
      else if (k.slice(0, 2) === "on") el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    });
    for (var i = 2; i < arguments.length; i++) add(el, arguments[i]);
    return el;
  }

  function add(el, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) { kid.forEach(function (k) { add(el, k); }); return; }
    el.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }

  function a(href, text, cls) { return h("a", { href: href, class: cls }, text); }
  function code(text) { return h("code", null, text); }
  function enc(s) { return encodeURIComponent(s); }
  function runHref(i, rest) { return "#/run/" + i + (rest ? "/" + rest : ""); }
  function itemHref(i, key) { return runHref(i, "item/" + enc(key)); }

  function table(headers, rows, cls) {
    return h("table", { class: cls || "data" },
      h("thead", null, h("tr", null, headers.map(function (x) { return h("th", null, x); }))),
      h("tbody", null, rows.map(function (r) {
        return h("tr", null, r.map(function (c) {
          return c instanceof Node && c.tagName === "TD" ? c : h("td", null, c);
        }));
      })));
  }

  function kv(pairs) {
    var dl = h("dl", { class: "kv" });
    pairs.forEach(function (p) {
      if (p[1] === undefined) return;
      add(dl, h("dt", null, p[0]));
      add(dl, h("dd", null, p[1] === null ? "–" : p[1]));
    });
    return dl;
  }

  function status(st) { return h("span", { class: "badge st-" + (st === "n/a" ? "na" : st) }, st); }
  function yes(b, good, bad) {
    if (b === null || b === undefined) return h("span", { class: "badge info" }, "–");
    return h("span", { class: "badge " + (b ? "good" : "bad") }, b ? good : bad);
  }
  function json(v) { return h("pre", null, JSON.stringify(v, null, 1)); }
  function list(v) { return v === null || v === undefined ? "–" : (v.length ? v.join(", ") : "∅"); }

  // -- pools ----------------------------------------------------------------------------

  function pools(run) {
    var p = run.pools;
    return {
      text: function (i) { return p.texts[i]; },
      fact: function (i) { return p.facts[i]; },
      blob: function (i) { return i === null || i === undefined ? null : p.blobs[i]; },
      facts: function (ids) { return (ids || []).map(function (i) { return p.facts[i]; }); }
    };
  }

  function factText(f) { return f.slice(0, 4).join(" · "); }
  function windowText(from, until) {
    return from === null && until === null ? "open" : "[" + (from || "…") + ", " + (until || "…") + ")";
  }
  function factList(facts) {
    if (!facts.length) return h("span", { class: "muted" }, "∅ (empty)");
    return h("ul", null, facts.map(function (f) { return h("li", { class: "mono" }, factText(f)); }));
  }

  // -- navigation -----------------------------------------------------------------------

  function setNav(runIndex, here) {
    nav.textContent = "";
    if (runIndex !== null) {
      var run = DATA.runs[runIndex];
      add(nav, h("span", { class: "muted" }, run.label + " "));
      [["", "Header"], ["tables", "Tables"], ["scorecard", "Scorecard"], ["items", "Items"]]
        .forEach(function (t) {
          add(nav, a(runHref(runIndex, t[0]), t[1], here === t[0] ? "here" : null));
        });
    }
    if (DATA.runs.length > 1) add(nav, a("#/compare", "Compare runs", here === "compare" ? "here" : null));
  }

  function route() {
    var parts = (location.hash || "#/").replace(/^#\/?/, "").split("/").map(function (s) {
      try { return decodeURIComponent(s); } catch (e) { return s; }
    });
    app.textContent = "";
    window.scrollTo(0, 0);
    if (!DATA) { add(app, h("p", null, "data.js did not load: nothing to show.")); return; }
    if (parts[0] === "run" && DATA.runs[+parts[1]]) {
      var i = +parts[1], what = parts[2] || "";
      setNav(i, what === "aoep" ? "scorecard" : what === "item" ? "items" : what);
      if (what === "") return pageHeader(i);
      if (what === "tables") return pageTables(i);
      if (what === "scorecard") return pageScorecard(i);
      if (what === "aoep") return pageCell(i, parts[3], parts[4]);
      if (what === "items") return pageItems(i);
      if (what === "item") return pageItem(i, parts.slice(3).join("/"));
    }
    if (parts[0] === "summary" && (DATA.summaries || [])[+parts[1]]) {
      setNav(null, null);
      nav.insertBefore(h("span", { class: "muted" }, DATA.summaries[+parts[1]].label + " "), nav.firstChild);
      return pageSummary(+parts[1]);
    }
    if (parts[0] === "across") { setNav(null, null); return pageAcross(parts[1], parts.slice(2).join("/")); }
    if (parts[0] === "compare") { setNav(null, "compare"); return pageCompare(); }
    setNav(null, null);
    pageHome();
  }

  // -- home -----------------------------------------------------------------------------

  function pageHome() {
    add(app, h("h1", null, "Runs"));
    add(app, table(["Run", "Directory", "Status", "Answers", "Items", "Pages"],
      DATA.runs.map(function (run, i) {
        var hd = run.header;
        return [a(runHref(i), run.label), code(hd.path), hd.status || "–",
          hd.answers ? "true" : "false (answer-free)", String(run.rows.length),
          h("span", null, a(runHref(i, "tables"), "tables"), " · ", a(runHref(i, "scorecard"), "scorecard"),
            " · ", a(runHref(i, "items"), "items"))];
      }).concat((DATA.summaries || []).map(function (s, j) {
        return [a("#/summary/" + j, s.label), code(s.path), h("span", { class: "badge info" }, "summary"),
          "–", "– (no items)", h("span", null, a("#/summary/" + j, "tables and figures"))];
      }))));
    if (DATA.runs.length > 1) {
      add(app, h("p", null, a("#/compare", "Compare runs"), " (paired differences of each run from the first, " +
        "and the items the runs share)."));
    }
  }

  // -- run header -----------------------------------------------------------------------

  function banners(run) {
    var hd = run.header, out = [];
    var fact = hd.factorization;
    if (hd.invalid || (fact && !fact.ok)) {
      out.push(h("div", { class: "banner invalid", id: "invalid-banner" },
        "INVALID: " + (hd.invalid || "factorization") + " check failed; read-side comparisons are not valid" +
        (hd.first_mismatch || (fact && fact.first_mismatch) ?
          " (first mismatch: " + JSON.stringify(hd.first_mismatch || fact.first_mismatch) + ")" : "")));
    }
    if (!hd.answers) {
      out.push(h("div", { class: "banner", id: "answer-free-banner" },
        "Answer-free run (answers: false): no answer was asked, so every column that needs an answer " +
        "says so instead of a value (docs/method.md §15)."));
    }
    if (hd.status && hd.status !== "complete") {
      out.push(h("div", { class: "banner" }, "Run status: " + hd.status + " (not complete)."));
    }
    return out;
  }

  function pageHeader(i) {
    var run = DATA.runs[i], hd = run.header;
    var tr = hd.trajectory || {}, model = hd.model || {}, mi = hd.model_identity || {};
    add(app, h("h1", null, run.label));
    add(app, banners(run));
    add(app, h("h2", null, "Run"));
    add(app, kv([
      ["directory", code(hd.path)], ["status", hd.status || "–"], ["answers", String(hd.answers)],
      ["created", hd.created || "–"], ["place version", hd.place_version || "–"],
      ["git commit", hd.git ? code((hd.git.commit || "?") + (hd.git.dirty ? " (dirty)" : "")) : "–"],
      ["metrics", hd.metrics_schema || "no metrics.json"],
      ["factorization", hd.factorization ? (hd.factorization.ok ? "ok" : "FAILED") + " (" +
        hd.factorization.checkpoints + " checkpoints, " + hd.factorization.mismatches + " mismatches)" : "–"]
    ]));
    add(app, h("h2", null, "Trajectory"));
    add(app, kv([["id", tr.id], ["sha256", code(tr.sha256 || "–")], ["path", tr.path],
      ["generated", tr.generated ? JSON.stringify(tr.generated) : undefined],
      ["counts", hd.counts ? Object.keys(hd.counts).map(function (k) { return k + " " + hd.counts[k]; }).join(", ") : "–"],
      ["conversations", list(hd.conversations)]]));
    add(app, h("h2", null, "Model"));
    add(app, kv([["name", model.name], ["runtime", model.runtime], ["identity", code(model.identity || "–")],
      ["weights", mi.name], ["runtime version", mi.runtime_version], ["embedder", mi.embedder_name],
      ["embedder identity", mi.embedder_identity ? code(mi.embedder_identity) : undefined],
      ["parameters", mi.parameters ? JSON.stringify(mi.parameters) : undefined],
      ["Mem0 failures", hd.mem0_failures], ["truncated calls", hd.truncated_calls ? JSON.stringify(hd.truncated_calls) : undefined]]));
    add(app, h("h2", null, "Design"));
    add(app, kv([["name", hd.design.name], ["producers", list(hd.design.producers)],
      ["policies", list(hd.design.policies)], ["core", hd.core ? list(hd.core) : undefined],
      ["skipped producers", hd.skipped_producers ? list(hd.skipped_producers) : undefined],
      ["experiment", hd.experiment ? JSON.stringify(hd.experiment) : undefined],
      ["seeds", hd.seeds ? JSON.stringify(hd.seeds) : undefined],
      ["not measured", hd.not_measured ? list(hd.not_measured) : undefined]]));
    add(app, table(["Condition", "Producer", "Read policy"], run.conditions));
    add(app, h("h2", null, "Plots"));
    if (!run.plots.length) add(app, h("p", { class: "muted" }, "The run has no plots/."));
    add(app, h("div", { class: "plots" }, run.plots.map(function (p) {
      return h("figure", null, h("img", { class: "plot", src: p.src, alt: p.name }), h("figcaption", { class: "muted" }, p.name));
    })));
  }

  // -- tables ---------------------------------------------------------------------------

  function pageTables(i) {
    var run = DATA.runs[i];
    add(app, h("h1", null, "Tables"));
    add(app, banners(run));
    if (!run.tables.length) { add(app, h("p", { class: "muted" }, "The run has no tables (run `place report` on it).")); return; }
    add(app, h("p", { class: "muted" }, "From " + run.tables_source + "."));
    resultTables(run.tables);
  }

  function resultTables(tables) {
    tables.forEach(function (t) {
      if (t.banner) add(app, h("div", { class: "banner invalid" }, t.banner));
      add(app, h("h2", null, t.title));
      if (t.note) add(app, h("p", { class: "muted" }, "Note: " + t.note));
      add(app, table(t.header, t.rows, "data results"));
    });
  }

  // -- summaries ------------------------------------------------------------------------

  function pageSummary(j) {
    var s = DATA.summaries[j];
    add(app, h("h1", null, s.label));
    add(app, h("div", { class: "banner", id: "summary-banner" }, "A summary directory (" + s.kind +
      "): its report's tables and its figures. It holds no records, so no item, scorecard or comparison page lists it."));
    add(app, kv([["directory", code(s.path)], ["report", code(s.report)]]));
    if (s.description) add(app, h("p", { id: "summary-description" }, s.description));
    add(app, h("h2", null, "Figures"));
    add(app, h("div", { class: "plots", id: "summary-figures" }, s.figures.map(function (p) {
      return h("figure", null, h("img", { class: "plot", src: p.src, alt: p.name }), h("figcaption", { class: "muted" }, p.name));
    })));
    add(app, h("p", { class: "muted" }, "Tables from " + s.report + "."));
    resultTables(s.tables);
  }

  // -- scorecard ------------------------------------------------------------------------

  function shownKinds(run, family) {
    return run.kinds[family].filter(function (k) {
      return run.conditions.some(function (c) {
        var v = ((run.aoep[c[0]] || {})[family] || { kinds: {} }).kinds[k];
        return v === null || (v && v.total > 0);
      });
    });
  }

  function cellTd(i, cond, key, v) {
    if (v === null) return h("td", { class: "cell none" }, "not measured");
    if (!v) return h("td", { class: "cell none" }, "–");
    var cls = v.total === 0 ? "none" : v.passed === v.total ? "all" : "some";
    return h("td", { class: "cell " + cls }, a(runHref(i, "aoep/" + enc(cond) + "/" + enc(key)), v.passed + "/" + v.total));
  }

  function pageScorecard(i) {
    var run = DATA.runs[i];
    add(app, h("h1", null, "AOEP scorecard"));
    add(app, banners(run));
    add(app, h("p", { class: "muted" }, "Obligations kept and negative invariants held per condition (docs/method.md §10, §11), " +
      "from " + run.aoep_source + ". Each cell links to its items; kinds without an item in any condition are left out."));
    var ob = shownKinds(run, "obligations"), inv = shownKinds(run, "invariants");
    var headers = ["Condition", "Obligations"].concat(ob, ["Invariants"], inv);
    var rows = run.conditions.map(function (c) {
      var card = run.aoep[c[0]];
      if (!card) return [c[0], h("td", { colspan: headers.length - 1, class: "muted" }, "no scorecard")];
      var r = [c[0], cellTd(i, c[0], "obligations", card.obligations)];
      ob.forEach(function (k) { r.push(cellTd(i, c[0], k, card.obligations.kinds[k])); });
      r.push(cellTd(i, c[0], "invariants", card.invariants));
      inv.forEach(function (k) { r.push(cellTd(i, c[0], k, card.invariants.kinds[k])); });
      return r;
    });
    add(app, h("table", { class: "data scorecard", id: "scorecard" },
      h("thead", null, h("tr", null, headers.map(function (x) { return h("th", null, x); }))),
      h("tbody", null, rows.map(function (r) {
        return h("tr", null, r.map(function (c) { return c instanceof Node && c.tagName === "TD" ? c : h("td", null, c); }));
      }))));
    add(app, h("h2", null, "Model-independent and answer-dependent tallies"));
    add(app, table(["Condition", "Obligations (no answer read)", "Invariants (no answer read)",
      "Obligations (answers)", "Invariants (answers)"], run.conditions.map(function (c) {
      var card = run.aoep[c[0]] || {};
      var mi = card.model_independent, ad = card.answer_dependent;
      function t(x) { return x ? x.passed + "/" + x.total : "–"; }
      return [c[0], t(mi && mi.obligations), t(mi && mi.invariants),
        ad === null ? "not measured" : t(ad && ad.obligations), ad === null ? "not measured" : t(ad && ad.invariants)];
    })));
  }

  function pageCell(i, cond, key) {
    var run = DATA.runs[i], P = pools(run);
    var card = run.aoep[cond] || {};
    var family = run.kinds.obligations.indexOf(key) >= 0 || key === "obligations" ? "obligations" : "invariants";
    var kinds = key === family ? run.kinds[family] : [key];
    var cell = key === family ? card[family] : (card[family] || { kinds: {} }).kinds[key];
    add(app, h("h1", null, cond + " · " + key + " (" + family + ")"));
    add(app, h("p", null, a(runHref(i, "scorecard"), "← scorecard")));
    if (cell === null) add(app, h("div", { class: "banner" }, "Not measured: an answer-free run asks no answer, and these items read nothing else."));
    var items = [];
    kinds.forEach(function (k) { ((run.aoep_items[cond] || {})[k] || []).forEach(function (it) { items.push([k].concat(it)); }); });
    var passed = items.filter(function (it) { return it[2]; }).length;
    add(app, h("p", { id: "cell-count" }, "metrics: " + (cell ? cell.passed + "/" + cell.total : "–") +
      "; items judged from the records: " + passed + "/" + items.length + " passed."));
    if (cell && (cell.passed !== passed || cell.total !== items.length)) {
      add(app, h("div", { class: "banner" }, "The records judge these items differently from metrics.json: " +
        "run `place report` on the run to bring its metrics up to date."));
    }
    add(app, table(["Kind", "Item", "Verdict", "Evidence", "Page"], items.map(function (it) {
      return [it[0], code(it[1]), status(it[2] ? "pass" : "fail"), P.text(it[3]) || "",
        it[4] ? a(itemHref(i, it[4]), "open") : h("span", { class: "muted" }, "no item page")];
    }), "data aoep-items"));
  }

  // -- item table -----------------------------------------------------------------------

  function state(i) {
    if (!itemState[i]) itemState[i] = { kind: "", cond: "", fam: "", st: "", dist: "", text: "", sort: null, dir: 1, page: 0 };
    return itemState[i];
  }

  function distinct(rows, f) {
    var seen = {}, out = [];
    rows.forEach(function (r) { [].concat(f(r)).forEach(function (v) { if (!seen[v]) { seen[v] = 1; out.push(v); } }); });
    return out;
  }

  var COLUMNS = [
    ["k", "Kind"], ["id", "Item"], ["c", "Condition"], ["fam", "Family"], ["st", "Status"],
    ["dist", "Distractor"], ["sum", "Summary"], ["ans", "Answer"]
  ];

  function pageItems(i) {
    var run = DATA.runs[i], s = state(i);
    var answers = run.header.answers;
    add(app, h("h1", null, "Items"));
    add(app, banners(run));
    add(app, h("p", { class: "muted" }, "One row per (item, condition): queries (status: JointSuccess of the world-a read" +
      (answers ? "" : "; answer-free: state correct, Q* exposed and nothing ineligible") + "), probes, checkpoints " +
      "(S^phys = S*), forgets (no residue that counts), audits (no status) and tasks (decided as the reference). " +
      "Click a header to sort."));
    var conds = run.conditions.map(function (c) { return c[0]; });
    function select(id, label, key, values) {
      var sel = h("select", { id: id, onchange: function () { s[key] = sel.value; s.page = 0; draw(); } },
        h("option", { value: "" }, "all"), values.map(function (v) { return h("option", { value: v }, v); }));
      sel.value = s[key];
      return h("label", null, label, sel);
    }
    var text = h("input", { id: "f-text", type: "search", placeholder: "item, summary, answer", value: s.text,
      oninput: function () { s.text = text.value; s.page = 0; draw(); } });
    add(app, h("div", { class: "filters" },
      select("f-kind", "kind", "kind", distinct(run.rows, function (r) { return r.k; })),
      select("f-cond", "condition", "cond", conds),
      select("f-fam", "family", "fam", distinct(run.rows, function (r) { return r.fam; })),
      select("f-status", "status", "st", ["pass", "fail", "n/a"]),
      select("f-dist", "distractor kind", "dist", distinct(run.rows, function (r) { return r.dist; }).sort()),
      h("label", null, "search", text)));
    var count = h("p", { id: "item-count" });
    var pager = h("div", { class: "pager" });
    var holder = h("div");
    add(app, [count, pager, holder]);

    function matches(r) {
      if (s.kind && r.k !== s.kind) return false;
      if (s.cond && r.c !== s.cond) return false;
      if (s.fam && r.fam !== s.fam) return false;
      if (s.st && r.st !== s.st) return false;
      if (s.dist && r.dist.indexOf(s.dist) < 0) return false;
      if (s.text) {
        var q = s.text.toLowerCase();
        return [r.id, r.sum, r.ans || ""].some(function (v) { return String(v).toLowerCase().indexOf(q) >= 0; });
      }
      return true;
    }

    function draw() {
      var rows = run.rows.filter(matches);
      if (s.sort) {
        var key = s.sort;
        rows = rows.map(function (r, n) { return [r, n]; }).sort(function (x, y) {
          var u = [].concat(x[0][key] === null ? "" : x[0][key]).join(","), v = [].concat(y[0][key] === null ? "" : y[0][key]).join(",");
          var c = u.localeCompare(v, undefined, { numeric: true });
          return c !== 0 ? c * s.dir : x[1] - y[1];
        }).map(function (x) { return x[0]; });
      }
      var pages = Math.max(1, Math.ceil(rows.length / PAGE));
      if (s.page >= pages) s.page = pages - 1;
      var shown = rows.slice(s.page * PAGE, (s.page + 1) * PAGE);
      count.textContent = rows.length + " of " + run.rows.length + " rows" +
        (rows.length > PAGE ? " (rows " + (s.page * PAGE + 1) + "–" + (s.page * PAGE + shown.length) + ")" : "");
      pager.textContent = "";
      if (pages > 1) {
        add(pager, [
          h("button", { id: "prev", disabled: s.page === 0, onclick: function () { s.page--; draw(); } }, "← previous"),
          "page " + (s.page + 1) + " of " + pages,
          h("button", { id: "next", disabled: s.page >= pages - 1, onclick: function () { s.page++; draw(); } }, "next →")
        ]);
      }
      holder.textContent = "";
      var head = h("tr", null, COLUMNS.map(function (c) {
        var label = c[0] === "ans" && !answers ? "Answer (answer-free run: no answer)" : c[1];
        var mark = s.sort === c[0] ? (s.dir > 0 ? " ▲" : " ▼") : "";
        return h("th", { class: "sortable", "data-key": c[0], onclick: function () {
          if (s.sort === c[0]) s.dir = -s.dir; else { s.sort = c[0]; s.dir = 1; }
          draw();
        } }, label + mark);
      }));
      add(holder, h("table", { class: "data", id: "items" }, h("thead", null, head),
        h("tbody", null, shown.map(function (r) {
          return h("tr", { "data-key": r.d, "data-status": r.st },
            h("td", null, r.k), h("td", null, a(itemHref(i, r.d), r.id)), h("td", null, r.c),
            h("td", null, r.fam), h("td", null, status(r.st)), h("td", null, r.dist.join(", ")),
            h("td", null, r.sum),
            h("td", null, r.k === "query" || r.k === "probe" ?
              (answers ? (r.ans === null ? h("span", { class: "muted" }, "no answer") : r.ans)
                : h("span", { class: "muted" }, "answer-free run: no answer")) : ""));
        }))));
    }
    draw();
  }

  // -- item pages -----------------------------------------------------------------------

  function rowsOf(i, kind, id) {
    return DATA.runs[i].rows.filter(function (r) { return r.k === kind && r.id === id; });
  }

  function runsHolding(kind, id) {
    return DATA.runs.map(function (run, i) { return i; }).filter(function (i) { return rowsOf(i, kind, id).length; });
  }

  function itemHeading(i, d, row) {
    var run = DATA.runs[i];
    var cond = run.conditions.filter(function (c) { return c[0] === d.cond; })[0];
    add(app, h("h1", null, d.kind + " " + d.id + " · " + d.cond));
    add(app, banners(run));
    add(app, h("p", null, a(runHref(i, "items"), "← items"), " · status ", status(row ? row.st : "n/a"),
      cond ? h("span", { class: "muted" }, " · producer " + cond[1] + ", read policy " + cond[2]) : null));
    var others = rowsOf(i, d.kind, d.id);
    if (others.length > 1) {
      var links = others.filter(function (r) { return r.c !== d.cond; }).map(function (r, n) {
        return h("span", null, n ? " · " : "", a(itemHref(i, r.d), r.c), " ", status(r.st));
      });
      add(app, links.length > 8
        ? h("details", null, h("summary", null, "The other " + links.length + " conditions"), h("p", null, links))
        : h("p", null, "Other conditions: ", links));
    }
    var holding = runsHolding(d.kind, d.id);
    if (holding.length > 1) {
      add(app, h("p", null, a("#/across/" + enc(d.kind) + "/" + enc(d.id), "This item in " + holding.length + " runs"), "."));
    }
  }

  function exposedBlock(P, e) {
    var facts = e.f.map(function (pair) { return [P.fact(pair[0]), P.text(pair[1])]; });
    var reasons = facts.filter(function (f) { return !f[0][9]; }).map(function (f) { return f[1]; });
    return h("div", { class: "exposed" + (e.x ? " ineligible" : "") },
      h("div", { class: "text" }, P.text(e.t)),
      h("div", { class: "muted" },
        e.x ? h("span", { class: "badge bad" }, "ineligible") : h("span", { class: "badge good" }, "eligible"),
        h("span", { class: "badge info" }, "score " + e.s),
        h("span", { class: "badge info" }, e.v),
        e.d ? h("span", { class: "badge bad" }, "distractor: " + e.d) : null,
        e.p ? h("span", { class: "badge info" }, "pointer " + e.p) : null,
        e.src && e.src.length ? h("span", { class: "badge info" }, "sources " + e.src.join(", ")) : null,
        h("span", { class: "mono" }, " " + e.id)),
      e.x && reasons.length ? h("div", { class: "why" }, "Why: " + reasons.join(" | ")) : null,
      facts.length ? table(["fact (β)", "status", "window", "certified", "readable", "E"], facts.map(function (f) {
        var x = f[0];
        return [h("span", { class: "mono" }, factText(x)), x[4], windowText(x[5], x[6]), String(x[7]), String(x[8]),
          h("span", { class: x[9] ? "st-pass" : "st-fail" }, f[1])];
      }), "facts") : h("div", { class: "muted" }, "β reads no fact from it."),
      e.l !== null ? h("details", null, h("summary", null, "lifecycle metadata"), json(P.blob(e.l))) : null);
  }

  function exposedList(P, exposed) {
    if (!exposed.length) return h("p", { class: "muted" }, "Nothing exposed.");
    return exposed.map(function (e) { return exposedBlock(P, e); });
  }

  function answerPart(run, r, gold) {
    var answers = run.header.answers;
    return kv([
      ["gold", gold.length ? gold.join(", ") : "[] (abstain)"],
      ["raw answer", r.answer === null ? h("span", { class: "muted" }, answers ? "no answer asked for this read" : "answer-free run: no answer") : r.answer],
      ["Ω outcome", r.outcome === null ? (answers ? "–" : "not measured (answer-free run)") : list(r.outcome)],
      ["verdict", r.verdict === null ? (answers ? "–" : "not measured (answer-free run)") : h("span", { class: r.verdict === "correct" ? "st-pass" : "st-fail" }, r.verdict)]
    ]);
  }

  function queryWorld(run, P, d, r, title) {
    if (!r) return h("section", null, h("h3", null, title), h("p", { class: "muted" }, "No read recorded in this world."));
    return h("section", { class: "world" }, h("h3", null, title),
      kv([["state correct", yes(r.state_correct, "S^phys = S*", "S^phys ≠ S*")],
        ["Q* exposed", yes(r.supported, "supported", "not supported")],
        ["ineligible exposure", yes(!r.ineligible, "none", "yes")],
        ["admitted", r.admitted === null ? "– (no admission step)" : String(r.admitted)],
        ["hearsay", r.hearsay.length ? r.hearsay.join(", ") : "none"],
        ["answer score", r.score === null ? (run.header.answers ? "–" : "not measured (answer-free run)") : String(r.score)],
        ["joint success", r.joint === null ? (run.header.answers ? "–" : "not measured (answer-free run)") : yes(r.joint, "yes", "no")]]),
      h("h3", null, "Q* of this world"), factList(P.facts(r.authorized)),
      h("h3", null, "Q_eval (eligible facts in β of the store)"), factList(P.facts(r.evaluated)),
      h("h3", null, "Exposed (" + r.exposed.length + ")"), exposedList(P, r.exposed),
      h("h3", null, "Answer"), answerPart(run, r, d.gold));
  }

  function conditionsSummary(i, d) {
    var run = DATA.runs[i];
    var rows = rowsOf(i, d.kind, d.id).map(function (row) {
      var x = run.details[row.d];
      function w(r) {
        if (!r) return "–";
        var parts = [r.exposed.length + " exposed", r.exposed.filter(function (e) { return e.x; }).length + " ineligible"];
        if (r.supported !== undefined) parts.push(r.supported ? "Q* exposed" : "Q* not exposed");
        if (r.verdict) parts.push("Ω " + list(r.outcome) + " (" + r.verdict + ")");
        return parts.join(", ");
      }
      return d.kind === "query" ? [a(itemHref(i, row.d), row.c), status(row.st), w(x.a), w(x.b)]
        : [a(itemHref(i, row.d), row.c), status(row.st), w(x.clean), w(x.injected)];
    });
    var cols = d.kind === "query" ? ["Condition", "Status", "World a", "World b"] : ["Condition", "Status", "Clean read", "Injected read"];
    return h("details", { open: true }, h("summary", null, "What each condition's read policy exposed"), table(cols, rows));
  }

  function pageQuery(i, d) {
    var run = DATA.runs[i], P = pools(run);
    add(app, kv([["question", d.question], ["family", d.family], ["turn", d.turn + " (" + d.conversation + ")"],
      ["τ", code(d.tau.join(" · "))], ["asker", d.asker], ["read on", d.read_on],
      ["gold", d.gold.length ? d.gold.join(", ") : "[] (abstain)"],
      ["Q* world a", factList(P.facts(d.authorized_a))],
      ["Q* world b", d.authorized_b === null ? "no causal pair" : factList(P.facts(d.authorized_b))],
      ["leakage pair", !run.header.answers ? "not measured (answer-free run)" : d.leak === null || d.leak === undefined ? "not counted" : (d.leak ? "LEAKED (the worlds' outcomes differ)" : "counted, no leak")],
      ["forgotten", d.forgotten.length ? d.forgotten.map(function (f) { return f.join(" · "); }).join("; ") : "none"],
      ["foreign record present", String(d.foreign_present)]]));
    add(app, conditionsSummary(i, d));
    add(app, h("div", { class: "worlds", id: "worlds" },
      queryWorld(run, P, d, d.a, "World a (the trajectory)"), queryWorld(run, P, d, d.b, "World b (the causal pair)")));
    if (d.closed_loop) {
      add(app, h("details", null, h("summary", null, "Closed loop (world a)"),
        h("div", { class: "worlds" }, queryWorld(run, P, d, d.closed_loop, "Closed loop"))));
    }
  }

  function probeRead(run, P, d, r, title) {
    if (!r) return h("section", null, h("h3", null, title), h("p", { class: "muted" }, "No injected read (not a conflict or forged probe)."));
    return h("section", { class: "world" }, h("h3", null, title),
      kv([["Q* exposed", yes(r.supported, "supported", "not supported")],
        ["ineligible exposure", yes(!r.ineligible, "none", "yes")],
        ["admitted", r.admitted === null ? "– (no admission step)" : String(r.admitted)],
        ["hearsay", r.hearsay.length ? r.hearsay.join(", ") : "none"]]),
      h("h3", null, "Exposed (" + r.exposed.length + ")"), exposedList(P, r.exposed),
      h("h3", null, "Answer"), answerPart(run, r, d.gold));
  }

  function pageProbe(i, d) {
    var run = DATA.runs[i], P = pools(run);
    add(app, kv([["question", d.question], ["family", d.family], ["after", d.after + " (" + d.conversation + ")"],
      ["τ", code(d.tau.join(" · "))], ["asker", d.asker], ["read on", d.read_on],
      ["follows", d.follows ? d.follows.join(" ") : "–"], ["gold", d.gold.length ? d.gold.join(", ") : "[] (abstain)"],
      ["Q*", factList(P.facts(d.authorized))], ["conflict value", d.conflict_value],
      ["forged record", d.forged ? JSON.stringify(d.forged) : null],
      ["forged record exposed", d.forged_exposed === null ? undefined : String(d.forged_exposed)],
      ["harmed", d.harmed === null ? (d.conflict_value || d.forged ? (run.header.answers ? "–" : "not measured (answer-free run)") : "–") : yes(!d.harmed, "no", "yes: the answer adopts the injected value")]]));
    add(app, conditionsSummary(i, d));
    add(app, h("div", { class: "worlds", id: "worlds" },
      probeRead(run, P, d, d.clean, "Clean read (the store as its producer left it)"),
      probeRead(run, P, d, d.injected, "Injected read (with the conflict or forged record)")));
  }

  function diffTable(observed, reference) {
    function key(f) { return f.slice(0, 4).join("\u0000"); }
    var o = {}, r = {}, rows = [];
    observed.forEach(function (f) { o[key(f)] = f; });
    reference.forEach(function (f) { r[key(f)] = f; });
    var keys = Object.keys(o).concat(Object.keys(r).filter(function (k) { return !(k in o); })).sort();
    var extra = 0, missing = 0, same = 0;
    keys.forEach(function (k) {
      var inO = k in o, inR = k in r;
      var f = inO ? o[k] : r[k];
      var cls = inO && inR ? "same" : inO ? "extra" : "missing";
      if (cls === "same") same++; else if (cls === "extra") extra++; else missing++;
      rows.push(h("tr", { class: cls }, h("td", null, inO && inR ? "=" : inO ? "+" : "−"),
        h("td", { class: "mono" }, factText(f)),
        h("td", null, inO ? windowText(o[k][4], o[k][5]) : "–"), h("td", null, inR ? windowText(r[k][4], r[k][5]) : "–")));
    });
    return h("div", null,
      h("p", null, same + " in both, ", h("span", { class: "badge bad" }, extra + " only in S^phys (+)"),
        h("span", { class: "badge info" }, missing + " only in S* (−)")),
      h("table", { class: "data diff" }, h("thead", null, h("tr", null, h("th", null, ""), h("th", null, "fact"),
        h("th", null, "S^phys window"), h("th", null, "S* window"))), h("tbody", null, rows)));
  }

  function pageCheckpoint(i, d) {
    var run = DATA.runs[i], P = pools(run);
    var transitions = P.blob(d.transitions) || [], gt = P.blob(d.governance_transitions) || [];
    add(app, kv([["turn", d.turn + " (" + d.conversation + ", " + d.date + ")"], ["checkpoint", d.checkpoint],
      ["query", d.query], ["producer", d.producer], ["previous", d.previous ? d.previous.join(" ") : "–"]]));
    if (transitions.length) {
      add(app, h("h2", null, "What the turn's events did to S*"));
      add(app, table(["event", "kind", "slot", "removed", "added"], transitions.map(function (t) {
        return [t.event, t.kind, t.slot.join(" · "), list(t.removed), list(t.added)];
      })));
    }
    if (gt.length) { add(app, h("h2", null, "Governance transitions")); add(app, json(gt)); }
    add(app, h("h2", null, "S^phys (observed) vs S* (reference)"));
    var worlds = Object.keys(d.worlds);
    add(app, h("div", { class: worlds.length > 1 ? "worlds" : "", id: "worlds" }, worlds.map(function (w) {
      var x = d.worlds[w];
      var untrusted = P.blob(x.untrusted) || [];
      return h("section", { class: "world" }, h("h3", null, "World " + w + (w === "a" ? " (the trajectory)" : " (the causal pair)")),
        h("p", null, yes(x.match, "S^phys = S*", "S^phys ≠ S*"), " F1 " + x.f1),
        diffTable(P.facts(P.blob(x.o)), P.facts(P.blob(x.r))),
        untrusted.length ? h("details", null, h("summary", null, untrusted.length + " untrusted values (only a tool stated them)"),
          h("ul", null, untrusted.map(function (u) { return h("li", { class: "mono" }, u.join(" = ")); }))) : null,
        x.gov !== null ? h("details", null, h("summary", null, "Γ^phys beside Γ*"), json(P.blob(x.gov))) : null);
    })));
    if (d.step) {
      add(app, h("h2", null, "The update step that wrote the turn"));
      add(app, kv([["step", String(d.step.step)], ["turns", list(d.step.turns)], ["distractor", d.step.distractor || "none"],
        ["distractors since the previous checkpoint", d.step.distractors_since.length ? d.step.distractors_since.join(", ") : "none"],
        ["failures", d.step.failures.length ? d.step.failures.join("; ") : "none"]]));
      add(app, h("details", null, h("summary", null, "operations"), json(P.blob(d.step.ops))));
    }
  }

  function highlighted(text, values) {
    var vs = values.filter(function (v) { return v; }).sort(function (x, y) { return y.length - x.length; });
    if (!vs.length) return text;
    var out = [], rest = text;
    while (rest.length) {
      var best = -1, which = "";
      vs.forEach(function (v) {
        var at = rest.toLowerCase().indexOf(v.toLowerCase());
        if (at >= 0 && (best < 0 || at < best)) { best = at; which = v; }
      });
      if (best < 0) { out.push(rest); break; }
      out.push(rest.slice(0, best), h("mark", null, rest.slice(best, best + which.length)));
      rest = rest.slice(best + which.length);
    }
    return out;
  }

  function pageForget(i, d) {
    var run = DATA.runs[i], P = pools(run);
    add(app, kv([["event", d.id], ["producer", d.producer], ["slot", d.slot.join(" · ")],
      ["checkpoint", d.checkpoint ? a(itemHref(i, "checkpoint|" + d.checkpoint + "|" + d.cond), d.checkpoint) : "–"]]));
    d.checks.forEach(function (c) {
      add(app, h("h2", null, c.check === "after" ? "Right after the forget's step" : "At the end of the run"));
      add(app, h("p", null, "Values checked: " + list(c.values)));
      if (!c.residue.length) { add(app, h("p", { class: "st-pass" }, "No residue: no stored string from which β reads a checked value.")); return; }
      add(app, table(["residue (the stored text that holds the value)", "where", "counts"], c.residue.map(function (r) {
        return [h("span", null, highlighted(P.text(r.t), c.values)), r.where || "–",
          r.counted ? h("span", { class: "badge bad" }, "residue") : h("span", { class: "badge info" }, "stored after the forget: new information")];
      }), "data residue"));
    });
  }

  function pageAudit(i, d) {
    var run = DATA.runs[i], P = pools(run);
    var items = P.blob(d.items) || [];
    add(app, kv([["producer", d.producer], ["stored records", String(items.length)],
      ["classes", Object.keys(d.counts).map(function (k) { return d.counts[k] + " " + k; }).join(", ")]]));
    add(app, table(["record", "evidence pointer", "provenance"], items.map(function (x) {
      return [code(x[0]), x[1] || "–", x[2]];
    })));
  }

  function pageTask(i, d) {
    var run = DATA.runs[i], P = pools(run);
    add(app, kv([["asker", d.asker], ["requested at", d.turn + " (" + d.conversation + ")"], ["run turn", d.run_turn],
      ["reference decision", d.reference.decision + (d.reference.reasons.length ? " (" + d.reference.reasons.join(", ") + ")" : "")],
      ["reference args", d.reference.args ? JSON.stringify(d.reference.args) : "–"], ["links", list(d.reference.links)],
      ["handle", d.reference.handle], ["foreign record present", String(d.foreign_present)]]));
    d.deliveries.forEach(function (x) {
      add(app, h("h2", null, "Delivery " + x.delivery + (x.redelivery ? " (redelivery)" : "")));
      add(app, kv([["decision", x.decision.kind + (x.decision.reasons.length ? " (" + x.decision.reasons.join(", ") + ")" : "")],
        ["args", x.decision.args ? JSON.stringify(x.decision.args) : "–"], ["as the reference", yes(x.matches, "yes", "no")],
        ["request held", x.request], ["read on", x.read_on]]));
      x.reads.forEach(function (r, n) {
        add(app, h("h3", null, "Need " + (n + 1) + ": τ " + r.tau.join(" · ")));
        add(app, exposedList(P, r.exposed));
      });
    });
  }

  function pageItem(i, key) {
    var run = DATA.runs[i], d = run.details[key];
    if (!d) { add(app, h("p", null, "No item " + key + " in this run.")); return; }
    var row = run.rows.filter(function (r) { return r.d === key; })[0];
    itemHeading(i, d, row);
    ({ query: pageQuery, probe: pageProbe, checkpoint: pageCheckpoint, forget: pageForget,
      audit: pageAudit, task: pageTask })[d.kind](i, d);
  }

  // -- across runs and the comparison ---------------------------------------------------

  function shortSha(run) { return ((run.header.trajectory || {}).sha256 || "?").slice(0, 12); }

  function pageAcross(kind, id) {
    add(app, h("h1", null, kind + " " + id + " across runs"));
    var holding = runsHolding(kind, id);
    if (!holding.length) { add(app, h("p", null, "No run holds this item.")); return; }
    var shas = distinct(holding, function (i) { return shortSha(DATA.runs[i]); });
    if (shas.length > 1) {
      add(app, h("div", { class: "banner" }, "These runs are on " + shas.length + " trajectories (sha256 " + shas.join(", ") +
        "): the same id may name a different item in each."));
    }
    var conds = [];
    holding.forEach(function (i) { rowsOf(i, kind, id).forEach(function (r) { if (conds.indexOf(r.c) < 0) conds.push(r.c); }); });
    add(app, h("table", { class: "data", id: "across" },
      h("thead", null, h("tr", null, h("th", null, "Run"), conds.map(function (c) { return h("th", null, c); }))),
      h("tbody", null, holding.map(function (i) {
        var rows = rowsOf(i, kind, id);
        return h("tr", null, h("td", null, a(runHref(i), DATA.runs[i].label), h("div", { class: "muted mono" }, shortSha(DATA.runs[i]))), conds.map(function (c) {
          var r = rows.filter(function (x) { return x.c === c; })[0];
          return h("td", null, r ? [a(itemHref(i, r.d), r.st), r.ans !== null && r.ans !== undefined ? h("div", { class: "muted" }, r.ans) : null] : "–");
        }));
      }))));
  }

  function pageCompare() {
    var cmp = DATA.compare;
    add(app, h("h1", null, "Compare runs"));
    var base = DATA.runs[cmp.baseline];
    add(app, h("p", null, "Baseline: ", a(runHref(cmp.baseline), base.label), ". Each difference is the other run minus " +
      "the baseline, over the items both hold (same id, same condition), with a 95 % paired bootstrap interval " +
      "(place.metrics.effects.pair_bootstrap, seed " + cmp.seed + ", " + cmp.resamples + " resamples)."));
    if (!cmp.pairs.length) add(app, h("p", { class: "muted" }, "Only one run: nothing to compare."));
    cmp.pairs.forEach(function (pair) {
      var other = DATA.runs[pair.other];
      add(app, h("h2", null, other.label + " − " + base.label));
      if (pair.unpaired) {
        add(app, h("p", { class: "muted" }, "Not paired: the run is on " + pair.unpaired + " (trajectory sha256 " +
          shortSha(other) + ", the baseline's " + shortSha(base) + "), where the same id names a different item."));
        return;
      }
      if (!pair.rows.length) { add(app, h("p", { class: "muted" }, "The runs share no condition with items of the same id.")); return; }
      add(app, table(["Condition", "Endpoint", "Over", "Baseline", "Other", "Difference [95 %]", "n", "Differing items"],
        pair.rows.map(function (r) {
          if (r.not_measured) return [r.condition, r.endpoint, r.over, "not measured", "not measured", "not measured (an answer-free run)", "–", ""];
          var kind = r.over.indexOf("probe") === 0 ? "probe" : r.over.indexOf("post-update") === 0 ? "checkpoint" : "query";
          return [r.condition, r.endpoint, r.over, String(r.base), String(r.other),
            r.difference + (r.interval ? " [" + r.interval[0] + ", " + r.interval[1] + "]" : ""), String(r.n),
            h("span", null, r.differing.slice(0, 20).map(function (id, n) {
              var key = kind === "checkpoint" ? id + "/post-update" : id;
              return h("span", null, n ? ", " : "", a("#/across/" + enc(kind) + "/" + enc(key), id));
            }), r.differing.length > 20 ? " … (" + r.differing.length + ")" : "")];
        }), "data compare"));
    });
    if (cmp.left_out.length) {
      add(app, h("p", { class: "muted" }, cmp.left_out.length + " more runs are not compared (at most " + cmp.pairs.length + ")."));
    }
    var shared = {};
    DATA.runs.forEach(function (run, i) {
      var seen = {};
      run.rows.forEach(function (r) { var k = r.k + "\u0000" + r.id; if (!seen[k]) { seen[k] = 1; (shared[k] = shared[k] || []).push(i); } });
    });
    var keys = Object.keys(shared).filter(function (k) { return shared[k].length > 1; });
    add(app, h("h2", null, "Items in more than one run (" + keys.length + ")"));
    var kinds = {};
    keys.forEach(function (k) { var p = k.split("\u0000"); (kinds[p[0]] = kinds[p[0]] || []).push(p[1]); });
    Object.keys(kinds).forEach(function (kind) {
      add(app, h("details", null, h("summary", null, kind + " (" + kinds[kind].length + ")"),
        h("p", null, kinds[kind].map(function (id, n) { return h("span", null, n ? " · " : "", a("#/across/" + enc(kind) + "/" + enc(id), id)); }))));
    });
  }

  window.addEventListener("hashchange", route);
  route();
})();

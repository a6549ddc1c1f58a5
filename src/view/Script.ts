/**
 * The viewer's one page script (`/static/view.js`), plain JavaScript with no library, so pages stay
 * light: a run's cell table sorted, filtered and searched in the browser (rows drawn a page at a
 * time, so 10,000 cells stay quick), a running run's progress and interim scorecards polled from
 * `/api/runs/RUN/progress`, and "expand all / collapse all" on transcripts. Every page reads
 * without it: the server draws the first page of cells and every message.
 */
export const viewScript = `"use strict";
(function () {
  var esc = function (s) {
    return String(s).replace(/[&<>"']/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]; });
  };
  var score = function (x) { return Number(x).toFixed(3); };
  var attemptHref = function (c) {
    return c.attempt ? "/runs/" + encodeURIComponent(c.attempt.runId) + "/attempts/" + encodeURIComponent(c.attempt.id) : null;
  };
  var verdictOf = function (c) { return c.ended !== null ? "ended" : c.reward >= 1 ? "pass" : c.reward > 0 ? "partial" : "fail"; };

  // Expand or collapse every fold under a target.
  document.querySelectorAll("button[data-fold]").forEach(function (button) {
    button.addEventListener("click", function () {
      var open = button.getAttribute("data-fold") === "open";
      document.querySelectorAll(button.getAttribute("data-target") + " details").forEach(function (d) { d.open = open; });
    });
  });

  // ---------------------------------------------------------------------------------------------
  // The cell table
  var cells = (function () {
    var root = document.getElementById("cells");
    var source = document.getElementById("cells-data");
    if (!root || !source) return null;
    var rows = JSON.parse(source.textContent || "[]");
    var form = root.querySelector("form.filters");
    var tbody = root.querySelector("tbody");
    var count = root.querySelector(".cell-count");
    var pager = root.querySelector(".pager");
    var showBenchmark = root.hasAttribute("data-benchmarks");
    var sort = { key: null, dir: 1 };
    var page = 0;
    var size = Number(root.getAttribute("data-page-size")) || 100;
    var shown = [];
    var field = function (name) { return form.elements.namedItem(name); };
    var value = function (name) { var el = field(name); return el ? el.value : ""; };

    // A select's options from the rows' values, keeping what is chosen.
    var options = function (name, values, label) {
      var el = field(name);
      if (!el) return;
      var chosen = el.value;
      var keep = Array.prototype.slice.call(el.options, 0, Number(el.getAttribute("data-fixed")) || 1).map(function (o) { return o.outerHTML; });
      var list = Array.from(new Set(values)).sort();
      el.innerHTML = keep.join("") + list.map(function (v) { return "<option value=\\"" + esc(v) + "\\">" + esc(label ? label(v) : v) + "</option>"; }).join("");
      el.value = chosen;
      if (el.value !== chosen) el.value = "";
    };
    var fillOptions = function () {
      options("candidate", rows.map(function (r) { return r.candidate; }));
      options("stratum", rows.map(function (r) { return r.stratum; }).filter(function (s) { return s !== null; }));
      options("ended", rows.map(function (r) { return r.ended; }).filter(function (s) { return s !== null; }));
      options("check", [].concat.apply([], rows.map(function (r) { return r.failed; })));
    };

    var globToRegExp = function (text) {
      return new RegExp("^" + text.split("*").map(function (p) { return p.replace(/[.+?^$()|[\\]{}\\\\]/g, "\\\\$&"); }).join(".*") + "$", "i");
    };
    var matcher = function () {
      var candidate = value("candidate"), stratum = value("stratum"), verdict = value("verdict"), ended = value("ended");
      var fault = value("fault"), check = value("check");
      var task = value("task").trim();
      var taskTest = task === "" ? null : task.indexOf("*") >= 0 ? globToRegExp(task) : null;
      var taskLower = task.toLowerCase();
      var words = value("q").toLowerCase().split(/\\s+/).filter(Boolean);
      return function (r) {
        if (candidate && r.candidate !== candidate) return false;
        if (stratum && r.stratum !== stratum) return false;
        if (verdict && verdictOf(r) !== verdict) return false;
        if (ended === "(none)" ? r.ended !== null : ended && r.ended !== ended) return false;
        if (fault === "none" && r.faults > 0) return false;
        if (fault === "any" && r.faults === 0) return false;
        if (fault === "injected" && r.injected === 0) return false;
        if (fault === "live" && r.live === 0) return false;
        if (check && r.failed.indexOf(check) < 0) return false;
        if (task !== "" && (taskTest ? !taskTest.test(r.task) : r.task.toLowerCase().indexOf(taskLower) < 0)) return false;
        if (words.length > 0) {
          var text = r._text || (r._text = [r.benchmark, r.task, r.stratum || "", r.candidate, r.ended || "", verdictOf(r)].concat(r.failed).join(" ").toLowerCase());
          for (var i = 0; i < words.length; i++) if (text.indexOf(words[i]) < 0) return false;
        }
        return true;
      };
    };
    var keyOf = {
      benchmark: function (r) { return r.benchmark; },
      task: function (r) { return r.task; },
      stratum: function (r) { return r.stratum || ""; },
      candidate: function (r) { return r.candidate; },
      repetition: function (r) { return r.repetition; },
      reward: function (r) { return r.reward; },
      verdict: function (r) { return verdictOf(r); },
      ended: function (r) { return r.ended || ""; },
      faults: function (r) { return r.faults; },
      failed: function (r) { return r.failed.join(" "); }
    };
    var rowHtml = function (r) {
      var href = attemptHref(r);
      var v = verdictOf(r);
      var reward = href ? "<a class=\\"attempt\\" href=\\"" + esc(href) + "\\">" + score(r.reward) + "</a>" : score(r.reward);
      var faults = r.faults === 0 ? "" : [r.injected > 0 ? r.injected + " injected" : "", r.live > 0 ? r.live + " live" : ""].filter(Boolean).join(", ");
      return "<tr class=\\"cell-row " + v + "\\" data-candidate=\\"" + esc(r.candidate) + "\\" data-task=\\"" + esc(r.task) + "\\">" +
        (showBenchmark ? "<td class=\\"left\\">" + esc(r.benchmark) + "</td>" : "") +
        "<td class=\\"left task\\">" + esc(r.task) + "</td><td class=\\"left\\">" + esc(r.stratum || "") + "</td><td class=\\"left\\">" + esc(r.candidate) +
        "</td><td class=\\"right\\">" + r.repetition + "</td><td class=\\"right cell " + v + "\\">" + reward + "</td><td class=\\"left\\"><span class=\\"vbadge " + v + "\\">" + v +
        "</span></td><td class=\\"left\\">" + esc(r.ended || "") + "</td><td class=\\"left\\">" + esc(faults) + "</td><td class=\\"left failed\\">" + esc(r.failed.join(", ")) + "</td></tr>";
    };
    var render = function () {
      var pages = Math.max(1, Math.ceil(shown.length / size));
      if (page >= pages) page = pages - 1;
      var from = page * size;
      var slice = shown.slice(from, from + size);
      tbody.innerHTML = slice.length === 0 ? "<tr><td class=\\"left\\" colspan=\\"10\\">No cell matches.</td></tr>" : slice.map(rowHtml).join("");
      count.textContent = shown.length === rows.length ? rows.length + " cells" : shown.length + " of " + rows.length + " cells";
      root.setAttribute("data-shown", String(shown.length));
      root.setAttribute("data-total", String(rows.length));
      pager.querySelector(".range").textContent = shown.length === 0 ? "" : "rows " + (from + 1) + "–" + (from + slice.length) + " (page " + (page + 1) + " of " + pages + ")";
      pager.querySelector("[data-page=prev]").disabled = page === 0;
      pager.querySelector("[data-page=next]").disabled = page >= pages - 1;
    };
    var apply = function () {
      var started = performance.now();
      var test = matcher();
      shown = rows.filter(test);
      if (sort.key !== null) {
        var key = keyOf[sort.key];
        var dir = sort.dir;
        shown.sort(function (a, b) { var x = key(a), y = key(b); return x < y ? -dir : x > y ? dir : 0; });
      }
      render();
      root.setAttribute("data-filter-ms", (performance.now() - started).toFixed(1));
      root.setAttribute("data-applied", String(Number(root.getAttribute("data-applied") || 0) + 1));
    };
    // The filters live in the address, so a filtered view can be linked and survives a reload.
    var remember = function () {
      var params = new URLSearchParams();
      Array.prototype.forEach.call(form.elements, function (el) { if (el.name && el.value) params.set(el.name, el.value); });
      if (sort.key !== null) params.set("sort", (sort.dir < 0 ? "-" : "") + sort.key);
      var query = params.toString();
      history.replaceState(null, "", location.pathname + (query ? "?" + query : "") + location.hash);
    };
    var restore = function () {
      var params = new URLSearchParams(location.search);
      Array.prototype.forEach.call(form.elements, function (el) { if (el.name && params.has(el.name)) el.value = params.get(el.name); });
      var s = params.get("sort");
      if (s) sort = { key: s.replace(/^-/, ""), dir: s.charAt(0) === "-" ? -1 : 1 };
      if (!keyOf[sort.key]) sort = { key: null, dir: 1 };
    };
    var marks = function () {
      root.querySelectorAll("th[data-sort]").forEach(function (th) {
        th.setAttribute("aria-sort", th.getAttribute("data-sort") === sort.key ? (sort.dir > 0 ? "ascending" : "descending") : "none");
      });
    };

    form.addEventListener("input", function () { page = 0; apply(); remember(); });
    form.addEventListener("change", function () { page = 0; apply(); remember(); });
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    form.addEventListener("reset", function () { setTimeout(function () { page = 0; apply(); remember(); }, 0); });
    root.querySelectorAll("th[data-sort]").forEach(function (th) {
      th.addEventListener("click", function () {
        var key = th.getAttribute("data-sort");
        sort = sort.key === key ? { key: key, dir: -sort.dir } : { key: key, dir: 1 };
        marks();
        apply();
        remember();
      });
    });
    pager.addEventListener("click", function (e) {
      var to = e.target.closest && e.target.closest("[data-page]");
      if (!to) return;
      page += to.getAttribute("data-page") === "next" ? 1 : -1;
      if (page < 0) page = 0;
      render();
    });
    fillOptions();
    restore();
    marks();
    apply();
    root.setAttribute("data-ready", "");
    return {
      replace: function (next) { rows = next; fillOptions(); apply(); }
    };
  })();

  // ---------------------------------------------------------------------------------------------
  // A running run: progress and interim scorecards from the progress endpoint, cells when they change
  var live = document.querySelector("[data-progress]");
  if (live) {
    var runId = live.getAttribute("data-run");
    var every = Number(live.getAttribute("data-poll")) || 1000;
    var polls = 0;
    var written = Number(live.querySelector(".written").getAttribute("data-written"));
    var status = function (text) { var el = document.getElementById("live-status"); if (el) el.textContent = text; };
    var show = function (p) {
      var w = live.querySelector(".written");
      w.setAttribute("data-written", String(p.written));
      w.setAttribute("data-total", String(p.total));
      w.textContent = p.written + " of " + p.total;
      var skipped = live.querySelector(".skipped");
      if (skipped) skipped.textContent = p.skipped > 0 ? ", " + p.skipped + " skipped" : "";
      var bar = live.querySelector(".bar");
      bar.setAttribute("aria-valuenow", String(p.written));
      bar.firstElementChild.style.width = (p.total > 0 ? Math.min(100, (100 * p.written) / p.total) : 0).toFixed(1) + "%";
      live.querySelector("tbody.interim").innerHTML = p.interim.map(function (s) {
        return "<tr class=\\"interim\\" data-candidate=\\"" + esc(s.candidate) + "\\" data-n=\\"" + s.n + "\\"><td class=\\"left\\">" + esc(s.benchmark) + "</td><td class=\\"left\\">" + esc(s.candidate) +
          "</td><td class=\\"right\\">" + s.n + "</td><td class=\\"right\\">" + score(s.meanReward) + "</td><td class=\\"right\\">" + s.passed + "</td><td class=\\"right\\">" + s.ended + "</td></tr>";
      }).join("");
    };
    var tick = function () {
      fetch("/api/runs/" + encodeURIComponent(runId) + "/progress", { cache: "no-store" })
        .then(function (res) { return res.json(); })
        .then(function (p) {
          polls += 1;
          document.body.setAttribute("data-polls", String(polls));
          // Finished or stopped: the page as the server draws it now (the report, for a finished run).
          if (p.state !== "running") { location.reload(); return false; }
          show(p);
          status("updated " + new Date().toLocaleTimeString());
          if (p.written === written || !cells) return true;
          written = p.written;
          return fetch("/api/runs/" + encodeURIComponent(runId) + "/cells", { cache: "no-store" })
            .then(function (res) { return res.json(); })
            .then(function (body) { cells.replace(body.cells); return true; });
        })
        .then(function (again) { if (again) setTimeout(tick, every); },
          function (e) { status("the viewer did not answer (" + e + "); trying again"); setTimeout(tick, every); });
    };
    setTimeout(tick, every);
  }

  // Every handler is attached: the script is deferred, so a page can be shown (and clicked) before this.
  document.documentElement.setAttribute("data-script", "ready");
})();
`

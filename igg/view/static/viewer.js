/* IGG graph viewer. Draws a graph payload (see igg/view/data.py) with sigma.js (WebGL) over a graphology
 * graph; filters by type, searches by name, shows details with provenance, lists iterations with their
 * rejections. A big graph opens aggregated into its groups (igg/view/aggregate.py), which expand and
 * collapse; focus views show a node's neighbourhood, a path, or what depends on a node.
 * Two modes (from the #igg-config JSON):
 *   "static": the graph is embedded in the page (#igg-graph): the self-contained HTML export.
 *   "server": the page talks to IGG's HTTP app under config.api: session list, a session's graph, its
 *             iterations, the graph after any iteration (from the store) and live growth over SSE.
 * Every text from the graph reaches the DOM through textContent, never as HTML. */
(function () {
  "use strict";

  var config = JSON.parse(document.getElementById("igg-config").textContent);
  var NODE_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#2f8f9d", "#a0cbe8", "#8cd17d", "#d37295", "#b6992d", "#86bcb6", "#e49444", "#6b5b95", "#d4a6c8",
    "#499894", "#79706e"];
  var EDGE_COLORS = ["#8a9bb5", "#c9a27e", "#88b08a", "#c98a8b", "#8fb8b4", "#c9b771", "#a995a3", "#c9a4aa",
    "#a4968b", "#7fa6ad"];
  var LIST_LIMIT = 300;
  var COLLATOR = new Intl.Collator(undefined, { sensitivity: "base", numeric: true });
  var MISSING = "#9aa0a6";
  var GROUP_COLORS = ["#3b6fb6", "#e07b24", "#3f9a4a", "#d1423f", "#5fb0aa", "#d9b626", "#9b5fa0", "#f08aa0",
    "#8a6248", "#1f7f8c", "#7fb2e0", "#8cc06f", "#c45584", "#a88a1c", "#4d4d99", "#d4884a", "#5d8f3a", "#b0417a"];
  var GROUP_BUDGET = 160;    // items drawn when an aggregated graph opens (the biggest groups open until then)
  var FORCED_LABELS = 16;    // closed groups labelled at any zoom, biggest first
  var FOCUS_LIMIT = 300;     // the export's budget for a neighbourhood or the dependents of a node
  var FOCUS_TOKENS = 6000;   // the live query's token budget for the same
  var LINE_ABOVE = 5000;      // drawn edges past which they are lines without arrowheads (and most are thin)
  var THICK_EDGES = 500;     // then only the heaviest bundles keep their width (thinOut)
  var EDGE_PROGRAMS = { arrow: Sigma.rendering.EdgeArrowProgram, line: Sigma.rendering.EdgeRectangleProgram };
  var THIN_PROGRAMS = Object.assign({ thin: Sigma.rendering.EdgeLineProgram }, EDGE_PROGRAMS);  // once needed
  var STORE_KEY = "igg.view.hiddenEdgeTypes";
  var DEFAULT_HIDDEN_EDGES = ["CONTAINS"];

  var view = {
    payload: null, graph: null, renderer: null, layout: null, layoutTimer: null, model: null, pos: {},
    expanded: new Set(), aggregated: false, everToggled: false, focus: null, trail: null, rep: null, drawn: null,
    colorBy: "type", nodeColor: {}, edgeColor: {}, hiddenNodeTypes: new Set(), hiddenEdgeTypes: null,
    query: "", matches: null, matchedItems: null, selected: null, selectedEdge: null, neighbors: null,
    sessionId: null, events: null, shownIteration: null, lastIteration: 0, refreshing: false, refreshAgain: false,
    firstRenderMs: null, ready: false, timings: {}
  };
  window.iggView = view;  // read by the tests and the benchmark (ready, firstRenderMs, counts)
  view.merge = function (payload) { mergeGraph(payload); };  // what a live refresh does, for the tests

  function $(id) { return document.getElementById(id); }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (k === "text") { node.textContent = attrs[k]; }
        else if (k === "class") { node.className = attrs[k]; }
        else if (k.slice(0, 2) === "on") { node.addEventListener(k.slice(2), attrs[k]); }
        else { node.setAttribute(k, attrs[k]); }
      });
    }
    (children || []).forEach(function (c) { if (c) { node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); } });
    return node;
  }

  function showMessage(text) {
    var box = $("message");
    box.textContent = text || "";
    box.hidden = !text;
  }

  function valueText(value) {
    if (value === null || value === undefined) { return "—"; }
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  // ---- data access (server mode) ---------------------------------------------------------------------
  function api(path) {
    return fetch(config.api + path, { credentials: "same-origin", headers: { "accept": "application/json" } })
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          if (!response.ok) {
            var err = body && body.error ? body.error.code + ": " + body.error.message : "HTTP " + response.status;
            throw new Error(err);
          }
          return body;
        });
      });
  }

  // ---- sessions list ---------------------------------------------------------------------------------
  function showSessions() {
    stopLive();
    $("graph-view").hidden = true;
    $("sessions-view").hidden = false;
    $("nav").hidden = true;
    $("title").textContent = "IGG sessions";
    $("summary").textContent = "";
    document.title = "IGG sessions";
    api("/sessions").then(function (body) {
      var tbody = $("sessions-table").tBodies[0];
      tbody.textContent = "";
      body.sessions.forEach(function (s) {
        var link = el("a", { href: "#session=" + encodeURIComponent(s.session_id), text: s.session_id });
        tbody.appendChild(el("tr", null, [
          el("td", null, [link]), el("td", { "class": "goal", title: s.goal || "", text: s.goal || "" }),
          el("td", { text: s.status }), el("td", { text: String(s.iteration) }), el("td", { text: String(s.nodes) }),
          el("td", { text: String(s.edges) }), el("td", { text: s.stop_reason || "" })]));
      });
      if (!body.sessions.length) {
        tbody.appendChild(el("tr", null, [el("td", { colspan: "7", text: "No sessions yet: run one with igg run --store, or start one over the API." })]));
      }
      showMessage("");
    }).catch(function (e) { showMessage("Could not list the sessions: " + e.message); });
  }

  // ---- one session (server mode) ---------------------------------------------------------------------
  function openSession(sessionId) {
    stopLive();
    view.sessionId = sessionId;
    view.shownIteration = null;
    $("sessions-view").hidden = true;
    $("graph-view").hidden = false;
    $("nav").hidden = false;
    var path = "/sessions/" + encodeURIComponent(sessionId);
    Promise.all([api(path + "/graph"), api(path + "/iterations")]).then(function (both) {
      var payload = both[0];
      payload.iterations = both[1].iterations;
      showGraph(payload);
      setupSlider(both[1]);
      if (payload.meta.status !== "finished") { startLive(sessionId); }
      if (straddled(payload, both[1])) { scheduleRefresh(); }
      showMessage("");
    }).catch(function (e) { showMessage("Could not load session " + sessionId + ": " + e.message); });
  }

  // the graph and its iterations are two reads: a step another writer stores between them leaves them apart,
  // and no event may follow it (the stream saw it first); read both again, a few times at most
  function straddled(payload, history) {
    var graphAt = payload.meta.last_iteration;
    var apart = graphAt !== undefined && graphAt !== (history.last_iteration || 0);
    view.rereads = apart ? (view.rereads || 0) + 1 : 0;
    return apart && view.rereads <= 3;
  }

  function setupSlider(history) {
    var box = $("slider-box"), slider = $("iteration-slider");
    view.lastIteration = history.last_iteration || 0;
    if (!history.from_store || view.lastIteration < 1) { box.hidden = true; return; }
    box.hidden = false;
    slider.max = String(view.lastIteration);
    if (view.shownIteration === null) { slider.value = String(view.lastIteration); }
    updateSliderLabel();
  }

  function updateSliderLabel() {
    var slider = $("iteration-slider");
    var atEnd = Number(slider.value) >= Number(slider.max);
    $("iteration-value").textContent = slider.value + " of " + slider.max;
    $("live-badge").textContent = atEnd ? (view.events ? "live" : "latest") : "";
  }

  function onSlider() {
    var slider = $("iteration-slider");
    var k = Number(slider.value);
    updateSliderLabel();
    clearTimeout(view.sliderTimer);
    view.sliderTimer = setTimeout(function () {
      var atEnd = k >= Number(slider.max);
      view.shownIteration = atEnd ? null : k;
      var query = atEnd ? "" : "?iteration=" + k;
      api("/sessions/" + encodeURIComponent(view.sessionId) + "/graph" + query).then(function (payload) {
        payload.iterations = view.payload.iterations;
        mergeGraph(payload);
      }).catch(function (e) { showMessage("Could not load iteration " + k + ": " + e.message); });
    }, 120);
  }

  function startLive(sessionId) {
    if (!window.EventSource) { return; }
    var source = new EventSource(config.api + "/sessions/" + encodeURIComponent(sessionId) + "/events");
    view.events = source;
    var onChange = function () { scheduleRefresh(); };
    // once listening (and after each reconnection), fetch again: a step stored between the page's first load
    // and this connection sends no event of its own
    source.onopen = onChange;
    source.addEventListener("iteration_finished", onChange);
    source.addEventListener("run_finished", function () { scheduleRefresh(); stopLive(); });
    source.addEventListener("end", function () { scheduleRefresh(); stopLive(); });
    source.onerror = function () {
      if (source.readyState === EventSource.CLOSED) { stopLive(); }
    };
    updateSliderLabel();
  }

  function stopLive() {
    if (view.events) { view.events.close(); view.events = null; }
    if ($("iteration-slider")) { updateSliderLabel(); }
  }

  function scheduleRefresh() {
    if (view.refreshing) { view.refreshAgain = true; return; }
    view.refreshing = true;
    var path = "/sessions/" + encodeURIComponent(view.sessionId);
    // a page that has its communities keeps them (new nodes join their neighbours'): no Louvain per refresh
    var keep = view.model && view.model.kind === "community" && view.shownIteration === null ? "?communities=false" : "";
    Promise.all([api(path + "/graph" + keep), api(path + "/iterations")]).then(function (both) {
      var payload = both[0];
      payload.iterations = both[1].iterations;
      var slider = $("iteration-slider");
      var following = view.shownIteration === null;
      setupSlider(both[1]);
      if (following) {
        slider.value = slider.max;
        mergeGraph(payload);
      } else {
        view.payload.iterations = payload.iterations;
        renderIterations();
      }
      updateSliderLabel();
      if (straddled(payload, both[1])) { view.refreshAgain = true; }
    }).catch(function (e) { showMessage("Live update failed: " + e.message); }).then(function () {
      view.refreshing = false;
      if (view.refreshAgain) { view.refreshAgain = false; scheduleRefresh(); }
    });
  }

  // ---- building and drawing the graph ----------------------------------------------------------------
  function assignColors(payload) {
    payload.node_types.forEach(function (t, i) {
      if (!view.nodeColor[t]) { view.nodeColor[t] = NODE_COLORS[Object.keys(view.nodeColor).length % NODE_COLORS.length]; }
    });
    payload.edge_types.forEach(function (t) {
      if (!view.edgeColor[t]) { view.edgeColor[t] = EDGE_COLORS[Object.keys(view.edgeColor).length % EDGE_COLORS.length]; }
    });
  }

  // ---- the model (viewer-model.js) over this page's state ------------------------------------------------
  /* A big graph is drawn aggregated: groups (payload.grouping) stand for their members, edges between groups
   * are bundled and weighted by how many edges they carry; viewer-model.js holds the group tree. */
  var M = window.iggModel;
  var buildModel = M.buildModel, sizeOf = M.sizeOf, distancesFrom = M.distancesFrom;
  function isGroup(id) { return M.isGroup(view.model, id); }
  function labelOf(id) { return M.labelOf(view.model, id); }
  function ancestors(id) { return M.ancestors(view.model, id); }
  function computeVisible() { return M.computeVisible(view.model, view.aggregated, view.expanded); }
  function autoExpand() { view.expanded = M.autoExpand(view.model, view.aggregated, GROUP_BUDGET); }
  function placeChildren(kids, center, pos, deep) { M.placeChildren(view.model, kids, center, pos, deep); }
  function placeOpen() { M.placeOpen(view.model, view.aggregated, view.expanded, view.pos); }
  function placeMissing(items, pos) { M.placeMissing(view.model, items, pos); }
  function adjacency() { return M.adjacency(view.model); }
  function reach(start, direction, depth, skip, limit) { return M.reach(view.model, start, direction, depth, skip, limit); }
  function shortestPath(a, b, skip) { return M.shortestPath(view.model, a, b, skip); }
  // ---- the drawn graph ---------------------------------------------------------------------------------
  function groupColor(id) {
    var m = view.model, top = m.top[id] !== undefined ? m.top[id] : id;
    return GROUP_COLORS[(m.rank[top] || 0) % GROUP_COLORS.length];
  }

  function nodeSize(degree) { return Math.min(3 + 1.6 * Math.sqrt(degree), 18); }
  function groupSize(size) { return Math.min(5 + 1.6 * Math.sqrt(size), 30); }

  function itemAttributes(id, closed, pos) {
    var m = view.model, n = m.nodes[id], p = pos[id];
    if (closed) {
      var g = m.groups[id], label = g.label + " (" + g.size.toLocaleString("en") + ")";
      return { x: p.x, y: p.y, label: label, size: groupSize(g.size), color: groupColor(id), nodeType: "(group)",
        group: true, realType: n ? n.type : null, data: n || null };
    }
    return { x: p.x, y: p.y, label: n.label, size: nodeSize(m.degree[id]), nodeType: n.type, data: n,
      color: view.colorBy === "group" && m.parent[id] !== undefined ? groupColor(id) : (view.nodeColor[n.type] || MISSING) };
  }

  function buildGraph() {
    var m = view.model, vis, pos;
    if (view.focus) {
      vis = { items: view.focus.items, rep: {} };
      vis.items.forEach(function (id) { vis.rep[id] = id; });
      pos = view.focus.pos;
    } else { vis = computeVisible(); pos = view.pos; }
    placeMissing(vis.items, pos);
    var graph = new graphology.MultiDirectedGraph({ allowSelfLoops: true });
    var closedCount = 0, forced = [];
    vis.items.forEach(function (id) {
      var closed = !view.focus && view.aggregated && isGroup(id) && !view.expanded.has(id);
      if (closed) { closedCount += 1; forced.push(id); }
      graph.addNode(id, itemAttributes(id, closed, pos));
    });
    forced.sort(function (a, b) { return sizeOf(m, b) - sizeOf(m, a); }).slice(0, FORCED_LABELS).forEach(function (id) {
      graph.setNodeAttribute(id, "forceLabel", true);
    });
    var bundles = {}, rep = vis.rep, drawnEdges = 0;
    m.edges.forEach(function (e) {
      if (!view.focus && view.hiddenEdgeTypes.has(e.type)) { return; }  // a focus view draws the edges it walked
      var a = rep[e.source], b = rep[e.target];
      if (a === undefined || b === undefined || (a === b && e.source !== e.target)) { return; }
      if (a === e.source && b === e.target && !graph.getNodeAttribute(a, "group") && !graph.getNodeAttribute(b, "group")) {
        if (!graph.hasEdge(e.id)) { graph.addDirectedEdgeWithKey(e.id, a, b, { edgeType: e.type, color: view.edgeColor[e.type] || MISSING, size: 1, data: e }); drawnEdges += 1; }
        return;
      }
      var key = a + "\u0001" + b, bundle = bundles[key];
      if (!bundle) { bundle = bundles[key] = { source: a, target: b, count: 0, types: {} }; }
      bundle.count += 1;
      bundle.types[e.type] = (bundle.types[e.type] || 0) + 1;
    });
    Object.keys(bundles).forEach(function (key) {
      var b = bundles[key], main = Object.keys(b.types).sort(function (x, y) { return b.types[y] - b.types[x]; })[0];
      graph.addDirectedEdgeWithKey("bundle:" + key, b.source, b.target, { edgeType: main, bundle: b, label: String(b.count),
        size: Math.min(1 + 1.3 * Math.log2(b.count), 9), color: view.edgeColor[main] || MISSING });
      drawnEdges += 1;
    });
    if (drawnEdges > LINE_ABOVE) { thinOut(graph, bundles); }
    // invisible ties from each drawn item to its drawn container: the force layout keeps a package's
    // members around it although CONTAINS itself is not drawn
    vis.items.forEach(function (id) {
      var p = m.parent[id];
      if (p !== undefined && graph.hasNode(p)) {
        graph.addDirectedEdgeWithKey("tree:" + id, p, id, { tree: true, hidden: true, size: 0.5, color: "#ffffff", weight: 3 });
      }
    });
    view.drawn = { items: vis.items.length, groups: closedCount, edges: drawnEdges, thin: drawnEdges > LINE_ABOVE };
    view.rep = rep;
    return graph;
  }

  /* Level of detail for edges: past LINE_ABOVE drawn edges, the THICK_EDGES heaviest bundles keep their
   * width and every other edge is drawn one pixel wide by the "thin" program (WebGL lines). A 100,000-node
   * code map opens with 13,000 bundles between its 160 groups: as wide quads, software WebGL (headless
   * Chromium's SwiftShader, or a machine without a GPU) spent 1.2 to 2 s filling each frame, the first one
   * included; with the lines, 0.3 s. The edges of a selected node get their width back (edgeReducer). */
  function thinOut(graph, bundles) {
    var heavy = Object.keys(bundles).sort(function (a, b) { return bundles[b].count - bundles[a].count; });
    var keep = new Set(heavy.slice(0, THICK_EDGES).map(function (key) { return "bundle:" + key; }));
    graph.forEachEdge(function (edge, a) { if (!keep.has(edge)) { graph.setEdgeAttribute(edge, "type", "thin"); } });
  }

  function narrowed() {
    return view.focus !== null || view.hiddenNodeTypes.size > 0 || view.matchedItems !== null || view.selected !== null || view.selectedEdge !== null;
  }

  function nodeReducer(node, data) {
    if (!narrowed()) { return data; }  // nothing filtered, searched or selected: draw as is (no copy)
    var res = Object.assign({}, data);
    if (view.hiddenNodeTypes.has(data.nodeType)) { res.hidden = true; return res; }
    if (view.matchedItems && !view.matchedItems.has(node)) { res.color = "#dfe1e5"; res.label = ""; res.forceLabel = false; res.zIndex = 0; }
    if (view.neighbors && !view.neighbors.has(node) && node !== view.selected) { res.color = "#dfe1e5"; res.label = ""; res.forceLabel = false; }
    if (node === view.selected || (view.focus && node === view.focus.start)) { res.highlighted = true; res.forceLabel = true; res.zIndex = 2; }
    else if (view.matchedItems && view.matchedItems.has(node)) { res.highlighted = view.matchedItems.size <= 50; res.zIndex = 1; }
    return res;
  }

  function edgeReducer(edge, data) {
    if (!narrowed()) { return data; }
    var res = Object.assign({}, data);
    var graph = view.renderer ? view.renderer.getGraph() : view.graph;  // the drawn graph, even mid-swap
    var s = graph.source(edge), t = graph.target(edge);
    if (view.hiddenNodeTypes.has(graph.getNodeAttribute(s, "nodeType")) ||
        view.hiddenNodeTypes.has(graph.getNodeAttribute(t, "nodeType"))) { res.hidden = true; return res; }
    if (view.selected && s !== view.selected && t !== view.selected) { res.hidden = true; return res; }
    if (view.matchedItems && !view.matchedItems.has(s) && !view.matchedItems.has(t)) { res.hidden = true; return res; }
    if (res.type === "thin" && (view.selected || edge === view.selectedEdge)) { res.type = "line"; }
    if (edge === view.selectedEdge) { res.size = 3; res.color = "#1d1f23"; res.zIndex = 2; }
    return res;
  }

  function mark(name, since) { view.timings[name] = Math.round(performance.now() - since); return performance.now(); }

  /* (Re)draws what the model says is visible; positions are kept per item across redraws. */
  function redraw() {
    stopLayout();
    var graph = buildGraph();
    view.graph = graph;
    var big = graph.size > 20000 || graph.order > 20000;
    if (!view.renderer) {
      view.renderer = new Sigma(graph, $("canvas"), {
        defaultEdgeType: graph.size > LINE_ABOVE ? "line" : "arrow", edgeProgramClasses: view.drawn.thin ? THIN_PROGRAMS : EDGE_PROGRAMS,
        enableEdgeEvents: !big, hideEdgesOnMove: big, zIndex: true, stagePadding: 70,
        labelRenderedSizeThreshold: labelThreshold(graph.order), labelDensity: 0.6, labelGridCellSize: 90, renderEdgeLabels: false,
        nodeReducer: nodeReducer, edgeReducer: edgeReducer, minCameraRatio: 0.01, maxCameraRatio: 20
      });
      wireRenderer(view.renderer);
    } else {
      // the thin program is compiled only for a graph that draws thin edges (before it is drawn), then kept
      if (view.drawn.thin && !view.renderer.getSetting("edgeProgramClasses").thin) {
        view.renderer.setSetting("edgeProgramClasses", THIN_PROGRAMS);
      }
      view.renderer.setGraph(graph);
      view.renderer.setSetting("enableEdgeEvents", !big);
      view.renderer.setSetting("hideEdgesOnMove", big);
      view.renderer.setSetting("defaultEdgeType", graph.size > LINE_ABOVE ? "line" : "arrow");
      view.renderer.setSetting("labelRenderedSizeThreshold", labelThreshold(graph.order));
    }
    if (view.selected && !graph.hasNode(view.selected)) { view.selected = null; view.neighbors = null; }
    if (view.selected) { view.neighbors = new Set(graph.neighbors(view.selected)); }
    if (view.selectedEdge && !graph.hasEdge(view.selectedEdge)) { view.selectedEdge = null; }
    matchItems();
    renderCrumbs();
    renderFocusBar();
    renderList();
    $("groups-toggle").setAttribute("aria-pressed", view.aggregated ? "true" : "false");
    $("groups-toggle").hidden = !Object.keys(view.model.groups).length;
  }

  /* Level of detail: a few hundred drawn items are all labelled (where the label grid has room); more, and
   * only nodes drawn big enough at this zoom are: the most connected, or the biggest groups, first. */
  function labelThreshold(order) { return order > 2000 ? 8 : order > 300 ? 6 : 1; }

  function wireRenderer(renderer) {
    renderer.on("clickNode", function (e) { selectItem(e.node, false); });
    renderer.on("doubleClickNode", function (e) {
      e.preventSigmaDefault();
      if (view.focus) { return; }
      if (isGroup(e.node) && view.aggregated && !view.expanded.has(e.node)) { expand(e.node); }
      else if (isGroup(e.node) && view.aggregated) { collapse(e.node); }
    });
    renderer.on("clickEdge", function (e) { selectEdge(e.edge); });
    renderer.on("clickStage", function () { clearSelection(); });
    renderer.on("enterNode", function () { $("canvas").style.cursor = "pointer"; });
    renderer.on("leaveNode", function () { $("canvas").style.cursor = ""; });
  }

  function showGraph(payload) {
    if (payload.version !== 1 && payload.version !== 2) { showMessage("This page cannot read graph payload version " + payload.version); }
    var t = performance.now();
    view.payload = payload;
    assignColors(payload);
    if (view.hiddenEdgeTypes === null) { view.hiddenEdgeTypes = initialHiddenEdgeTypes(payload); }
    view.model = buildModel(payload, null);
    t = mark("model", t);
    var grouping = payload.grouping || {};
    view.aggregated = !!grouping.aggregate;
    view.colorBy = view.model.kind === "community" ? "group" : "type";  // communities say more than one type
    view.focus = null;
    view.trail = null;
    autoExpand();
    view.pos = {};
    placeOpen();
    t = mark("place", t);
    renderHeader();
    if (view.renderer) { view.renderer.kill(); view.renderer = null; }
    view.selected = null; view.selectedEdge = null; view.neighbors = null;
    redraw();
    t = mark("draw", t);
    renderFilters();
    renderIterations();
    mark("panels", t);
    requestAnimationFrame(function () {
      if (view.firstRenderMs === null) { view.firstRenderMs = performance.now(); }
      view.ready = true;
      document.body.setAttribute("data-ready", "true");
      if (!/nolayout/.test(location.hash)) { startLayout(view.graph.order <= 5000 ? 4000 : 6000); }
    });
  }

  /* Brings the drawn graph in line with a new payload: new nodes join their group (or appear next to it),
   * removed ones disappear, the others keep their place and open groups stay open. */
  function mergeGraph(payload) {
    if (!view.model) { showGraph(payload); return; }
    stopLayout();
    var before = view.graph.order;
    view.payload = payload;
    assignColors(payload);
    view.model = buildModel(payload, view.model);
    var grouping = payload.grouping || {};
    if (!view.everToggled && grouping.aggregate && !view.aggregated) { view.aggregated = true; autoExpand(); }
    if (view.focus) { view.focus.items = view.focus.items.filter(function (id) { return !!view.model.nodes[id]; }); }
    redraw();
    renderHeader();
    renderFilters();
    renderIterations();
    if (view.graph.order !== before) { startLayout(1500); }
  }

  // ---- groups: expand, collapse, breadcrumbs ------------------------------------------------------------
  function expand(id) {
    if (!isGroup(id)) { return; }
    view.expanded.add(id);
    var center = view.pos[id] || { x: 0, y: 0 };
    if (view.graph && view.graph.hasNode(id)) { center = { x: view.graph.getNodeAttribute(id, "x"), y: view.graph.getNodeAttribute(id, "y") }; }
    placeChildren(view.model.children[id], center, view.pos, false);
    view.trail = id;
    redraw();
    refreshDetails(id);
    startLayout(2000);
  }

  function collapse(id) {
    var m = view.model;
    var stack = [id];
    while (stack.length) {
      var g = stack.pop();
      view.expanded.delete(g);
      (m.children[g] || []).forEach(function (c) { if (view.expanded.has(c)) { stack.push(c); } });
    }
    view.trail = m.parent[id] !== undefined ? m.parent[id] : null;
    redraw();
    refreshDetails(id);
  }

  /* The details of ``id`` after it opened or closed: a closed group's, or the node's it is again. */
  function refreshDetails(id) {
    if (view.selected !== id || !view.graph.hasNode(id)) { return; }
    if (view.graph.getNodeAttribute(id, "group")) { renderGroupDetails(id); } else { renderNodeDetails(id); }
  }

  function reveal(id) {
    var changed = false;
    if (!view.aggregated) { return false; }
    ancestors(id).forEach(function (a) {
      if (!view.expanded.has(a)) {
        view.expanded.add(a);
        placeChildren(view.model.children[a], view.pos[a] || { x: 0, y: 0 }, view.pos, false);
        changed = true;
      }
    });
    return changed;
  }

  function renderCrumbs() {
    var nav = $("crumbs");
    nav.textContent = "";
    if (!Object.keys(view.model.groups).length) { nav.hidden = true; return; }
    nav.hidden = false;
    var trail = view.trail && view.model.groups[view.trail] ? ancestors(view.trail).concat([view.trail]) : [];
    var list = el("ol");
    list.appendChild(el("li", null, [el("button", { type: "button", "class": "link", onclick: function () { resetGroups(); } },
      [view.aggregated ? "All groups" : "All nodes"])]));
    trail.forEach(function (g, i) {
      var last = i === trail.length - 1;
      var b = el("button", { type: "button", "class": "link", "data-group": g, onclick: function () { toCrumb(g); } }, [labelOf(g)]);
      if (last) { b.setAttribute("aria-current", "true"); }
      list.appendChild(el("li", null, [b]));
    });
    nav.appendChild(list);
    var d = view.drawn;
    nav.appendChild(el("span", { "class": "drawn", text: d.groups ? d.groups + " groups and " + (d.items - d.groups) + " nodes drawn" : d.items + " nodes drawn" }));
  }

  function toCrumb(g) {
    var m = view.model;
    (m.children[g] || []).forEach(function (c) { if (view.expanded.has(c)) { collapse(c); } });
    view.focus = null;
    view.trail = g;
    redraw();
    var d = view.renderer.getNodeDisplayData(g);
    if (d) { view.renderer.getCamera().animate({ x: d.x, y: d.y, ratio: 0.5 }, { duration: 300 }); }
  }

  function resetGroups() {
    view.focus = null;
    view.trail = null;
    autoExpand();
    redraw();
    view.renderer.getCamera().animatedReset({ duration: 250 });
  }

  function toggleGroups() {
    view.everToggled = true;
    view.aggregated = !view.aggregated;
    view.focus = null;
    autoExpand();
    placeOpen();
    redraw();
    view.renderer.getCamera().animatedReset({ duration: 250 });
    startLayout(view.graph.order <= 5000 ? 4000 : 6000);
  }

  // ---- layout: ForceAtlas2 in a web worker, with its progress shown --------------------------------------
  function startLayout(ms) {
    var lib = window.graphologyLibrary;
    var graph = view.graph;
    stopLayout();
    if (!lib || graph.order < 2) { return; }
    try {
      var settings = lib.layoutForceAtlas2.inferSettings(graph);
      settings.adjustSizes = false;
      settings.strongGravityMode = true;  // keeps separate components near each other
      settings.gravity = 0.5;
      settings.linLogMode = true;  // clusters apart: groups that share few edges drift away from each other
      settings.outboundAttractionDistribution = true;  // hubs do not pull everything into one ball
      settings.scalingRatio = Math.max(settings.scalingRatio || 1, 10);
      settings.edgeWeightInfluence = 0.5;
      view.layout = new lib.FA2Layout(graph, { settings: settings, getEdgeWeight: function (e, a) {
        return a.tree ? 4 : a.bundle ? a.bundle.count : 1;
      } });
      view.layout.start();
    } catch (e) {  // no web workers (some file:// setups): a short synchronous run on small graphs only
      view.layout = null;
      if (graph.order <= 3000) { lib.layoutForceAtlas2.assign(graph, { iterations: 60, settings: lib.layoutForceAtlas2.inferSettings(graph) }); }
    }
    $("layout-toggle").setAttribute("aria-pressed", view.layout ? "true" : "false");
    $("layout-toggle").textContent = view.layout ? "Stop layout" : "Layout";
    if (!view.layout) { return; }
    var started = performance.now(), status = $("layout-status");
    status.hidden = false;
    view.layoutTimer = setInterval(function () {
      var done = Math.min(100, Math.round(100 * (performance.now() - started) / ms));
      $("layout-progress").value = done;
      $("layout-text").textContent = "Refining the layout: " + done + "%";
      if (done >= 100) { stopLayout(); }
    }, 100);
  }

  function stopLayout() {
    clearInterval(view.layoutTimer);
    if (view.layout) {
      view.layout.kill();
      view.layout = null;
      var pos = view.focus ? view.focus.pos : view.pos;
      view.graph.forEachNode(function (id, a) { pos[id] = { x: a.x, y: a.y }; });
    }
    $("layout-status").hidden = true;
    $("layout-toggle").setAttribute("aria-pressed", "false");
    $("layout-toggle").textContent = "Layout";
  }

  // ---- header, filters, list -------------------------------------------------------------------------
  function renderHeader() {
    var m = view.payload.meta || {};
    var title = m.session_id ? "Session " + m.session_id : "IGG graph";
    $("title").textContent = title;
    document.title = title + " · IGG";
    var parts = [m.nodes + " nodes", m.edges + " edges"];
    if (m.status) { parts.push(m.status + (m.stop_reason ? " (" + m.stop_reason + ")" : "")); }
    if (m.iteration !== undefined && m.iteration !== null) { parts.push("iteration " + m.iteration); }
    if (m.goal) { parts.push(m.goal); }
    $("summary").textContent = parts.join(" · ");
    $("summary").title = m.goal || "";
  }

  function renderFilters() {
    var m = view.model;
    var nodeCounts = {}, edgeCounts = {};
    m.ids.forEach(function (id) { var t = m.nodes[id].type; nodeCounts[t] = (nodeCounts[t] || 0) + 1; });
    m.edges.forEach(function (e) { edgeCounts[e.type] = (edgeCounts[e.type] || 0) + 1; });
    fillTypes($("node-types"), "Node types", view.payload.node_types, nodeCounts, view.nodeColor, view.hiddenNodeTypes, "node");
    fillTypes($("edge-types"), "Edge types", view.payload.edge_types, edgeCounts, view.edgeColor, view.hiddenEdgeTypes, "edge");
  }

  function fillTypes(box, title, types, counts, colors, hidden, kind) {
    box.textContent = "";
    box.appendChild(el("legend", { text: title }));
    types.forEach(function (t) {
      var input = el("input", { type: "checkbox", "data-type": t, "data-kind": kind });
      input.checked = !hidden.has(t);
      input.addEventListener("change", function () {
        if (input.checked) { hidden.delete(t); } else { hidden.add(t); }
        if (kind === "edge") { rememberEdgeTypes(); redraw(); } else { applySearch(); }
      });
      box.appendChild(el("label", null, [input, el("span", { "class": "swatch" + (kind === "edge" ? " edge" : ""), style: "background:" + colors[t], "aria-hidden": "true" }),
        el("span", { "class": "name", text: t }), el("span", { "class": "count", text: String(counts[t] || 0) })]));
    });
  }

  /* Edge types hidden where they would dominate (CONTAINS: the group tree says it already); a person's own
   * choice is remembered in this browser (localStorage) and wins from then on. */
  function initialHiddenEdgeTypes(payload) {
    var stored = null;
    try { stored = JSON.parse(window.localStorage.getItem(STORE_KEY) || "null"); } catch (e) { stored = null; }
    var hidden = Array.isArray(stored) ? stored : DEFAULT_HIDDEN_EDGES;
    return new Set(hidden.filter(function (t) { return typeof t === "string" && payload.edge_types.indexOf(t) >= 0; }));
  }

  function rememberEdgeTypes() {
    try { window.localStorage.setItem(STORE_KEY, JSON.stringify(Array.from(view.hiddenEdgeTypes))); } catch (e) { /* private mode: not remembered */ }
  }

  function matchItems() {
    if (!view.matches) { view.matchedItems = null; return; }
    var items = new Set(), rep = view.rep || {};
    view.matches.forEach(function (id) { if (rep[id] !== undefined) { items.add(rep[id]); } });
    view.matchedItems = items;
  }

  function applySearch() {
    var q = $("search").value.trim().toLowerCase();
    view.query = q;
    var m = view.model;
    if (!m) { return; }  // the sessions list: no graph to search yet
    if (q) {
      view.matches = new Set();
      m.ids.forEach(function (id) {
        if (String(m.nodes[id].label).toLowerCase().indexOf(q) >= 0 || id.toLowerCase() === q) { view.matches.add(id); }
      });
    } else { view.matches = null; }
    matchItems();
    renderList();
    if (view.renderer) { view.renderer.refresh({ skipIndexation: true }); }
  }

  /* The accessible list beside the drawing: what is drawn (groups first, with their sizes and an expand or
   * collapse button), or, while searching, every matching node of the whole graph. */
  function renderList() {
    var m = view.model, list = $("node-list"), rows = [];
    var searching = view.matches !== null, aggregated = view.aggregated && !view.focus;
    var source = searching || !aggregated ? (view.focus && !searching ? view.focus.items : m.ids) : view.graph.nodes();
    source.forEach(function (id) {
      if (searching && !view.matches.has(id)) { return; }
      var closed = aggregated && !searching && isGroup(id) && !view.expanded.has(id);
      var type = closed ? "(group)" : m.nodes[id] ? m.nodes[id].type : "(group)";
      if (!closed && view.hiddenNodeTypes.has(type)) { return; }
      rows.push({ id: id, label: closed ? view.model.groups[id].label : labelOf(id), closed: closed, type: type });
    });
    rows.sort(function (x, y) {
      if (x.closed !== y.closed) { return x.closed ? -1 : 1; }
      if (x.closed) { return sizeOf(m, y.id) - sizeOf(m, x.id) || COLLATOR.compare(x.label, y.label); }
      return COLLATOR.compare(x.label, y.label);
    });
    list.textContent = "";
    var frag = document.createDocumentFragment();
    rows.slice(0, LIST_LIMIT).forEach(function (r) {
      var color = r.closed ? groupColor(r.id) : view.nodeColor[r.type] || MISSING;
      var kind = r.closed ? "group · " + sizeOf(m, r.id).toLocaleString("en") : r.type;
      var button = el("button", { type: "button", onclick: function () { selectItem(r.id, true); } }, [
        el("span", { "class": "swatch", style: "background:" + color, "aria-hidden": "true" }),
        el("span", { "class": "label", text: r.label }), el("span", { "class": "type", text: kind })]);
      button.setAttribute(r.closed ? "data-group" : "data-node", r.id);
      button.title = r.label;
      if (r.id === view.selected) { button.setAttribute("aria-current", "true"); }
      var li = el("li", r.closed ? { "class": "group" } : null, [button]);
      if (r.closed) {
        li.appendChild(el("button", { type: "button", "class": "expand", "aria-label": "Expand " + r.label, title: "Expand",
          onclick: function () { expand(r.id); } }, ["+"]));
      }
      frag.appendChild(li);
    });
    if (rows.length > LIST_LIMIT) {
      frag.appendChild(el("li", { "class": "more", text: "… and " + (rows.length - LIST_LIMIT) + " more: refine the search or the filters" }));
    }
    list.appendChild(frag);
    var total = m.ids.length, nodeRows = rows.filter(function (r) { return !r.closed; }).length, groupRows = rows.length - nodeRows;
    var text;
    if (searching || !aggregated) {
      text = nodeRows === total ? total + " nodes" : nodeRows + " of " + total + " nodes shown";
    } else {
      text = groupRows + " groups and " + nodeRows + " nodes shown of " + total.toLocaleString("en") + " nodes";
    }
    $("node-count").textContent = text;
    $("nodes-heading").textContent = aggregated && !searching ? "Groups and nodes" : "Nodes";
  }

  // ---- selection and details -------------------------------------------------------------------------
  /* Select a drawn item, or a node hidden in a closed group (its groups open first). */
  function selectItem(id, focus) {
    var m = view.model;
    if (!view.graph.hasNode(id)) {
      if (!m.nodes[id] && !m.groups[id]) { return; }
      if (view.focus) { view.focus = null; }
      reveal(id);
      redraw();
      if (!view.graph.hasNode(id)) { id = view.rep[id]; }
      if (id === undefined || !view.graph.hasNode(id)) { return; }
    }
    view.selected = id;
    view.selectedEdge = null;
    view.neighbors = new Set(view.graph.neighbors(id));
    if (view.graph.getNodeAttribute(id, "group")) { renderGroupDetails(id); } else { renderNodeDetails(id); }
    if (m.groups[id]) { view.trail = id; } else if (m.parent[id] !== undefined) { view.trail = m.parent[id]; }
    renderCrumbs();
    markListed(id);
    view.renderer.refresh({ skipIndexation: true });
    if (focus) {
      var d = view.renderer.getNodeDisplayData(id);
      if (d) { view.renderer.getCamera().animate({ x: d.x, y: d.y, ratio: Math.min(view.renderer.getCamera().ratio, 0.35) }, { duration: 400 }); }
    }
  }

  function selectEdge(edge) {
    view.selected = null;
    view.neighbors = null;
    view.selectedEdge = edge;
    renderEdgeDetails(edge);
    markListed(null);
    view.renderer.refresh({ skipIndexation: true });
  }

  function clearSelection() {
    view.selected = null; view.selectedEdge = null; view.neighbors = null;
    var box = $("details");
    box.textContent = "";
    box.appendChild(el("h2", { text: "Details" }));
    box.appendChild(el("p", { "class": "hint", text: "Select a node or an edge in the drawing or the list. Double-click a group to open it." }));
    markListed(null);
    if (view.renderer) { view.renderer.refresh({ skipIndexation: true }); }
  }

  function markListed(node) {
    var buttons = $("node-list").querySelectorAll("button[aria-current]");
    for (var i = 0; i < buttons.length; i++) { buttons[i].removeAttribute("aria-current"); }
    if (node) {
      var mine = $("node-list").querySelector('button[data-node="' + CSS.escape(node) + '"], button[data-group="' + CSS.escape(node) + '"]');
      if (mine) { mine.setAttribute("aria-current", "true"); }
    }
  }

  function dl(pairs) {
    var list = el("dl");
    pairs.forEach(function (p) { list.appendChild(el("dt", { text: p[0] })); list.appendChild(el("dd", { text: valueText(p[1]) })); });
    return list;
  }

  function provenancePairs(prov) {
    var pairs = [];
    if (!prov || prov.created === undefined) { return [["provenance", "not recorded"]]; }
    pairs.push(["created in", prov.created === 0 ? "the seed graph (iteration 0)" : "iteration " + prov.created]);
    if (prov.chunk) { pairs.push(["from chunk", prov.chunk]); }
    if (prov.updated !== undefined) { pairs.push(["last updated in", "iteration " + prov.updated]); }
    return pairs;
  }

  function appendEvidence(box, prov) {
    var items = (prov && prov.evidence) || [];
    if (!items.length) { return; }
    box.appendChild(el("h3", { text: "Evidence (" + items.length + ")" }));
    items.forEach(function (item) {
      var where = [];
      if (item.match === "none") { where.push("not found in the context"); }
      if (item.chunk !== undefined) { where.push("chunk " + item.chunk); }
      if (item.file) { where.push(item.file + ":" + item.line + ":" + item.column); }
      else if (item.line !== undefined) { where.push("line " + item.line + ", column " + item.column); }
      if (item.match && item.match !== "none") { where.push(item.match + (item.score !== undefined ? " " + item.score + "%" : "")); }
      var quote = item.text !== undefined
        ? el("blockquote", { "class": "evidence" }, [item.before ? "…" + item.before : "", el("mark", { text: item.text }), item.after ? item.after + "…" : ""])
        : el("blockquote", { "class": "evidence" + (item.match === "none" ? " missing" : "") }, [item.quote || ""]);
      box.appendChild(quote);
      box.appendChild(el("p", { "class": "evidence-where", text: where.join(" · ") }));
    });
  }

  function nodeButton(node) {
    var n = view.model.nodes[node];
    return el("button", { type: "button", "class": "link", onclick: function () { selectItem(node, true); } },
      [n ? n.type + ": " + n.label : labelOf(node)]);
  }

  function renderGroupDetails(id) {
    var m = view.model, g = m.groups[id], box = $("details");
    box.textContent = "";
    box.appendChild(el("h2", { text: g.label }));
    var kinds = { contains: "contains", community: "community (Louvain)", type: "nodes of one type without a group",
                  service: "the HTTP routes one service handles" };
    box.appendChild(dl([["group", kinds[g.kind] || g.kind], ["members", g.size.toLocaleString("en") + " nodes"],
      ["inside", ancestors(id).map(labelOf).join(" › ") || "the whole graph"]]));
    box.appendChild(el("p", null, [el("button", { type: "button", id: "group-expand", onclick: function () { expand(id); } }, ["Expand"])]));
    if (m.nodes[id]) { appendFocusControls(box, id); }
    var counts = {}, stack = (m.children[id] || []).slice();
    while (stack.length) {
      var c = stack.pop();
      if (m.nodes[c]) { counts[m.nodes[c].type] = (counts[m.nodes[c].type] || 0) + 1; }
      (m.children[c] || []).forEach(function (x) { stack.push(x); });
    }
    box.appendChild(el("h3", { text: "Members by type" }));
    box.appendChild(dl(Object.keys(counts).sort().map(function (t) { return [t, counts[t]]; })));
    var kids = (m.children[id] || []).slice().sort(function (a, b) { return sizeOf(m, b) - sizeOf(m, a) || m.degree[b] - m.degree[a]; });
    box.appendChild(el("h3", { text: "Largest members" }));
    var ul = el("ul");
    kids.slice(0, 20).forEach(function (k) { ul.appendChild(el("li", null, [nodeButton(k)])); });
    if (kids.length > 20) { ul.appendChild(el("li", { text: "… " + (kids.length - 20) + " more" })); }
    box.appendChild(ul);
    if (m.nodes[id]) { appendNodeFacts(box, id); }
  }

  function renderNodeDetails(node) {
    var box = $("details"), n = view.model.nodes[node];
    box.textContent = "";
    box.appendChild(el("h2", { text: n.label }));
    if (isGroup(node) && view.aggregated && !view.focus) {
      box.appendChild(el("p", null, [el("button", { type: "button", id: "group-collapse", onclick: function () { collapse(node); } },
        ["Collapse into one group"])]));
    }
    appendFocusControls(box, node);
    appendNodeFacts(box, node);
  }

  function appendNodeFacts(box, node) {
    var m = view.model, n = m.nodes[node];
    box.appendChild(dl([["type", n.type], ["id", n.id]]));
    box.appendChild(el("h3", { text: "Properties" }));
    box.appendChild(dl(Object.keys(n.properties || {}).map(function (k) { return [k, n.properties[k]]; })));
    box.appendChild(el("h3", { text: "Provenance" }));
    box.appendChild(dl(provenancePairs(n.provenance)));
    appendEvidence(box, n.provenance);
    if (config.mode === "server" && view.sessionId) {
      var history = el("div", { id: "element-history" });
      history.appendChild(el("button", { type: "button", onclick: function () { loadHistory(node, history); } }, ["Show every change"]));
      box.appendChild(history);
    }
    var adj = adjacency();
    ["out", "in"].forEach(function (dir) {
      var edges = (dir === "out" ? adj.out[node] : adj["in"][node]) || [];
      if (!edges.length) { return; }
      box.appendChild(el("h3", { text: (dir === "out" ? "Outgoing" : "Incoming") + " edges (" + edges.length + ")" }));
      var ul = el("ul");
      edges.slice(0, 30).forEach(function (e) {
        var other = dir === "out" ? e.target : e.source;
        ul.appendChild(el("li", null, [e.type + (dir === "out" ? " → " : " ← "), nodeButton(other)]));
      });
      if (edges.length > 30) { ul.appendChild(el("li", { text: "… " + (edges.length - 30) + " more" })); }
      box.appendChild(ul);
    });
  }

  function renderEdgeDetails(edge) {
    var graph = view.graph, a = graph.getEdgeAttributes(edge), box = $("details");
    box.textContent = "";
    if (a.bundle) {
      var b = a.bundle;
      box.appendChild(el("h2", { text: b.count + " edge" + (b.count === 1 ? "" : "s") }));
      box.appendChild(el("p", null, [nodeButton(b.source), " → ", nodeButton(b.target)]));
      box.appendChild(dl(Object.keys(b.types).sort().map(function (t) { return [t, b.types[t]]; })));
      return;
    }
    var e = a.data;
    box.appendChild(el("h2", { text: e.type }));
    box.appendChild(el("p", null, [nodeButton(e.source), " → ", nodeButton(e.target)]));
    box.appendChild(dl([["id", e.id]]));
    if (Object.keys(e.properties || {}).length) {
      box.appendChild(el("h3", { text: "Properties" }));
      box.appendChild(dl(Object.keys(e.properties).map(function (k) { return [k, e.properties[k]]; })));
    }
    box.appendChild(el("h3", { text: "Provenance" }));
    box.appendChild(dl(provenancePairs(e.provenance)));
    appendEvidence(box, e.provenance);
  }

  function loadHistory(node, box) {
    api("/sessions/" + encodeURIComponent(view.sessionId) + "/history?element=" + encodeURIComponent(node)).then(function (body) {
      box.textContent = "";
      box.appendChild(el("h3", { text: "Every change" }));
      var ol = el("ol", { "class": "history" });
      body.changes.forEach(function (c) {
        ol.appendChild(el("li", { text: (c.iteration === null ? "step " + c.step : "iteration " + c.iteration) + ": " + c.detail }));
      });
      box.appendChild(ol);
    }).catch(function (e) { box.textContent = "History unavailable: " + e.message; });
  }

  // ---- focus views: a neighbourhood, a path, what depends on a node --------------------------------------
  /* Live (server mode) these ask the session's own budgeted query (GET .../query: the `neighbours` and `path`
   * questions the agents ask, igg/observe/query.py); in the export the page walks its embedded graph the same
   * way, with FOCUS_LIMIT nodes as its budget. Either way the answer says what was left out. */
  function appendFocusControls(box, node) {
    var depth = el("select", { id: "focus-depth", "aria-label": "Hops" });
    [1, 2, 3].forEach(function (k) { depth.appendChild(el("option", { value: String(k), text: k + (k === 1 ? " hop" : " hops") })); });
    var target = el("input", { id: "path-to", type: "search", placeholder: "another node's name", autocomplete: "off", spellcheck: "false" });
    var form = el("div", { "class": "focus-controls" }, [
      el("p", null, [el("button", { type: "button", id: "focus-neighbours", onclick: function () { showNeighbourhood(node, Number(depth.value)); } }, ["Neighbourhood"]), " ", depth]),
      el("p", null, [el("button", { type: "button", id: "focus-dependents", onclick: function () { showDependents(node); } }, ["What depends on this"])]),
      el("p", null, [el("label", { "for": "path-to", text: "Path to " }), target, " ",
        el("button", { type: "button", id: "focus-path", onclick: function () { showPath(node, target.value); } }, ["Find path"])])]);
    box.appendChild(form);
  }

  function nodeRef(id) {
    var n = view.model.nodes[id], keys = (view.payload.identity_keys || {})[n.type] || ["name"], ref = { label: n.type };
    keys.forEach(function (k) { if (n.properties && n.properties[k] !== undefined && n.properties[k] !== null) { ref[k] = n.properties[k]; } });
    return ref;
  }

  function ask(query) {
    return api("/sessions/" + encodeURIComponent(view.sessionId) + "/query?q=" + encodeURIComponent(JSON.stringify(query)));
  }

  function live() { return config.mode === "server" && view.sessionId && view.shownIteration === null; }

  /* Breadth-first from ``start`` over edges in ``direction`` (out, in, both), ``skip`` edge types left
   * aside; at most ``limit`` nodes (the rest counted). Returns {dist, edges, leftOut}. */
  /* Draws only ``dist``'s nodes: in rings by distance from the start, or along a line for a path. */
  function focusOn(title, dist, note, start, line) {
    var ids = Object.keys(dist).filter(function (id) { return !!view.model.nodes[id]; });
    var rings = {}, pos = {};
    ids.forEach(function (id) { (rings[dist[id]] = rings[dist[id]] || []).push(id); });
    Object.keys(rings).forEach(function (d) {
      var ring = rings[d], r = 40 * Number(d);
      ring.forEach(function (id, i) {
        var a = 2 * Math.PI * i / ring.length + Number(d) * 0.4;
        pos[id] = line ? { x: 60 * Number(d), y: 20 * (Number(d) % 2) } : { x: r * Math.cos(a), y: r * Math.sin(a) };
      });
    });
    stopLayout();
    view.focus = { title: title, items: ids, pos: pos, note: note || "", start: start };
    view.selected = null; view.selectedEdge = null; view.neighbors = null;
    $("search").value = "";  // the focus view is the answer now: nothing in it is dimmed by an older search
    view.matches = null;
    redraw();
    view.renderer.getCamera().animatedReset({ duration: 250 });
    if (ids.length > 2 && !line) { startLayout(1500); }
  }

  function focusFailed(what, e) { showMessage(what + ": " + e.message); }

  function showNeighbourhood(node, depth) {
    var title = depth + "-hop neighbourhood of " + labelOf(node);
    if (live()) {
      ask({ query: "neighbours", node: nodeRef(node), depth: depth, direction: "both", token_budget: FOCUS_TOKENS }).then(function (answer) {
        var dist = distancesFrom(node, answer.edges);
        focusOn(title, dist, leftOutNote(answer), node);
      }).catch(function (e) { focusFailed("The neighbourhood query failed", e); });
      return;
    }
    var found = reach(node, "both", depth, new Set(), FOCUS_LIMIT);
    focusOn(title, found.dist, found.leftOut ? found.leftOut + " more nodes left out (the first " + FOCUS_LIMIT + " are shown)" : "", node);
  }

  function showDependents(node) {
    var title = "What depends on " + labelOf(node);
    var skip = new Set(view.payload.edge_types.indexOf("CONTAINS") >= 0 ? ["CONTAINS"] : []);
    if (live()) {
      var types = view.payload.edge_types.filter(function (t) { return !skip.has(t); });
      var q = { query: "neighbours", node: nodeRef(node), depth: 5, direction: "in", token_budget: FOCUS_TOKENS };
      if (skip.size) { q.edge_types = types; }
      ask(q).then(function (answer) {
        focusOn(title, distancesFrom(node, answer.edges), leftOutNote(answer), node);
      }).catch(function (e) { focusFailed("The dependents query failed", e); });
      return;
    }
    var found = reach(node, "in", 5, skip, FOCUS_LIMIT);
    focusOn(title, found.dist, found.leftOut ? found.leftOut + " more dependents left out (the first " + FOCUS_LIMIT + " are shown)" : "", node);
  }

  function leftOutNote(answer) {
    return answer.complete ? "" : answer.omitted_nodes + " more nodes and " + answer.omitted_edges +
      " edges left out by the query's budget (" + answer.token_budget + " tokens)";
  }

  function findByName(text) {
    var q = String(text || "").trim().toLowerCase(), m = view.model, exact = null, partial = null;
    if (!q) { return null; }
    for (var i = 0; i < m.ids.length && exact === null; i++) {
      var label = String(m.nodes[m.ids[i]].label).toLowerCase();
      if (label === q || m.ids[i].toLowerCase() === q) { exact = m.ids[i]; }
      else if (partial === null && label.indexOf(q) >= 0) { partial = m.ids[i]; }
    }
    return exact !== null ? exact : partial;
  }

  function showPath(node, text) {
    var other = findByName(text);
    if (other === null) { showMessage("No node is named like " + JSON.stringify(String(text || ""))); return; }
    showMessage("");
    var title = "Path from " + labelOf(node) + " to " + labelOf(other);
    function draw(ids) {
      if (!ids) { showMessage("No path between " + labelOf(node) + " and " + labelOf(other) + "."); return; }
      var dist = {};
      ids.forEach(function (id, i) { dist[id] = i; });
      focusOn(title + " (" + (ids.length - 1) + " edges)", dist, "", node, true);
    }
    if (live()) {
      ask({ query: "path", from: nodeRef(node), to: nodeRef(other), direction: "both", token_budget: FOCUS_TOKENS }).then(function (answer) {
        if (!answer.edges.length && node !== other) { draw(null); return; }
        var d = distancesFrom(node, answer.edges);
        draw(Object.keys(d).sort(function (a, b) { return d[a] - d[b]; }));
      }).catch(function (e) { focusFailed("The path query failed", e); });
      return;
    }
    draw(shortestPath(node, other, new Set()));
  }

  function renderFocusBar() {
    var bar = $("focus-bar");
    bar.textContent = "";
    if (!view.focus) { bar.hidden = true; return; }
    bar.hidden = false;
    bar.appendChild(el("strong", { text: view.focus.title }));
    bar.appendChild(el("span", { text: " · " + view.focus.items.length + " nodes" + (view.focus.note ? " · " + view.focus.note : "") }));
    bar.appendChild(el("button", { type: "button", id: "focus-back", onclick: function () { view.focus = null; redraw(); view.renderer.getCamera().animatedReset({ duration: 250 }); } },
      ["Back to the whole graph"]));
  }

  // ---- iterations ------------------------------------------------------------------------------------
  function renderIterations() {
    var list = $("iterations");
    var items = (view.payload && view.payload.iterations) || [];
    list.textContent = "";
    if (!items.length) {
      list.appendChild(el("li", { "class": "none", text: "No iterations recorded." }));
      return;
    }
    var frag = document.createDocumentFragment();
    items.slice().reverse().slice(0, 200).forEach(function (it) {
      var counts = it.accepted + " accepted, " + it.rejected + " rejected";
      var li = el("li", { "data-iteration": String(it.iteration) }, [el("strong", { text: "Iteration " + it.iteration }), " ",
        el("span", { "class": "counts", text: counts }), it.chunk ? el("span", { "class": "chunk", text: it.chunk }) : null]);
      if (it.parse_error) {
        li.appendChild(el("div", { "class": "rejections" }, [el("code", { text: it.parse_error.code }), " " + it.parse_error.message]));
      }
      if (it.rejections && it.rejections.length) {
        var ul = el("ul", { "class": "rejections" });
        it.rejections.slice(0, 50).forEach(function (r) {
          ul.appendChild(el("li", null, [el("code", { text: r.code || "REJECTED" }), " " + (r.action || "action") + " #" + r.index + ": " + r.message]));
        });
        li.appendChild(ul);
      }
      frag.appendChild(li);
    });
    list.appendChild(frag);
  }

  // ---- wiring ----------------------------------------------------------------------------------------
  function wire() {
    var searchTimer = null;
    $("search").addEventListener("input", function () {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(applySearch, view.graph && view.graph.order > 5000 ? 200 : 60);
    });
    $("search").addEventListener("keydown", function (e) {
      if (e.key === "Enter" && view.matches && view.matches.size) {
        var first = $("node-list").querySelector("button[data-node]");
        if (first) { selectItem(first.getAttribute("data-node"), true); }
      }
    });
    $("zoom-in").addEventListener("click", function () { view.renderer.getCamera().animatedZoom({ duration: 250 }); });
    $("zoom-out").addEventListener("click", function () { view.renderer.getCamera().animatedUnzoom({ duration: 250 }); });
    $("zoom-fit").addEventListener("click", function () { view.renderer.getCamera().animatedReset({ duration: 250 }); });
    $("layout-toggle").addEventListener("click", function () { if (view.layout) { stopLayout(); } else { startLayout(8000); } });
    $("groups-toggle").addEventListener("click", toggleGroups);
    $("iteration-slider").addEventListener("input", onSlider);
    $("sessions-refresh").addEventListener("click", showSessions);
  }

  function route() {
    var match = /^#session=(.+)$/.exec(location.hash);
    if (match) { openSession(decodeURIComponent(match[1])); } else { showSessions(); }
  }

  wire();
  if (config.mode === "static") {
    $("graph-view").hidden = false;
    var parsed = performance.now();
    var embedded = M.fromColumns(JSON.parse(document.getElementById("igg-graph").textContent));
    mark("parse", parsed);
    showGraph(embedded);
  } else {
    window.addEventListener("hashchange", route);
    route();
  }
})();

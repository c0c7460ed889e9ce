/* IGG graph viewer. Draws a graph payload (see igg/view/data.py) with sigma.js (WebGL) over a graphology
 * graph; filters by type, searches by name, shows details with provenance, lists iterations with their
 * rejections. Two modes (from the #igg-config JSON):
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

  var view = {
    payload: null, graph: null, renderer: null, layout: null, layoutTimer: null,
    nodeColor: {}, edgeColor: {}, hiddenNodeTypes: new Set(), hiddenEdgeTypes: new Set(),
    query: "", matches: null, selected: null, selectedEdge: null, neighbors: null,
    sessionId: null, events: null, shownIteration: null, lastIteration: 0, refreshing: false, refreshAgain: false,
    firstRenderMs: null, ready: false, timings: {}
  };
  window.iggView = view;  // read by the tests and the benchmark (ready, firstRenderMs, counts)

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
      showMessage("");
    }).catch(function (e) { showMessage("Could not load session " + sessionId + ": " + e.message); });
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
    Promise.all([api(path + "/graph"), api(path + "/iterations")]).then(function (both) {
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

  function nodeAttributes(n) {
    return { label: n.label, nodeType: n.type, color: view.nodeColor[n.type] || MISSING, data: n };
  }

  function edgeAttributes(e) {
    return { edgeType: e.type, color: view.edgeColor[e.type] || MISSING, size: 1, data: e };
  }

  function nodeSize(degree) { return Math.min(3 + 1.6 * Math.sqrt(degree), 18); }

  function sizeNodes(graph) {
    graph.forEachNode(function (node) { graph.setNodeAttribute(node, "size", nodeSize(graph.degree(node))); });
  }

  /* Where each type's nodes start: one disc per type (hubs in the middle, a sunflower spiral outwards), the
   * discs packed in rows, largest first. Instant at any size; the force layout then refines it. */
  function typeCenters(counts) {
    var types = Object.keys(counts).sort(function (a, b) { return counts[b] - counts[a]; });
    var radius = {}, area = 0;
    types.forEach(function (t) { radius[t] = 10 * Math.sqrt(counts[t] + 1) + 10; area += 4 * radius[t] * radius[t]; });
    var rowWidth = Math.max(1.6 * Math.sqrt(area), types.length ? 2 * radius[types[0]] : 0);
    var centers = {}, x = 0, y = 0, rowHeight = 0, gap = 30;
    types.forEach(function (t) {
      var r = radius[t];
      if (x > 0 && x + 2 * r > rowWidth) { x = 0; y += rowHeight + gap; rowHeight = 0; }
      centers[t] = { x: x + r, y: y + r, r: r };
      x += 2 * r + gap;
      rowHeight = Math.max(rowHeight, 2 * r);
    });
    return centers;
  }

  function countTypes(graph) {
    var counts = {};
    graph.forEachNode(function (node, a) { counts[a.nodeType] = (counts[a.nodeType] || 0) + 1; });
    return counts;
  }

  function placeNew(graph, node) {
    var pos = null;
    graph.forEachNeighbor(node, function (other, a) {
      if (!pos && typeof a.x === "number" && !a.fresh) { pos = { x: a.x, y: a.y }; }
    });
    if (!pos) {
      var c = (view.centers || {})[graph.getNodeAttribute(node, "nodeType")] || { x: 0, y: 0 };
      pos = { x: c.x, y: c.y };
    }
    var angle = Math.random() * 2 * Math.PI;
    graph.mergeNodeAttributes(node, { x: pos.x + 12 * Math.cos(angle), y: pos.y + 12 * Math.sin(angle) });
  }

  /* The graphology graph for a payload, every attribute computed before the node is added (one pass each,
   * no attribute events): degrees from the edge list, positions from each type's disc. */
  function buildGraph(payload) {
    var graph = new graphology.MultiDirectedGraph({ allowSelfLoops: true });
    var degree = {}, counts = {}, byType = {}, known = {};
    payload.nodes.forEach(function (n) {
      known[n.id] = true; degree[n.id] = 0; counts[n.type] = (counts[n.type] || 0) + 1;
      (byType[n.type] = byType[n.type] || []).push(n);
    });
    payload.edges.forEach(function (e) {
      if (known[e.source] && known[e.target]) { degree[e.source] += 1; degree[e.target] += 1; }
    });
    var centers = typeCenters(counts), golden = Math.PI * (3 - Math.sqrt(5));
    Object.keys(byType).forEach(function (t) {
      var c = centers[t];
      byType[t].sort(function (a, b) { return degree[b.id] - degree[a.id]; }).forEach(function (n, i) {
        var r = 10 * Math.sqrt(i + 0.5), attrs = nodeAttributes(n);
        attrs.size = nodeSize(degree[n.id]);
        attrs.x = c.x + r * Math.cos(i * golden);
        attrs.y = c.y + r * Math.sin(i * golden);
        graph.addNode(n.id, attrs);
      });
    });
    payload.edges.forEach(function (e) {
      if (known[e.source] && known[e.target]) { graph.addDirectedEdgeWithKey(e.id, e.source, e.target, edgeAttributes(e)); }
    });
    view.centers = centers;
    return graph;
  }

  function narrowed() {
    return view.hiddenNodeTypes.size > 0 || view.hiddenEdgeTypes.size > 0 || view.matches !== null ||
      view.selected !== null || view.selectedEdge !== null;
  }

  function nodeReducer(node, data) {
    if (!narrowed()) { return data; }  // nothing filtered, searched or selected: draw as is (no copy)
    var res = Object.assign({}, data);
    if (view.hiddenNodeTypes.has(data.nodeType)) { res.hidden = true; return res; }
    if (view.matches && !view.matches.has(node)) { res.color = "#dfe1e5"; res.label = ""; res.zIndex = 0; }
    if (view.neighbors && !view.neighbors.has(node) && node !== view.selected) { res.color = "#dfe1e5"; res.label = ""; }
    if (node === view.selected) { res.highlighted = true; res.zIndex = 2; }
    else if (view.matches && view.matches.has(node)) { res.highlighted = view.matches.size <= 50; res.zIndex = 1; }
    return res;
  }

  function edgeReducer(edge, data) {
    if (!narrowed()) { return data; }
    var res = Object.assign({}, data);
    var graph = view.graph;
    if (view.hiddenEdgeTypes.has(data.edgeType)) { res.hidden = true; return res; }
    var s = graph.source(edge), t = graph.target(edge);
    if (view.hiddenNodeTypes.has(graph.getNodeAttribute(s, "nodeType")) ||
        view.hiddenNodeTypes.has(graph.getNodeAttribute(t, "nodeType"))) { res.hidden = true; return res; }
    if (view.selected && s !== view.selected && t !== view.selected) { res.hidden = true; return res; }
    if (view.matches && !view.matches.has(s) && !view.matches.has(t)) { res.hidden = true; return res; }
    if (edge === view.selectedEdge) { res.size = 3; res.color = "#1d1f23"; res.zIndex = 2; }
    return res;
  }

  function mark(name, since) { view.timings[name] = Math.round(performance.now() - since); return performance.now(); }

  function showGraph(payload) {
    if (payload.version !== 1) { showMessage("This page cannot read graph payload version " + payload.version); }
    var t = performance.now();
    view.payload = payload;
    assignColors(payload);
    var graph = buildGraph(payload);
    view.graph = graph;
    t = mark("build", t);
    renderHeader();
    if (view.renderer) { view.renderer.kill(); view.renderer = null; }
    var big = graph.size > 20000 || graph.order > 20000;
    var renderer = new Sigma(graph, $("canvas"), {
      defaultEdgeType: graph.size > 5000 ? "line" : "arrow", enableEdgeEvents: !big, hideEdgesOnMove: big, zIndex: true, stagePadding: 50,
      labelRenderedSizeThreshold: graph.order > 2000 ? 9 : graph.order > 300 ? 6 : 1, labelDensity: 0.5,
      nodeReducer: nodeReducer, edgeReducer: edgeReducer, minCameraRatio: 0.02, maxCameraRatio: 20
    });
    view.renderer = renderer;
    renderer.on("clickNode", function (e) { selectNode(e.node, false); });
    renderer.on("clickEdge", function (e) { selectEdge(e.edge); });
    renderer.on("clickStage", function () { clearSelection(); });
    renderer.on("enterNode", function () { $("canvas").style.cursor = "pointer"; });
    renderer.on("leaveNode", function () { $("canvas").style.cursor = ""; });
    t = mark("sigma", t);
    renderFilters();
    if ($("search").value.trim()) { applySearch(); } else { view.matches = null; renderList(); }
    renderIterations();
    mark("panels", t);
    requestAnimationFrame(function () {
      if (view.firstRenderMs === null) { view.firstRenderMs = performance.now(); }
      view.ready = true;
      document.body.setAttribute("data-ready", "true");
      if (!/nolayout/.test(location.hash)) { startLayout(graph.order <= 5000 ? 4000 : 2500); }
    });
  }

  /* Brings the drawn graph in line with a new payload: new nodes appear next to a neighbour (or in their
   * type's disc), removed ones disappear, the others keep their place. */
  function mergeGraph(payload) {
    var graph = view.graph;
    if (!graph) { showGraph(payload); return; }
    stopLayout();  // the layout worker must not hold positions of nodes about to change
    view.payload = payload;
    assignColors(payload);
    if (!view.centers || !Object.keys(view.centers).length) { view.centers = typeCenters(countTypes(graph)); }
    var keepNodes = new Set(), keepEdges = new Set(), added = [];
    payload.nodes.forEach(function (n) {
      keepNodes.add(n.id);
      if (graph.hasNode(n.id)) { graph.mergeNodeAttributes(n.id, nodeAttributes(n)); return; }
      var c = view.centers[n.type] || { x: 0, y: 0 };  // provisional: moved next to a neighbour below
      graph.addNode(n.id, Object.assign(nodeAttributes(n), { fresh: true, size: 3, x: c.x + 20 * (Math.random() - 0.5), y: c.y + 20 * (Math.random() - 0.5) }));
      added.push(n.id);
    });
    graph.forEachNode(function (node) { if (!keepNodes.has(node)) { graph.dropNode(node); } });
    payload.edges.forEach(function (e) {
      keepEdges.add(e.id);
      if (graph.hasEdge(e.id)) { graph.mergeEdgeAttributes(e.id, edgeAttributes(e)); }
      else if (graph.hasNode(e.source) && graph.hasNode(e.target)) { graph.addDirectedEdgeWithKey(e.id, e.source, e.target, edgeAttributes(e)); }
    });
    graph.forEachEdge(function (edge) { if (!keepEdges.has(edge)) { graph.dropEdge(edge); } });
    added.forEach(function (node) { placeNew(graph, node); });
    added.forEach(function (node) { graph.removeNodeAttribute(node, "fresh"); });
    sizeNodes(graph);
    if (view.selected && !graph.hasNode(view.selected)) { clearSelection(); }
    renderHeader();
    renderFilters();
    applySearch();
    renderIterations();
    if (added.length) { startLayout(1500); }
  }

  // ---- layout ----------------------------------------------------------------------------------------
  function startLayout(ms) {
    var lib = window.graphologyLibrary;
    var graph = view.graph;
    stopLayout();
    if (!lib || graph.order < 2) { return; }
    try {
      var settings = lib.layoutForceAtlas2.inferSettings(graph);
      settings.adjustSizes = false;
      settings.strongGravityMode = true;  // keeps separate components near each other
      settings.gravity = 1;
      settings.scalingRatio = Math.max(settings.scalingRatio || 1, 10);
      view.layout = new lib.FA2Layout(graph, { settings: settings });
      view.layout.start();
    } catch (e) {  // no web workers (some file:// setups): a short synchronous run on small graphs only
      view.layout = null;
      if (graph.order <= 3000) { lib.layoutForceAtlas2.assign(graph, { iterations: 60, settings: lib.layoutForceAtlas2.inferSettings(graph) }); }
    }
    $("layout-toggle").setAttribute("aria-pressed", view.layout ? "true" : "false");
    $("layout-toggle").textContent = view.layout ? "Stop layout" : "Layout";
    if (view.layout) { view.layoutTimer = setTimeout(stopLayout, ms); }
  }

  function stopLayout() {
    clearTimeout(view.layoutTimer);
    if (view.layout) { view.layout.kill(); view.layout = null; }
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
    var graph = view.graph;
    var nodeCounts = {}, edgeCounts = {};
    graph.forEachNode(function (n, a) { nodeCounts[a.nodeType] = (nodeCounts[a.nodeType] || 0) + 1; });
    graph.forEachEdge(function (e, a) { edgeCounts[a.edgeType] = (edgeCounts[a.edgeType] || 0) + 1; });
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
        applySearch();
      });
      box.appendChild(el("label", null, [input, el("span", { "class": "swatch" + (kind === "edge" ? " edge" : ""), style: "background:" + colors[t], "aria-hidden": "true" }),
        el("span", { "class": "name", text: t }), el("span", { "class": "count", text: String(counts[t] || 0) })]));
    });
  }

  function applySearch() {
    var q = $("search").value.trim().toLowerCase();
    view.query = q;
    var graph = view.graph;
    if (q) {
      view.matches = new Set();
      graph.forEachNode(function (node, a) {
        if (String(a.label).toLowerCase().indexOf(q) >= 0 || node.toLowerCase() === q) { view.matches.add(node); }
      });
    } else { view.matches = null; }
    renderList();
    if (view.renderer) { view.renderer.refresh({ skipIndexation: true }); }
  }

  function renderList() {
    var graph = view.graph, list = $("node-list");
    var rows = [];
    graph.forEachNode(function (node, a) {
      if (view.hiddenNodeTypes.has(a.nodeType)) { return; }
      if (view.matches && !view.matches.has(node)) { return; }
      rows.push([String(a.label), node, a]);
    });
    rows.sort(function (x, y) { return COLLATOR.compare(x[0], y[0]); });
    list.textContent = "";
    var frag = document.createDocumentFragment();
    rows.slice(0, LIST_LIMIT).forEach(function (r) {
      var button = el("button", { type: "button", "data-node": r[1], onclick: function () { selectNode(r[1], true); } }, [
        el("span", { "class": "swatch", style: "background:" + r[2].color, "aria-hidden": "true" }),
        el("span", { "class": "label", text: r[0] }), el("span", { "class": "type", text: r[2].nodeType })]);
      button.title = r[0];
      if (r[1] === view.selected) { button.setAttribute("aria-current", "true"); }
      frag.appendChild(el("li", null, [button]));
    });
    if (rows.length > LIST_LIMIT) {
      frag.appendChild(el("li", { "class": "more", text: "… and " + (rows.length - LIST_LIMIT) + " more: refine the search or the filters" }));
    }
    list.appendChild(frag);
    var total = graph.order;
    $("node-count").textContent = rows.length === total ? total + " nodes" : rows.length + " of " + total + " nodes shown";
  }

  // ---- selection and details -------------------------------------------------------------------------
  function selectNode(node, focus) {
    var graph = view.graph;
    if (!graph.hasNode(node)) { return; }
    view.selected = node;
    view.selectedEdge = null;
    view.neighbors = new Set(graph.neighbors(node));
    renderNodeDetails(node);
    markListed(node);
    view.renderer.refresh({ skipIndexation: true });
    if (focus) {
      var d = view.renderer.getNodeDisplayData(node);
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
    box.appendChild(el("p", { "class": "hint", text: "Select a node or an edge in the drawing or the list." }));
    markListed(null);
    if (view.renderer) { view.renderer.refresh({ skipIndexation: true }); }
  }

  function markListed(node) {
    var buttons = $("node-list").querySelectorAll("button[aria-current]");
    for (var i = 0; i < buttons.length; i++) { buttons[i].removeAttribute("aria-current"); }
    if (node) {
      var mine = $("node-list").querySelector('button[data-node="' + CSS.escape(node) + '"]');
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

  function nodeButton(node) {
    var a = view.graph.getNodeAttributes(node);
    return el("button", { type: "button", "class": "link", onclick: function () { selectNode(node, true); } },
      [a.nodeType + ": " + a.label]);
  }

  function renderNodeDetails(node) {
    var graph = view.graph, a = graph.getNodeAttributes(node), n = a.data;
    var box = $("details");
    box.textContent = "";
    box.appendChild(el("h2", { text: a.label }));
    box.appendChild(dl([["type", n.type], ["id", n.id]]));
    box.appendChild(el("h3", { text: "Properties" }));
    box.appendChild(dl(Object.keys(n.properties).map(function (k) { return [k, n.properties[k]]; })));
    box.appendChild(el("h3", { text: "Provenance" }));
    box.appendChild(dl(provenancePairs(n.provenance)));
    if (config.mode === "server" && view.sessionId) {
      var history = el("div", { id: "element-history" });
      history.appendChild(el("button", { type: "button", onclick: function () { loadHistory(node, history); } }, ["Show every change"]));
      box.appendChild(history);
    }
    ["out", "in"].forEach(function (dir) {
      var edges = dir === "out" ? graph.outEdges(node) : graph.inEdges(node);
      if (!edges.length) { return; }
      box.appendChild(el("h3", { text: (dir === "out" ? "Outgoing" : "Incoming") + " edges (" + edges.length + ")" }));
      var ul = el("ul");
      edges.slice(0, 30).forEach(function (edge) {
        var other = dir === "out" ? graph.target(edge) : graph.source(edge);
        ul.appendChild(el("li", null, [graph.getEdgeAttribute(edge, "edgeType") + (dir === "out" ? " → " : " ← "), nodeButton(other)]));
      });
      if (edges.length > 30) { ul.appendChild(el("li", { text: "… " + (edges.length - 30) + " more" })); }
      box.appendChild(ul);
    });
  }

  function renderEdgeDetails(edge) {
    var graph = view.graph, e = graph.getEdgeAttribute(edge, "data");
    var box = $("details");
    box.textContent = "";
    box.appendChild(el("h2", { text: e.type }));
    box.appendChild(el("p", null, [nodeButton(e.source), " → ", nodeButton(e.target)]));
    box.appendChild(dl([["id", e.id]]));
    if (Object.keys(e.properties).length) {
      box.appendChild(el("h3", { text: "Properties" }));
      box.appendChild(dl(Object.keys(e.properties).map(function (k) { return [k, e.properties[k]]; })));
    }
    box.appendChild(el("h3", { text: "Provenance" }));
    box.appendChild(dl(provenancePairs(e.provenance)));
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
        if (first) { selectNode(first.getAttribute("data-node"), true); }
      }
    });
    $("zoom-in").addEventListener("click", function () { view.renderer.getCamera().animatedZoom({ duration: 250 }); });
    $("zoom-out").addEventListener("click", function () { view.renderer.getCamera().animatedUnzoom({ duration: 250 }); });
    $("zoom-fit").addEventListener("click", function () { view.renderer.getCamera().animatedReset({ duration: 250 }); });
    $("layout-toggle").addEventListener("click", function () { if (view.layout) { stopLayout(); } else { startLayout(8000); } });
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
    var embedded = JSON.parse(document.getElementById("igg-graph").textContent);
    mark("parse", parsed);
    showGraph(embedded);
  } else {
    window.addEventListener("hashchange", route);
    route();
  }
})();

/* IGG graph viewer: the model of a graph as the page draws it (no DOM, no drawing; viewer.js draws it).
 *
 * A model holds every node of a payload (igg/view/data.py), the group tree (payload.grouping and each node's
 * parent, igg/view/aggregate.py), each group's size and the extent its subtree needs when drawn whole. On it:
 * what is drawn when some groups are open (computeVisible: a closed group stands for everything under it),
 * the first groups to open (autoExpand), starting positions (placeChildren, placeOpen, placeMissing), and the
 * walks of the focus views in an exported page (reach, shortestPath). Exposed as window.iggModel. */
(function () {
  "use strict";

  var GOLDEN = Math.PI * (3 - Math.sqrt(5));

  /* The payload an exported page embeds in columns (igg/view/columns.py: each node and edge a row across
   * parallel lists, types and ends as indices, property names once per shape, each distinct provenance once) as the list of objects the
   * live routes send; a payload without columns passes as it is. Edges with no properties share one empty
   * (frozen) object, as rows with the same provenance share theirs: nothing here changes them. */
  function fromColumns(embedded) {
    var cols = embedded.columns;
    if (!cols) { return embedded; }
    var nc = cols.nodes, ec = cols.edges, table = cols.provenance, shapes = cols.shapes, ids = expandIds(nc.id), i;
    var edgeIds = expandIds(ec.id);
    var nodeTypes = embedded.node_types, edgeTypes = embedded.edge_types, empty = Object.freeze({});
    var nodes = new Array(ids.length), edges = new Array(edgeIds.length), edgeProps = new Array(edgeIds.length);
    function ref(x) { return typeof x === "number" ? ids[x] : x; }
    function properties(row) {
      var keys = shapes[row[0]], out = {};
      for (var k = 0; k < keys.length; k++) {
        if (keys[k] === "__proto__") {  // an own property, as JSON.parse makes it, not the prototype
          Object.defineProperty(out, keys[k], { value: row[k + 1], enumerable: true, writable: true, configurable: true });
        } else { out[keys[k]] = row[k + 1]; }
      }
      return out;
    }
    // a label left out (null) is the node's identity values, all strings, joined by spaces (columns.py)
    var identity = embedded.identity_keys || {}, own = Object.prototype.hasOwnProperty;
    function identityText(props, keys) {
      var parts = [];
      for (var k = 0; k < keys.length; k++) {
        if (own.call(props, keys[k]) && props[keys[k]] !== null) { parts.push(props[keys[k]]); }
      }
      return parts.join(" ");
    }
    for (i = 0; i < ids.length; i++) {
      var parent = nc.parent[i], type = nodeTypes[nc.type[i]], props = properties(nc.properties[i]), label = nc.label[i];
      nodes[i] = { id: ids[i], type: type, label: label === null ? identityText(props, identity[type]) : label, properties: props,
        provenance: table[nc.provenance[i]], parent: parent === null ? undefined : ref(parent) };
    }
    ec.properties.forEach(function (pair) { edgeProps[pair[0]] = pair[1]; });
    for (i = 0; i < edges.length; i++) {
      edges[i] = { id: edgeIds[i], type: edgeTypes[ec.type[i]], source: ref(ec.source[i]), target: ref(ec.target[i]),
        properties: edgeProps[i] || empty, provenance: table[ec.provenance[i]] };
    }
    var out = {};
    Object.keys(embedded).forEach(function (k) { if (k !== "columns") { out[k] = embedded[k]; } });
    out.nodes = nodes;
    out.edges = edges;
    return out;
  }

  /* An id column: ids, and runs of ids that go up by one as [prefix, first number, count]. */
  function expandIds(column) {
    var out = [];
    for (var i = 0; i < column.length; i++) {
      var item = column[i];
      if (typeof item === "string") { out.push(item); continue; }
      for (var k = 0; k < item[2]; k++) { out.push(item[0] + (item[1] + k)); }
    }
    return out;
  }

  /* A big graph is drawn aggregated: groups (payload.grouping, computed by igg/view/aggregate.py) stand for
   * their members, edges between groups are bundled and weighted by how many edges they carry. Every node's
   * place in the group tree is known (parent), so an expanded group shows its children, a node found by the
   * search opens its ancestors, and a node that arrives later (a growing session) joins its group. */
  function buildModel(payload, previous) {
    var grouping = payload.grouping || {};
    var m = { nodes: {}, ids: [], parent: {}, groups: {}, children: {}, roots: [], degree: {}, top: {},
      edges: [], kind: typeof grouping.kind === "string" ? grouping.kind : "none" };
    var i, list = payload.nodes;
    for (i = 0; i < list.length; i++) {
      var n = list[i];
      if (!n || typeof n.id !== "string" || m.nodes[n.id]) { continue; }  // one bad entry never stops the page
      m.nodes[n.id] = n; m.ids.push(n.id); m.degree[n.id] = 0;
    }
    list = payload.edges;
    for (i = 0; i < list.length; i++) {
      var e = list[i];
      if (e && m.nodes[e.source] && m.nodes[e.target]) { m.edges.push(e); m.degree[e.source] += 1; m.degree[e.target] += 1; }
    }
    var keepCommunities = previous && previous.kind === "community" && m.kind === "community";
    if (keepCommunities) {  // Louvain may renumber a grown graph: known nodes keep their group, new ones join one
      Object.keys(previous.groups).forEach(function (g) { m.groups[g] = Object.assign({}, previous.groups[g]); });
    } else {
      (Array.isArray(grouping.groups) ? grouping.groups : []).forEach(function (g) {
        if (!g || typeof g.id !== "string") { return; }
        m.groups[g.id] = { id: g.id, label: String(g.label === undefined ? g.id : g.label), kind: String(g.kind || "group"),
          synthetic: !m.nodes[g.id], parent: typeof g.parent === "string" ? g.parent : null, size: 0 };
      });
    }
    var joined = keepCommunities ? joinNeighbours(m, previous) : null;
    for (i = 0; i < m.ids.length; i++) {
      var id = m.ids[i], p = m.nodes[id].parent;
      if (keepCommunities) { p = previous.nodes[id] ? previous.parent[id] : joined[id]; }
      if (typeof p === "string" && p !== id && m.groups[p]) { m.parent[id] = p; }
    }
    Object.keys(m.groups).forEach(function (g) {
      var grp = m.groups[g];
      if (grp.synthetic && grp.parent && m.groups[grp.parent] && grp.parent !== g) { m.parent[g] = grp.parent; }
    });
    linkTree(m);
    return m;
  }

  /* For each node the previous model did not know: the group most of its known neighbours are in (one pass
   * over the edges, however many nodes are new). */
  function joinNeighbours(m, previous) {
    var votes = {}, best = {};
    function vote(node, other) {
      var g = previous.nodes[node] ? undefined : previous.parent[other];
      if (g === undefined) { return; }
      var mine = votes[node] = votes[node] || {};
      mine[g] = (mine[g] || 0) + 1;
      if (best[node] === undefined || mine[g] > mine[best[node]]) { best[node] = g; }
    }
    m.edges.forEach(function (e) { vote(e.source, e.target); vote(e.target, e.source); });
    return best;
  }

  /* children lists, roots, sizes and each item's top-level ancestor; a parent cycle (bad input) is cut */
  function linkTree(m) {
    var items = m.ids.concat(Object.keys(m.groups).filter(function (g) { return m.groups[g].synthetic; }));
    items.forEach(function (id) {
      var p = m.parent[id];
      if (p !== undefined && m.groups[p] && !m.groups[p].synthetic && !m.nodes[p]) { delete m.parent[id]; }
    });
    // a parent cycle (bad input) is cut where it closes: walking up from each item, an item met twice on
    // one walk loses its parent; a walk stops at an item an earlier walk settled (walk numbers, no set per walk)
    var walkOf = new Map(), w, id, i, k, kids;
    for (w = 0; w < items.length; w++) {
      for (id = items[w]; id !== undefined; id = m.parent[id]) {
        var met = walkOf.get(id);
        if (met !== undefined) { if (met === w) { delete m.parent[id]; } break; }
        walkOf.set(id, w);
      }
    }
    for (i = 0; i < items.length; i++) {
      var p = m.parent[items[i]];
      if (p === undefined) { m.roots.push(items[i]); } else { (m.children[p] = m.children[p] || []).push(items[i]); }
    }
    var seen = new Set(), order = [], stack = [], tops = [];
    for (i = 0; i < m.roots.length; i++) {
      stack.push(m.roots[i]); tops.push(m.roots[i]);
      while (stack.length) {
        id = stack.pop();
        var top = tops.pop();
        if (seen.has(id)) { continue; }
        seen.add(id); m.top[id] = top; order.push(id);
        kids = m.children[id];
        if (kids) { for (k = 0; k < kids.length; k++) { stack.push(kids[k]); tops.push(top); } }
      }
    }
    m.extent = {};
    for (i = order.length - 1; i >= 0; i--) {  // children before parents: sizes and extents add up
      id = order[i];
      var g = m.groups[id], area = 0, size = 0;
      kids = m.children[id] || [];
      for (k = 0; k < kids.length; k++) {
        var c = kids[k], e = m.extent[c];
        area += e * e;
        if (g) { size += (m.nodes[c] ? 1 : 0) + (m.groups[c] ? m.groups[c].size : 0); }
      }
      if (g) { g.size = size; }
      m.extent[id] = area ? 2.1 * Math.sqrt(area) + 6 : 6;  // the disc a subtree needs when drawn in full
    }
    var rank = {};
    m.roots.slice().sort(function (a, b) { return sizeOf(m, b) - sizeOf(m, a); }).forEach(function (r, i) { rank[r] = i; });
    m.rank = rank;
  }

  function sizeOf(m, id) { return m.groups[id] ? m.groups[id].size : 0; }
  function isGroup(m, id) { var g = m.groups[id]; return !!(g && m.children[id] && m.children[id].length); }
  function labelOf(m, id) {
    if (m.nodes[id]) { return String(m.nodes[id].label); }
    return m.groups[id] ? m.groups[id].label : id;
  }

  function ancestors(m, id) {
    var out = [], p = m.parent[id], guard = 0;
    while (p !== undefined && guard++ < 1000) { out.unshift(p); p = m.parent[p]; }
    return out;
  }

  /* What is drawn: every item whose ancestors are all open; a closed group stands for everything under it. */
  function computeVisible(m, aggregated, expanded) {
    var rep = {}, items = [], seen = new Set(), k;
    var stack = m.roots.slice().reverse(), unders = stack.map(function () { return null; });  // two stacks, no pairs
    while (stack.length) {
      var id = stack.pop(), under = unders.pop(), kids = m.children[id] || [];
      if (seen.has(id)) { continue; }
      seen.add(id);
      if (under !== null) {
        rep[id] = under;
        for (k = kids.length - 1; k >= 0; k--) { stack.push(kids[k]); unders.push(under); }
        continue;
      }
      var closed = aggregated && kids.length > 0 && !expanded.has(id);
      if (closed || !(m.groups[id] && m.groups[id].synthetic)) { items.push(id); rep[id] = id; }
      for (k = kids.length - 1; k >= 0; k--) { stack.push(kids[k]); unders.push(closed ? id : null); }
    }
    return { items: items, rep: rep };
  }

  /* The first view of an aggregated graph: the biggest groups open while what is drawn stays under budget. */
  function autoExpand(m, aggregated, budget) {
    var expanded = new Set();
    if (!aggregated) { return expanded; }
    var count = m.roots.length, frontier = m.roots.filter(function (id) { return (m.children[id] || []).length; });
    for (var guard = 0; guard < 500 && frontier.length; guard++) {
      frontier.sort(function (a, b) { return sizeOf(m, b) - sizeOf(m, a); });
      var g = frontier.shift(), kids = m.children[g] || [];
      var added = kids.length - (m.groups[g].synthetic ? 1 : 0);
      if (count + added > budget) { if (count > budget / 4) { break; } continue; }
      expanded.add(g);
      count += added;
      kids.forEach(function (c) { if ((m.children[c] || []).length) { frontier.push(c); } });
    }
    return expanded;
  }

  // ---- positions ---------------------------------------------------------------------------------------
  function extentOf(m, id) { return m.extent[id] || 6; }

  /* Children around their group (a sunflower, biggest first), recursively when ``deep``: instant at any size,
   * and a group's members start where the group was. The force layout then refines what is drawn. */
  function placeChildren(m, kids, center, pos, deep) {
    kids = kids.slice().sort(function (a, b) { return sizeOf(m, b) - sizeOf(m, a) || m.degree[b] - m.degree[a]; });
    var squares = 0;
    kids.forEach(function (k) { squares += extentOf(m, k) * extentOf(m, k); });
    var step = Math.max(6, 2 * Math.sqrt(squares / Math.max(kids.length, 1)));  // sunflower cells fit the subtrees
    kids.forEach(function (k, i) {
      var r = step * Math.sqrt(i + 0.7);
      pos[k] = { x: center.x + r * Math.cos(i * GOLDEN), y: center.y + r * Math.sin(i * GOLDEN) };
      if (deep && (m.children[k] || []).length) { placeChildren(m, m.children[k], pos[k], pos, true); }
    });
  }

  /* Positions for what is drawn: the roots, and the children of every open group (all of them when the
   * graph is drawn in full); a closed group's members get theirs when it opens. */
  function placeOpen(m, aggregated, expanded, pos) {
    placeChildren(m, m.roots, { x: 0, y: 0 }, pos, !aggregated);
    if (!aggregated) { return; }
    var queue = m.roots.filter(function (id) { return expanded.has(id); });
    while (queue.length) {
      var g = queue.shift();
      placeChildren(m, m.children[g] || [], pos[g], pos, false);
      (m.children[g] || []).forEach(function (c) { if (expanded.has(c)) { queue.push(c); } });
    }
  }

  function placeMissing(m, items, pos) {
    items.forEach(function (id) {
      if (pos[id]) { return; }
      var anchor = null;
      for (var p = m.parent[id]; p !== undefined && !anchor; p = m.parent[p]) { anchor = pos[p]; }
      if (!anchor) { anchor = { x: 0, y: 0 }; }
      var a = Math.random() * 2 * Math.PI, r = 5 + Math.random() * 10;
      pos[id] = { x: anchor.x + r * Math.cos(a), y: anchor.y + r * Math.sin(a) };
    });
  }


  // ---- walks over the edges (the focus views of an exported page) ----------------------------------------
  function adjacency(m) {
    if (!m.adj) {
      var out = {}, inn = {};
      m.edges.forEach(function (e) { (out[e.source] = out[e.source] || []).push(e); (inn[e.target] = inn[e.target] || []).push(e); });
      m.adj = { out: out, "in": inn };
    }
    return m.adj;
  }

  function reach(m, start, direction, depth, skip, limit) {
    var adj = adjacency(m), dist = {}, edges = [], frontier = [start], leftOut = 0, count = 1;
    var counted = {};
    dist[start] = 0;
    for (var d = 1; d <= depth && frontier.length; d++) {
      var next = [];
      frontier.forEach(function (u) {
        var steps = [];
        if (direction !== "in") { (adj.out[u] || []).forEach(function (e) { steps.push([e, e.target]); }); }
        if (direction !== "out") { (adj["in"][u] || []).forEach(function (e) { steps.push([e, e.source]); }); }
        steps.forEach(function (s) {
          if (skip.has(s[0].type)) { return; }
          var other = s[1];
          if (dist[other] === undefined) {
            if (count >= limit) { if (!counted[other]) { counted[other] = true; leftOut += 1; } return; }
            dist[other] = d; count += 1; next.push(other);
          }
          edges.push(s[0].id);
        });
      });
      frontier = next;
    }
    return { dist: dist, edges: edges, leftOut: leftOut };
  }

  function shortestPath(m, a, b, skip) {
    if (a === b) { return [a]; }
    var adj = adjacency(m), prev = {}, queue = [a], head = 0;
    prev[a] = null;
    while (head < queue.length) {
      var u = queue[head++], steps = (adj.out[u] || []).map(function (e) { return [e, e.target]; })
        .concat((adj["in"][u] || []).map(function (e) { return [e, e.source]; }));
      for (var i = 0; i < steps.length; i++) {
        var v = steps[i][1];
        if (skip.has(steps[i][0].type) || prev[v] !== undefined) { continue; }
        prev[v] = u;
        if (v === b) {
          var path = [b];
          for (var x = u; x !== null; x = prev[x]) { path.unshift(x); }
          return path;
        }
        queue.push(v);
      }
    }
    return null;
  }

  function distancesFrom(start, edges) {
    var adj = {}, dist = {}, queue = [start], head = 0;
    dist[start] = 0;
    edges.forEach(function (e) { (adj[e.from] = adj[e.from] || []).push(e.to); (adj[e.to] = adj[e.to] || []).push(e.from); });
    while (head < queue.length) {
      var u = queue[head++];
      (adj[u] || []).forEach(function (v) { if (dist[v] === undefined) { dist[v] = dist[u] + 1; queue.push(v); } });
    }
    return dist;
  }


  window.iggModel = {
    fromColumns: fromColumns, buildModel: buildModel, sizeOf: sizeOf, isGroup: isGroup, labelOf: labelOf, ancestors: ancestors,
    computeVisible: computeVisible, autoExpand: autoExpand, placeChildren: placeChildren, placeOpen: placeOpen,
    placeMissing: placeMissing, adjacency: adjacency, reach: reach, shortestPath: shortestPath,
    distancesFrom: distancesFrom
  };
})();

// What the paths graph draws for a result, before anything is drawn: one node per entity and
// one per entity set, each once however many paths go through it, and the hop edges.
//
// A set's identity is its members (sorted ids): the same set on three paths is one node. An
// entity that is also a drawn member of a set (James Cameron directed Titanic, with Jean
// Negulesco; and wrote it, alone) is that member's node, not a second node of its own: its
// hops end at the member (and at the set while the set is collapsed). Topic entities keep
// their own node.

export const SEP = "\u0001";

export const setKey = (ids) => (ids.length === 1 ? `e:${ids[0]}` : `s:${[...ids].sort().join(SEP)}`);
// a set the reply cuts to one member is still a set, not that entity's node
export const endKey = (ids, cut) => (cut && ids.length === 1 ? `s:${ids[0]}` : setKey(ids));
export const memberId = (set, entity) => `m:${set}${SEP}${entity}`;
export const tripleKey = (t) => `${t.head}${SEP}${t.relation}${SEP}${t.tail}`;

/** The ends of a path's hops: [[ids, position]] per hop (src at hi, dst at hi + 1). */
const endsOf = (hop, hi) => [
  [hop.src, hi],
  [hop.dst, hi + 1],
];

/**
 * The plan of `result`'s paths: `order` (top-level node keys, first seen first), `cols`
 * (key -> column), `sets` (set key -> member ids: the reply's, or of a cut set its Paged's
 * members), `cuts` (set key -> the paging.js Paged of a set the reply shows in part),
 * `edges` (id -> cytoscape edge), `nodePaths` (node key, top-level or member -> path
 * indices), `members` (entity id -> {node, set}: the member node standing for it).
 * `pages` is the result's ResultPages (or null); `drawn` how many members a set draws.
 */
export function planPaths(result, pages, drawn) {
  const topics = new Set((result.topic_entities || []).map((t) => t.id));
  const unverified = new Set((result.unverified_triples || []).map(tripleKey));
  const paths = result.paths || [];
  const sets = new Map();
  const cuts = new Map();
  // first the sets, so an entity drawn as a member is known before its own hops are planned
  paths.forEach((path, pi) => {
    path.hops.forEach((hop, hi) => {
      for (const [ids, col] of endsOf(hop, hi)) {
        const cut = pages?.at(pi, col);
        if (ids.length < 2 && !cut) continue;
        const key = endKey(ids, cut);
        if (sets.has(key)) continue;
        sets.set(key, cut ? cut.members.map((m) => m.id) : ids);
        if (cut) cuts.set(key, cut);
      }
    });
  });
  const members = new Map();
  for (const [key, ids] of sets) {
    for (const id of ids.slice(0, drawn)) if (!topics.has(id) && !members.has(id)) members.set(id, { node: memberId(key, id), set: key });
  }
  const cols = new Map();
  const order = [];
  const edges = new Map();
  const nodePaths = new Map();
  const through = (key, pi) => nodePaths.set(key, [...new Set([...(nodePaths.get(key) || []), pi])]);
  paths.forEach((path, pi) => {
    path.hops.forEach((hop, hi) => {
      const keys = [];
      for (const [ids, col] of endsOf(hop, hi)) {
        let key = endKey(ids, pages?.at(pi, col));
        const member = !sets.has(key) && members.get(ids[0]);
        if (member) {
          // the member's node, inside its set: the set is on this path too
          key = member.node;
          through(key, pi);
          through(member.set, pi);
        } else {
          if (!cols.has(key)) order.push(key);
          cols.set(key, Math.min(col, cols.get(key) ?? col));
          through(key, pi);
        }
        keys.push(key);
      }
      const [s, d] = hop.forward ? keys : [keys[1], keys[0]];
      const rels = [hop.relation, ...(hop.alt_relations || []).map((r) => r[0])];
      const id = `h:${s}${SEP}${rels.join("|")}${SEP}${d}`;
      const bad = (hop.triples || []).some((t) => unverified.has(tripleKey(t)));
      const prev = edges.get(id);
      if (prev) {
        if (!prev.data.paths.includes(pi)) prev.data.paths.push(pi);
        if (bad && !prev.classes.includes("unverified")) prev.classes = `unverified ${prev.classes}`.trim();
      } else {
        const toMember = keys.some((k) => k.startsWith("m:"));
        edges.set(id, { group: "edges", data: { id, source: s, target: d, label: rels.join(" | "), paths: [pi] }, classes: [bad ? "unverified" : "", toMember ? "to-member" : ""].join(" ").trim() });
      }
    });
  });
  return { order, cols, sets, cuts, edges, nodePaths, members, topics };
}

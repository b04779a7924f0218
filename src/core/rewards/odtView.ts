// The ODT comparison of a prediction and its gold as two display trees (plain data): every node says whether it
// matched, matched with differences, or has no counterpart, which tags fired at it, and which profile items exist
// on one side only. The diagnostics view renders these side by side; the trees and tags come from ./odt unchanged.
import {
  compareOdt,
  diagnose,
  TAG_MEANINGS,
  FEATURES,
  TAG_THRESHOLDS,
  type FeatureName,
  type NodeMatch,
  type OdtBuild,
  type OdtNode,
  type OdtTag,
  type LocalProfile,
} from './odt';
import type { SchemaLike } from '../sql';

/**
 * match: paired with a node of the other tree and no tag fired on it; mismatch: paired, but some tag fired;
 * missing: a gold node with no predicted counterpart; extra: a predicted node with no gold counterpart.
 */
type OdtNodeStatus = 'match' | 'mismatch' | 'missing' | 'extra';

interface OdtViewField {
  /** Profile feature: tables, select, where, join, groupBy, having, orderBy. */
  name: keyof Omit<LocalProfile, 'counts' | 'flags'>;
  items: Array<{
    text: string /** Not present in the paired node of the other tree (or no pair). */;
    onlyHere: boolean;
  }>;
  /** The feature similarity with the paired node, when it is one of the weighted features. */
  similarity: number | null;
  /** The similarity is under its tag threshold (Table 6). */
  low: boolean;
}

export interface OdtViewNode {
  type: OdtNode['type'];
  label: string | null;
  status: OdtNodeStatus;
  /** s_node of the pair (null when unpaired). */
  score: number | null;
  /** Tags that fired at this node (node-local, not its children's). */
  tags: Array<{ tag: OdtTag; detail: string }>;
  counts: LocalProfile['counts'] | null;
  /** Boolean indicators that hold, and whether each differs from the paired node. */
  flags: Array<{ name: string; differs: boolean }>;
  fields: OdtViewField[];
  children: OdtViewNode[];
}

export interface OdtView {
  pred: OdtViewNode | null;
  gold: OdtViewNode | null;
  predError: string | null;
  goldError: string | null;
  struct: number;
  lexical: number;
  F: number;
  tags: Array<{ tag: OdtTag; meaning: string; reasons: string[] }>;
  feedback: string | null;
}

const FIELD_NAMES: OdtViewField['name'][] = ['tables', 'select', 'where', 'join', 'groupBy', 'having', 'orderBy'];

function nodeTags(m: NodeMatch): OdtViewNode['tags'] {
  // diagnose() walks the whole match; a copy without children and unmatched lists gives this node's own tags.
  return diagnose({ ...m, children: [], missing: [], extra: [] }).reasons.map((r) => ({
    tag: r.tag,
    detail: r.detail,
  }));
}

function fieldsOf(
  own: LocalProfile | null,
  other: LocalProfile | null,
  features: NodeMatch['features'],
): OdtViewField[] {
  if (!own) return [];
  return FIELD_NAMES.map((name) => {
    const theirs = new Set(other ? other[name] : []);
    const sim = features && (FEATURES as readonly string[]).includes(name) ? features[name as FeatureName] : null;
    const threshold = TAG_THRESHOLDS[name as FeatureName];
    return {
      name,
      items: own[name].map((text) => ({ text, onlyHere: !theirs.has(text) })),
      similarity: sim,
      low: sim !== null && threshold !== undefined && sim < threshold,
    };
  });
}

function flagsOf(own: LocalProfile | null, other: LocalProfile | null): OdtViewNode['flags'] {
  if (!own) return [];
  const names = Object.keys(own.flags) as Array<keyof LocalProfile['flags']>;
  return names
    .filter((n) => own.flags[n] || (other?.flags[n] ?? false))
    .map((n) => ({ name: own.flags[n] ? n : `no ${n}`, differs: other ? own.flags[n] !== other.flags[n] : true }));
}

/** A subtree with no counterpart: every node in it is `missing` (gold) or `extra` (predicted). */
function unpaired(n: OdtNode, status: 'missing' | 'extra'): OdtViewNode {
  return {
    type: n.type,
    label: n.label,
    status,
    score: null,
    tags: [
      {
        tag: status === 'missing' ? 'SUBQUERY_MISSING' : 'EXTRA_SUBQUERY_OR_CTE',
        detail: status === 'missing' ? 'no compatible predicted node' : 'no compatible gold node',
      },
    ],
    counts: n.profile?.counts ?? null,
    flags: flagsOf(n.profile, null),
    fields: fieldsOf(n.profile, null, null),
    children: n.children.map((c) => unpaired(c, status)),
  };
}

/** Both sides of one match, in the order of each tree's own children. */
function paired(m: NodeMatch): { pred: OdtViewNode; gold: OdtViewNode } {
  const tags = nodeTags(m);
  const status: OdtNodeStatus = tags.length ? 'mismatch' : 'match';
  const predChildren = new Map<OdtNode, OdtViewNode>();
  const goldChildren = new Map<OdtNode, OdtViewNode>();
  for (const c of m.children) {
    const v = paired(c);
    predChildren.set(c.pred, v.pred);
    goldChildren.set(c.gold, v.gold);
  }
  for (const n of m.missing) goldChildren.set(n, unpaired(n, 'missing'));
  for (const n of m.extra) predChildren.set(n, unpaired(n, 'extra'));
  const side = (own: OdtNode, other: OdtNode, kids: Map<OdtNode, OdtViewNode>): OdtViewNode => ({
    type: own.type,
    label: own.label,
    status,
    score: m.score,
    tags,
    counts: own.profile?.counts ?? null,
    flags: flagsOf(own.profile, other.profile),
    fields: fieldsOf(own.profile, other.profile, m.features),
    children: own.children.map((c) => kids.get(c)).filter((v): v is OdtViewNode => v !== undefined),
  });
  return { pred: side(m.pred, m.gold, predChildren), gold: side(m.gold, m.pred, goldChildren) };
}

/**
 * A tree shown on its own (the other side did not parse): every node is unpaired; no tags, as compareOdt gives none.
 */
function plain(b: OdtBuild, status: 'missing' | 'extra'): OdtViewNode | null {
  const strip = (v: OdtViewNode): OdtViewNode => ({ ...v, tags: [], children: v.children.map(strip) });
  return b.ok ? strip(unpaired(b.root, status)) : null;
}

export function odtView(predSql: string, goldSql: string, schema?: SchemaLike): OdtView {
  const c = compareOdt(predSql, goldSql, { schema });
  const sides = c.match ? paired(c.match) : { pred: plain(c.pred, 'extra'), gold: plain(c.gold, 'missing') };
  return {
    pred: sides.pred,
    gold: sides.gold,
    predError: c.pred.ok ? null : c.pred.error,
    goldError: c.gold.ok ? null : c.gold.error,
    struct: c.struct,
    lexical: c.lexical,
    F: c.F,
    tags: c.tags.map((t) => ({
      tag: t,
      meaning: TAG_MEANINGS[t],
      reasons: c.reasons.filter((r) => r.tag === t).map((r) => r.detail),
    })),
    feedback: c.feedback,
  };
}

// Readable views of ODT trees and comparisons, for `quarry odt` and diagnostics.
import type { LocalProfile, NodeMatch, OdtNode } from './types';
import { FEATURES } from './similarity';

export function renderTree(node: OdtNode, indent = ''): string[] {
  const head = `${indent}${node.type}${node.label ? ` (${node.label})` : ''}`;
  const lines = [head];
  if (node.profile) lines.push(...renderProfile(node.profile).map((l) => `${indent}  ${l}`));
  for (const c of node.children) lines.push(...renderTree(c, indent + '  '));
  return lines;
}

function renderProfile(p: LocalProfile): string[] {
  const set = (xs: string[]) => (xs.length === 0 ? '∅' : `{${xs.join(' | ')}}`);
  const flags = Object.entries(p.flags)
    .filter(([, v]) => v)
    .map(([k]) => k);
  return [
    `counts: joins=${p.counts.joins} selectItems=${p.counts.selectItems}; ` +
      `flags: ${flags.length ? flags.join(', ') : 'none'}`,
    `tables:  ${set(p.tables)}`,
    `select:  ${set(p.select)}`,
    `where:   ${set(p.where)}`,
    `join:    ${set(p.join)}`,
    `groupBy: ${set(p.groupBy)}`,
    `having:  ${set(p.having)}`,
    `orderBy: ${set(p.orderBy)}`,
  ];
}

export function renderMatch(m: NodeMatch, indent = ''): string[] {
  const label = (n: OdtNode) => `${n.type}${n.label ? `(${n.label})` : ''}`;
  const lines = [
    `${indent}${label(m.gold)} ← ${label(m.pred)}: s_node=${m.score.toFixed(4)}` +
      (m.local !== null ? ` s_local=${m.local.toFixed(4)}` : '') +
      (m.child !== null ? ` s_child=${m.child.toFixed(4)}` : ''),
  ];
  if (m.features) lines.push(`${indent}  ${FEATURES.map((f) => `${f}=${m.features![f].toFixed(2)}`).join(' ')}`);
  for (const c of m.children) lines.push(...renderMatch(c, indent + '  '));
  for (const n of m.missing) lines.push(`${indent}  missing gold ${label(n)}`);
  for (const n of m.extra) lines.push(`${indent}  extra predicted ${label(n)}`);
  return lines;
}

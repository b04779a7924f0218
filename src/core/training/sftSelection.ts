// Choosing and ordering SFT examples (quarry.sft/1, from labels/sft.ts): one copy of each conversation, hardest
// questions first when asked (SQL-Trail App. A.6 keeps correct trajectories "prioritizing examples with moderate to
// high difficulty under Spider's difficulty classification"), and the Parquet columns of sft.parquet. Pure.
import { HARDNESS_LEVELS } from '../eval/scores';
import type { Hardness } from '../sql/hardness';
import type { SftExample } from '../labels/sft';
import type { Column } from './columns';
import type { Dropped } from './difficulty';

export interface SftCandidate {
  example: SftExample;
  /** Spider hardness of the trajectory's task, when recorded. */
  hardness: Hardness | null;
}

/** extra first, then hard, medium, easy, and unknown hardness last. */
function hardnessRank(h: Hardness | null): number {
  return h === null ? -1 : HARDNESS_LEVELS.indexOf(h);
}

/** Hardest first; equal hardness keeps input order. */
export function hardestFirst<T extends SftCandidate>(items: readonly T[]): T[] {
  return items
    .map((c, i) => ({ c, i }))
    .sort((a, b) => hardnessRank(b.c.hardness) - hardnessRank(a.c.hardness) || a.i - b.i)
    .map(({ c }) => c);
}

/** Keeps the first of each identical conversation (same roles and texts): G samples often repeat the greedy one. */
export function dropRepeatedConversations<T extends SftCandidate>(
  items: readonly T[],
): { kept: T[]; dropped: Dropped[] } {
  const seen = new Map<string, string>();
  const kept: T[] = [];
  const dropped: Dropped[] = [];
  for (const c of items) {
    const key = JSON.stringify(c.example.messages.map((m) => [m.role, m.content]));
    const first = seen.get(key);
    if (first !== undefined) {
      dropped.push({ id: c.example.id, reason: `the same conversation as ${first}` });
      continue;
    }
    seen.set(key, c.example.id);
    kept.push(c);
  }
  return { kept, dropped };
}

/**
 * Messages whose loss flag differs from what a role-based trainer would do (train every assistant message, mask
 * the rest): MTIR-SQL's rethink line is text the environment writes in the assistant role, with loss false.
 */
export function roleLossMismatches(example: SftExample): number {
  return example.messages.filter((m) => m.loss !== (m.role === 'assistant')).length;
}

const str = (name: string, optional = false): Column => ({ name, kind: 'string', optional });

/** The Parquet columns of sft.parquet: the quarry.sft/1 example as it is. */
export const SFT_COLUMNS: Column[] = [
  str('schema'),
  str('id'),
  str('protocol'),
  str('question'),
  { name: 'db', kind: 'struct', fields: [str('path'), str('id', true)] },
  str('source'),
  str('verdict', true),
  { name: 'tags', kind: 'list', element: str('element') },
  {
    name: 'messages',
    kind: 'list',
    element: { name: 'element', kind: 'struct', fields: [str('role'), str('content'), { name: 'loss', kind: 'bool' }] },
  },
];

// Which database a chat message is about, in order: a `#file` reference to a SQLite file, a workspace database the
// prompt names ("… in clinic.sqlite", "… in the orchard db"), the one used last. Pure, so the rules are unit-tested.
import { basename, extname } from 'node:path';

type DbSource = 'reference' | 'prompt' | 'last' | 'only';

interface ResolvedDb {
  path: string;
  source: DbSource;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The workspace database the prompt names: its file name (`clinic.sqlite`) first, then its name without extension
 * as a whole word (`clinic`). Only an unambiguous match counts: two databases both named `data` name neither.
 */
export function dbNamedIn(prompt: string, candidates: readonly string[]): string | undefined {
  const text = prompt.toLowerCase();
  const byFile = candidates.filter((p) =>
    new RegExp(`(^|[^\\w.])${escapeRegExp(basename(p).toLowerCase())}($|[^\\w])`).test(text),
  );
  if (byFile.length === 1) return byFile[0];
  if (byFile.length > 1) return undefined;
  const byStem = candidates.filter((p) => {
    const stem = basename(p, extname(p)).toLowerCase();
    return stem.length >= 2 && new RegExp(`(^|[^\\w])${escapeRegExp(stem)}($|[^\\w])`).test(text);
  });
  return byStem.length === 1 ? byStem[0] : undefined;
}

/**
 * Picks the database: referenced SQLite files (already checked by the caller), then the prompt, then the last used,
 * then the workspace's only one.
 */
export function resolveDatabase(opts: {
  referenced: readonly string[];
  prompt: string;
  candidates: readonly string[];
  last?: string;
}): ResolvedDb | undefined {
  if (opts.referenced.length > 0) return { path: opts.referenced[0], source: 'reference' };
  const named = dbNamedIn(opts.prompt, opts.candidates);
  if (named) return { path: named, source: 'prompt' };
  if (opts.last && opts.candidates.includes(opts.last)) return { path: opts.last, source: 'last' };
  if (opts.candidates.length === 1) return { path: opts.candidates[0], source: 'only' };
  return undefined;
}

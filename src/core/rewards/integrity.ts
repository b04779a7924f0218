// Where a reward can lie, over a run or a dataset: empty gold results that make `[] == []` a free win, gold queries
// that fail (every prediction then scores 0 through no fault of its own), format failures by kind, wins that look
// bought (SELECT *, a result that holds the gold's rows or columns and more), groups that give GRPO no signal, and —
// scored over a test suite — the wins on the item's own database that the suite takes back.
import { rowKey } from '../eval/pyValues';
import type { Cell } from '../db/types';
import { isZeroVariance } from './group';
import type { ExecOutcome } from './types';

export interface IntegrityItem {
  /** Trajectory id (or any label naming the item). */
  id: string;
  /** Samples sharing a question share a groupId. */
  groupId?: string;
  goldSql: string;
  predSql: string | null;
  verdict: ExecOutcome;
  /** The panel total. */
  reward: number;
  /** Format check outcome, when the item has one: ok, or the failure kind. */
  format?: { ok: boolean; kind?: string };
}

export interface IntegrityReport {
  items: number;
  emptyGoldWins: { positives: number; count: number; share: number | null; items: string[] };
  goldFailures: Array<{ gold: string; reason: 'gold-error' | 'gold-timeout'; detail: string; items: string[] }>;
  formatFailures: { count: number; byKind: Record<string, string[]> };
  suspiciousWins: Array<{ id: string; why: string[] }>;
  zeroVarianceGroups: Array<{ groupId: string; size: number; reward: number; items: string[] }>;
  /**
   * Present when verdicts were checked over a test suite: of the items execution-correct on their own database
   * (`singlePositives`), those the suite takes back (`items`, with the variant that disagreed in `takenBack`).
   */
  testSuite?: {
    checked: number;
    singlePositives: number;
    count: number;
    items: string[];
    takenBack: Array<{ id: string; variant: string; reason: string }>;
  };
}

/** A `*` projection at the top of some select list (`SELECT *`, `SELECT T1.*`, `SELECT a, *`), not `count(*)`. */
export function selectsStar(sql: string): boolean {
  const text = sql.replace(/'(?:[^']|'')*'/g, "''").replace(/--[^\n]*/g, ' ');
  return /(?:\bSELECT\s+(?:DISTINCT\s+|ALL\s+)?|,\s*)(?:(?:[A-Za-z_]\w*|"[^"]*"|`[^`]*`|\[[^\]]*\])\s*\.\s*)?\*/i.test(
    text,
  );
}

function columnKey(rows: Cell[][], i: number): string {
  return rows.map((r) => rowKey([r[i]])).join('\u0001');
}

/**
 * Why a winning prediction's result looks like more than the gold: every gold row present plus more rows (set
 * comparisons ignore duplicates), or every gold column present (same values, row by row) plus more columns.
 */
function supersetReasons(v: ExecOutcome): string[] {
  const why: string[] = [];
  const g = v.gold,
    p = v.pred;
  if (!g?.ok || !p?.ok || g.rows.length === 0) return why;
  if (p.rows.length > g.rows.length) {
    const predKeys = new Set(p.rows.map((r) => rowKey(r)));
    if (g.rows.every((r) => predKeys.has(rowKey(r))))
      why.push(`returns all ${g.rows.length} gold rows and ${p.rows.length - g.rows.length} more`);
  }
  const gw = g.rows[0].length,
    pw = p.rows[0]?.length ?? 0;
  if (pw > gw && p.rows.length === g.rows.length) {
    const predCols = new Set(Array.from({ length: pw }, (_, i) => columnKey(p.rows, i)));
    if (Array.from({ length: gw }, (_, i) => columnKey(g.rows, i)).every((k) => predCols.has(k))) {
      why.push(`returns the gold's ${gw} column(s) and ${pw - gw} more`);
    }
  }
  return why;
}

export function checkIntegrity(items: readonly IntegrityItem[], opts: { tolerance?: number } = {}): IntegrityReport {
  const positives = items.filter((it) => it.verdict.correct);
  const emptyWins = positives.filter((it) => it.verdict.goldEmpty).map((it) => it.id);

  const goldFail = new Map<string, IntegrityReport['goldFailures'][number]>();
  for (const it of items) {
    const r = it.verdict.reason;
    if (r !== 'gold-error' && r !== 'gold-timeout') continue;
    const key = r + '\0' + it.goldSql;
    let entry = goldFail.get(key);
    if (!entry) {
      entry = { gold: it.goldSql, reason: r, detail: it.verdict.detail ?? '', items: [] };
      goldFail.set(key, entry);
    }
    entry.items.push(it.id);
  }

  const byKind: Record<string, string[]> = {};
  let formatCount = 0;
  for (const it of items) {
    if (!it.format || it.format.ok) continue;
    formatCount++;
    (byKind[it.format.kind ?? 'unknown'] ??= []).push(it.id);
  }

  const suspicious: IntegrityReport['suspiciousWins'] = [];
  for (const it of positives) {
    const why = supersetReasons(it.verdict);
    if (it.predSql && selectsStar(it.predSql)) why.unshift('uses SELECT *');
    if (why.length) suspicious.push({ id: it.id, why });
  }

  const groups = new Map<string, IntegrityItem[]>();
  for (const it of items) {
    if (it.groupId === undefined) continue;
    const g = groups.get(it.groupId) ?? [];
    g.push(it);
    groups.set(it.groupId, g);
  }
  const zero: IntegrityReport['zeroVarianceGroups'] = [];
  for (const [groupId, g] of groups) {
    if (g.length < 2) continue;
    if (
      isZeroVariance(
        g.map((x) => x.reward),
        opts.tolerance,
      )
    )
      zero.push({ groupId, size: g.length, reward: g[0].reward, items: g.map((x) => x.id) });
  }

  const checked = items.filter((it) => it.verdict.suite);
  const takenBack = checked.filter((it) => it.verdict.suite!.singleCorrect && !it.verdict.correct);
  return {
    items: items.length,
    ...(checked.length
      ? {
          testSuite: {
            checked: checked.length,
            singlePositives: checked.filter((it) => it.verdict.suite!.singleCorrect).length,
            count: takenBack.length,
            items: takenBack.map((it) => it.id),
            takenBack: takenBack.map((it) => ({
              id: it.id,
              variant: it.verdict.suite!.disagreed ?? '',
              reason: it.verdict.reason,
            })),
          },
        }
      : {}),
    emptyGoldWins: {
      positives: positives.length,
      count: emptyWins.length,
      share: positives.length ? emptyWins.length / positives.length : null,
      items: emptyWins,
    },
    goldFailures: [...goldFail.values()],
    formatFailures: { count: formatCount, byKind },
    suspiciousWins: suspicious,
    zeroVarianceGroups: zero,
  };
}

/** The ids in first-seen order, each once (a group's samples, or repeated records, can share an id). */
function unique(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

function names(all: readonly string[], max = 8): string {
  const ids = unique(all);
  return ids.length <= max ? ids.join(', ') : `${ids.slice(0, max).join(', ')} … (+${ids.length - max})`;
}

/** One raised flag: its kind, one line naming its items, and the item ids (diagnostics links them). */
export interface IntegrityFlag {
  kind:
    | 'empty-gold-wins'
    | 'gold-failure'
    | 'format-failure'
    | 'suspicious-win'
    | 'zero-variance-group'
    | 'test-suite-takeback';
  text: string;
  items: string[];
}

/** The raised flags with the items behind each; empty when nothing is suspicious. */
export function integrityFlagItems(r: IntegrityReport): IntegrityFlag[] {
  const flags: IntegrityFlag[] = [];
  const e = r.emptyGoldWins;
  if (e.count > 0) {
    flags.push({
      kind: 'empty-gold-wins',
      items: unique(e.items),
      text:
        `empty-gold wins: ${e.count} of ${e.positives} positive execution verdicts ` +
        `(${(100 * (e.share ?? 0)).toFixed(1)}%) have an empty gold result, ` +
        `so an empty prediction scores for free: ${names(e.items)}`,
    });
  }
  for (const g of r.goldFailures) {
    flags.push({
      kind: 'gold-failure',
      items: unique(g.items),
      text:
        `gold ${g.reason === 'gold-timeout' ? 'timed out' : 'failed'} (${g.detail.slice(0, 60) || 'no detail'}) ` +
        `for ${g.items.length} item(s), every prediction scored 0: ${names(g.items)} ` +
        `— gold: ${g.gold.replace(/\s+/g, ' ').slice(0, 80)}`,
    });
  }
  for (const [kind, ids] of Object.entries(r.formatFailures.byKind).sort((a, b) => b[1].length - a[1].length)) {
    flags.push({
      kind: 'format-failure',
      items: unique(ids),
      text: `format failure ${kind}: ${ids.length} item(s): ${names(ids)}`,
    });
  }
  for (const s of r.suspiciousWins)
    flags.push({ kind: 'suspicious-win', items: [s.id], text: `suspicious win ${s.id}: ${s.why.join('; ')}` });
  const ts = r.testSuite;
  if (ts && ts.count > 0) {
    const shown = ts.takenBack.slice(0, 8).map((t) => `${t.id} (${t.variant})`);
    flags.push({
      kind: 'test-suite-takeback',
      items: unique(ts.items),
      text:
        `test suite takes back ${ts.count} of ${ts.singlePositives} rewards of 1 on the single database ` +
        `(execution-correct there, wrong on a variant): ${shown.join(', ')}` +
        `${ts.takenBack.length > 8 ? ` … (+${ts.takenBack.length - 8})` : ''}`,
    });
  }
  for (const z of r.zeroVarianceGroups) {
    flags.push({
      kind: 'zero-variance-group',
      items: unique(z.items),
      text:
        `zero-variance group ${z.groupId}: all ${z.size} samples scored ${z.reward} ` +
        `(no GRPO signal): ${names(z.items)}`,
    });
  }
  return flags;
}

/** One line per raised flag, each naming its items; empty when nothing is suspicious. */
export function integrityFlags(r: IntegrityReport): string[] {
  return integrityFlagItems(r).map((f) => f.text);
}

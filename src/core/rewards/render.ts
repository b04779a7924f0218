// Plain-text renderings of scored panels for the CLI and logs.
import type { PanelResult, Term } from './types';

/** Up to 4 decimals, no trailing zeros: 0.5, 0.3333, −0.1, 11. */
export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const r = Math.round(x * 1e4) / 1e4;
  return Object.is(r, -0) ? '0' : String(r);
}

/** The JSON the CLI prints: exactly {panel, total, terms: [{name, value, weight, contribution, explanation}]}. */
export function panelJson(r: PanelResult): PanelResult {
  return {
    panel: r.panel,
    total: r.total,
    terms: r.terms.map((t: Term) => ({
      name: t.name,
      value: t.value,
      weight: t.weight,
      contribution: t.contribution,
      explanation: t.explanation,
    })),
  };
}

export function panelTable(r: PanelResult, source = ''): string {
  const rows = r.terms.map((t) => [t.name, fmt(t.value), fmt(t.weight), fmt(t.contribution), t.explanation]);
  const head = ['term', 'value', 'weight', 'contribution', 'explanation'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ');
  return [`panel ${r.panel}${source ? ` (${source})` : ''}: total ${fmt(r.total)}`, line(head), ...rows.map(line)].join(
    '\n',
  );
}

// The corrected SQL's run under the form: the match verdict (labelText.ts words it), then the whole result a page at
// a time in a paged grid the host pages, sorts and filters in SQLite; or the run's error.
import { h } from '../shared/components';
import { pagedGrid, type PagedGrid } from '../shared/pagedGrid';
import type { GridToApp } from '../../src/protocol/grid';
import type { RunOutcome } from '../../src/protocol/labeling';
import type { LabelContext } from './context';
import { runVerdict } from './labelText';

export interface RunResult {
  /** Run `seq`'s outcome (with its grid), or an error, or nothing (null and null: cleared). */
  show(o: RunOutcome | null, error?: string | null, seq?: number | null): void;
  /** A run was sent: "Running…" until its answer. */
  running(): void;
  /** A page (or page error, export progress) for the grid of run `seq` of trajectory `id`, when that is shown. */
  receive(seq: number, id: string, message: GridToApp): void;
}

export function createRunResult(ctx: LabelContext): RunResult {
  const { runOut } = ctx.form;
  /** The paged grid of the newest run's result: the host pages the whole result in SQLite for it. */
  let runGrid: { seq: number; id: string; grid: PagedGrid } | null = null;
  return {
    show(o, error = null, seq = null) {
      runGrid = null;
      if (error !== null) {
        runOut.replaceChildren(h('div', { class: 'q-error' }, error));
        return;
      }
      if (!o) {
        runOut.replaceChildren();
        return;
      }
      const v = runVerdict(o);
      const parts: Node[] = [h('div', { class: `q-${v.kind}`, id: v.match ? 'l-match' : undefined }, v.text)];
      const record = ctx.session.record;
      if (o.error) parts.push(h('div', { class: 'q-error' }, o.error));
      else if (seq !== null && record) {
        const id = record.id;
        const grid = pagedGrid((message) => ctx.host.post({ type: 'grid', seq, id, message }), { id: 'l-grid' });
        runGrid = { seq, id, grid };
        parts.push(grid.element);
        grid.reload();
      }
      runOut.replaceChildren(...parts);
    },
    running() {
      runGrid = null;
      runOut.replaceChildren(h('div', { class: 'q-muted' }, 'Running…'));
    },
    receive(seq, id, message) {
      if (runGrid && runGrid.seq === seq && runGrid.id === id && ctx.session.record?.id === id)
        runGrid.grid.receive(message);
    },
  };
}

// The run view's trajectory list without the DOM: which items the filter keeps and in what order (lowest reward
// first: the items worth a look), which rows of the virtualised window exist, and where the arrow keys move.
import type { RunItem } from '../../src/core/rewards/report';

/** Every row has this height, so a row's place is its index times it. */
export const ROW_PX = 24;
/** Rows drawn above and below the visible ones, so a fast scroll does not show blank space. */
const OVERSCAN = 5;
/** The list grows with its rows up to this many, then scrolls. */
const MAX_VISIBLE_ROWS = 15;

/** Whether an item's id, group, question, hardness, verdict, reason or ODT tags hold `q` (already lower-cased). */
function matches(it: RunItem, q: string): boolean {
  if (q === '') return true;
  const tags = (it.odtTags ?? []).join(' ');
  const verdict = it.correct ? 'correct' : 'incorrect';
  return `${it.id} ${it.groupId} ${it.question} ${it.hardness ?? ''} ${verdict} ${it.reason} ${tags}`
    .toLowerCase()
    .includes(q);
}

/** The items the filter text keeps, lowest reward first (ties by id). */
export function shownItems(items: readonly RunItem[], filter: string): RunItem[] {
  const q = filter.trim().toLowerCase();
  return items.filter((it) => matches(it, q)).sort((a, b) => a.total - b.total || a.id.localeCompare(b.id));
}

/** The list box's height for `rows` rows: at least one row, at most MAX_VISIBLE_ROWS, plus its border. */
export function listHeight(rows: number): number {
  return Math.min(MAX_VISIBLE_ROWS, Math.max(1, rows)) * ROW_PX + 2;
}

/** The rows [first, last) that exist in the DOM for this scroll position. */
export function rowWindow(scrollTop: number, clientHeight: number, rows: number): { first: number; last: number } {
  return {
    first: Math.max(0, Math.floor(scrollTop / ROW_PX) - OVERSCAN),
    last: Math.min(rows, Math.ceil((scrollTop + clientHeight) / ROW_PX) + OVERSCAN),
  };
}

/** The scroll position that brings row `active` into view, moving as little as needed. */
export function scrollToRow(active: number, scrollTop: number, clientHeight: number): number {
  const top = active * ROW_PX;
  if (top < scrollTop) return top;
  if (top + ROW_PX > scrollTop + clientHeight) return top + ROW_PX - clientHeight;
  return scrollTop;
}

/**
 * Where a key moves the active row of a list of `rows` rows showing `clientHeight` pixels (clamped to the list), or
 * null for a key the list does not move on.
 */
export function moveKey(key: string, active: number, rows: number, clientHeight: number): number | null {
  const page = Math.max(1, Math.floor(clientHeight / ROW_PX) - 1);
  const to: Record<string, number> = {
    ArrowDown: active + 1,
    ArrowUp: active - 1,
    PageDown: active + page,
    PageUp: active - page,
    Home: 0,
    End: rows - 1,
  };
  if (!(key in to)) return null;
  return Math.max(0, Math.min(rows - 1, to[key]));
}

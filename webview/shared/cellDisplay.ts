// How a result cell reads in a grid: numbers right-aligned, a REAL keeps its type (14.0, not 14), SQL NULL shown as
// <null> so it never looks like the text 'NULL', long or multi-line text clipped to one readable line (so one long
// column never pushes the others off-screen, and no row grows taller) until the user expands it. Pure (no DOM), so
// unit tests check it and every grid shares it.
import type { WireCell } from '../../src/core/db/resultExport';

/** Characters a cell shows before it is clipped (click or Enter expands it); the grid CSS caps cells at this width. */
export const CLIPPED_CELL_CHARS = 40;

interface CellDisplay {
  text: string;
  kind: 'null' | 'number' | 'text';
  /** The cell is longer than CLIPPED_CELL_CHARS or spans lines: shown clipped to one line, expandable. */
  long: boolean;
}

const BIG_INT = /^-?\d{16,}$/;

/** `real`: the column holds REAL values, so an integral number is printed with its ".0". */
export function cellDisplay(v: WireCell, real = false): CellDisplay {
  if (v === null) return { text: '<null>', kind: 'null', long: false };
  if (typeof v === 'number') {
    const text = real && Number.isInteger(v) && Math.abs(v) < 1e21 ? `${v}.0` : String(v);
    return { text, kind: 'number', long: false };
  }
  if (BIG_INT.test(v)) return { text: v, kind: 'number', long: false };
  return { text: v, kind: 'text', long: v.length > CLIPPED_CELL_CHARS || /[\r\n]/.test(v) };
}

/** The text a clipped cell shows: one line (line breaks read as ⏎), at most CLIPPED_CELL_CHARS and an ellipsis. */
export function clippedText(text: string): string {
  const line = text.replace(/\r?\n/g, ' ⏎ ');
  return line.length > CLIPPED_CELL_CHARS || line !== text ? `${line.slice(0, CLIPPED_CELL_CHARS)}…` : text;
}

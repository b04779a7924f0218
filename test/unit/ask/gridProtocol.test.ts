// The paged grid's messages as the host checks them (sane offsets, limits, filters, export formats) and how a cell
// reads in the grid: REAL keeps its type, SQL NULL never looks like the text 'NULL', numbers are marked for
// right-alignment, long text is clipped until expanded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkMessage } from '../../../src/protocol/validate';
import { GRID_RULES, gridMessageProblem, type GridToHost } from '../../../src/protocol/grid';
import { PREVIEW_RULES, previewMessageProblem, type ToHost } from '../../../src/protocol/preview';
import { CLIPPED_CELL_CHARS, cellDisplay, clippedText } from '../../../webview/shared/cellDisplay';

function problem(raw: unknown): string | null {
  const c = checkMessage<GridToHost>(raw, GRID_RULES);
  return c.ok ? gridMessageProblem(c.message) : c.error;
}

test('page requests are checked before anything runs', () => {
  assert.equal(problem({ type: 'page', offset: 200, limit: 200, filters: [] }), null);
  assert.equal(problem({ type: 'page', offset: 0, limit: 50, sortColumn: 2, descending: true, filters: [] }), null);
  assert.match(problem({ type: 'page', offset: -1, limit: 200, filters: [] }) ?? '', /offset/);
  assert.match(problem({ type: 'page', offset: 0.5, limit: 200, filters: [] }) ?? '', /offset/);
  assert.match(problem({ type: 'page', offset: 0, limit: 100_000, filters: [] }) ?? '', /limit/);
  assert.match(problem({ type: 'page', offset: 0, limit: 10, filters: [{ column: 'a', text: 'x' }] }) ?? '', /filter/);
  assert.match(problem({ type: 'page', offset: 0, limit: 10, filters: [null] }) ?? '', /filter/);
  assert.match(problem({ type: 'page', offset: 0, limit: 10 }) ?? '', /missing filters/);
  assert.equal(problem({ type: 'export', format: 'markdown' }), null);
  assert.match(problem({ type: 'export', format: 'xlsx' }) ?? '', /unknown format/);
  assert.equal(problem({ type: 'cancelExport' }), null);
});

test('the preview accepts the grid messages and its own', () => {
  const p = (raw: unknown) => {
    const c = checkMessage<ToHost>(raw, PREVIEW_RULES);
    return c.ok ? previewMessageProblem(c.message) : c.error;
  };
  assert.equal(p({ type: 'ready' }), null);
  assert.equal(p({ type: 'page', offset: 0, limit: 200, filters: [] }), null);
  assert.match(p({ type: 'page', offset: 0, limit: 0, filters: [] }) ?? '', /limit/);
  assert.match(p({ type: 'run' }) ?? '', /unknown message type/);
});

test('cells: REAL keeps .0, NULL is not the text NULL, numbers right-aligned, long text clipped', () => {
  assert.deepEqual(cellDisplay(14, true), { text: '14.0', kind: 'number', long: false });
  assert.deepEqual(cellDisplay(14, false), { text: '14', kind: 'number', long: false });
  assert.equal(cellDisplay(2.5, true).text, '2.5');
  assert.equal(cellDisplay(null).kind, 'null');
  assert.notEqual(cellDisplay(null).text, cellDisplay('NULL').text);
  assert.equal(cellDisplay('NULL').kind, 'text');
  assert.equal(cellDisplay('9007199254740993').kind, 'number');
  const long = 'x'.repeat(CLIPPED_CELL_CHARS + 5);
  assert.equal(cellDisplay(long).long, true);
  assert.equal(clippedText(long).length, CLIPPED_CELL_CHARS + 1);
  assert.equal(cellDisplay('short').long, false);
});

test('cells: a long or multi-line value is clipped to one readable line (about 40 characters), whole on expand', () => {
  const note = 'The rider reported a flat tyre near the station and waited twenty minutes for help.';
  assert.equal(cellDisplay(note).long, true, 'an 84-character note is clipped');
  assert.equal(clippedText(note), `${note.slice(0, 40)}…`);
  assert.equal(cellDisplay(note).text, note, 'the whole value is kept for expanding');
  const lines = cellDisplay('first line\nsecond');
  assert.equal(lines.long, true, 'a multi-line value would make its row taller');
  assert.equal(clippedText(lines.text), 'first line ⏎ second…');
  assert.equal(cellDisplay('x'.repeat(40)).long, false);
});

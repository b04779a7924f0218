// The JSON record of one executed statement, as `quarry exec-batch` writes it per line and the environment service's
// /v1/execute returns it: the result with JSON-safe cells and the observation the agent would see.
import type { Cell, ExecResult } from './types';
import { renderObservation, type ObservationFormat } from './observation';

/** bigint → number when exact, else a string; blobs → a placeholder naming their size. */
function jsonCell(v: Cell): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return `<blob ${v.length} bytes>`;
  return v;
}

interface ExecRecord {
  id: unknown;
  ok: boolean;
  errorClass: string | null;
  error: string | null;
  columns: string[];
  rows: unknown[][];
  rowCount: number;
  truncated: boolean;
  observation: string;
  ms: number;
}

export function execRecord(id: unknown, r: ExecResult, format: ObservationFormat): ExecRecord {
  return {
    id,
    ok: r.ok,
    errorClass: r.errorClass,
    error: r.error,
    columns: r.columns,
    rows: r.rows.map((row) => row.map(jsonCell)),
    rowCount: r.rowCount,
    truncated: r.truncated,
    observation: renderObservation(r, { format }),
    ms: Math.round(r.ms * 1000) / 1000,
  };
}

// Parsing and mapping shared by `quarry exec` and `quarry exec-batch`.
import type { ExecResult } from './types';
import { OBSERVATION_FORMATS, type ObservationFormat } from './observation';

/** Reads a positive integer option, or throws a message for a UsageError. */
export function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got '${value}'`);
  return n;
}

export function observationFormat(value: string | undefined): ObservationFormat {
  if (value === undefined) return 'df';
  if (!(OBSERVATION_FORMATS as readonly string[]).includes(value)) {
    throw new Error(`--format must be one of ${OBSERVATION_FORMATS.join(', ')}, got '${value}'`);
  }
  return value as ObservationFormat;
}

/** Exit codes of `quarry exec`: 0 ok, 1 SQL error (and `resource`), 2 not a database, 3 rejected, 4 timed out. */
export function exitCodeOf(r: Pick<ExecResult, 'ok' | 'errorClass' | 'openErrorKind'>): number {
  if (r.ok) return 0;
  if (r.openErrorKind) return 2;
  if (r.errorClass === 'rejected') return 3;
  if (r.errorClass === 'timeout') return 4;
  return 1;
}

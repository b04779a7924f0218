// One error type for every way a trajectory file or record can be wrong, naming the file, line and field.
import type { TrajectoryProblem } from './validate';

export class TrajectoryFormatError extends Error {
  constructor(
    readonly file: string | null,
    /** 1-based line of the file (null for a record checked on its own, e.g. before writing). */
    readonly line: number | null,
    /** Path of the offending field (`turns[2].exec.rowCount`); null when the line is not JSON at all. */
    readonly field: string | null,
    readonly detail: string,
  ) {
    super(describe(file, line, field, detail));
    this.name = 'TrajectoryFormatError';
  }

  static fromProblem(problem: TrajectoryProblem, file: string | null, line: number | null): TrajectoryFormatError {
    return new TrajectoryFormatError(file, line, problem.field, problem.message);
  }
}

function describe(file: string | null, line: number | null, field: string | null, detail: string): string {
  const where = [file, line === null ? null : `line ${line}`].filter(Boolean).join(', ');
  const what = field === null ? detail : `${field === '' ? 'the record' : `field ${field}`}: ${detail}`;
  return where ? `${where}: ${what}` : what;
}

// The shape every `quarry` sub-command has, so main.ts can list, document and dispatch them uniformly.
export interface CliIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Resolves relative paths given on the command line. */
  cwd: string;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  /** Resolves to the process exit code. */
  run(argv: string[], io: CliIO): Promise<number>;
}

/** Thrown for bad command-line input; main.ts prints it with the usage and exits 2. */
export class UsageError extends Error {}

export const EXIT = { ok: 0, sqlError: 1, badInput: 2, rejected: 3, timeout: 4 } as const;

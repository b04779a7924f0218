// Bad input to `quarry data` (a file that is missing or not what it should be, a run over another dataset, an output
// directory that holds someone else's files), said for a person; the CLI prints it and exits 2.
export class DataInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataInputError';
  }
}

// A writable stream that keeps what is written to it: the CLI tests hand it to `main` as stdout or stderr and read
// the text back.
import { Writable } from 'node:stream';

export function capture(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, cb) {
      text += String(chunk);
      cb();
    },
  });
  return { stream, text: () => text };
}

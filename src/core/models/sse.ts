// Server-sent events, as OpenAI-compatible servers stream chat completions: `data: <json>` events separated by
// blank lines, ending with `data: [DONE]`. Only the data field matters here; ids, event names and comments are read
// past, as the SSE standard says a client should.

/** Yields each event's data (multi-line data joined by '\n'), in order, until the body ends. */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let data: string[] = [];
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // A lone '\r' at the very end may be the first half of '\r\n'; wait for more input unless this is the end.
      for (;;) {
        const m = /\r\n|\n|\r/.exec(buffer);
        if (!m || (m[0] === '\r' && m.index === buffer.length - 1 && !done)) break;
        const line = buffer.slice(0, m.index);
        buffer = buffer.slice(m.index + m[0].length);
        if (line === '') {
          if (data.length > 0) yield data.join('\n');
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        if (field !== 'data') continue;
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        data.push(value);
      }
      if (done) {
        finished = true;
        break;
      }
    }
    // Some servers close without the final blank line; what they sent still counts.
    if (buffer !== '' && buffer.startsWith('data:')) data.push(buffer.slice(5).replace(/^ /, ''));
    if (data.length > 0) yield data.join('\n');
  } finally {
    // Stopping early (a client-side stop string, an error) must release the connection, not leave it streaming.
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

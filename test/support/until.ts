// The one polling wait of the tests: ask a predicate again and again until it gives a value, or fail after a time limit
// with a message that names what was awaited (instead of a bare test timeout).

export type Maybe<T> = T | undefined | null | false;

/**
 * Resolves with the first truthy value `f` returns (or resolves to), asking every `everyMs`; rejects with
 * "timed out waiting for <what>" once `ms` has passed. QUARRY_TEST_DEBUG=1 logs each wait.
 */
export async function until<T>(
  what: string,
  f: () => Maybe<T> | Promise<Maybe<T>>,
  ms = 120_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() >= deadline) throw new Error(`timed out waiting for ${what} (${ms} ms)`);
    if (process.env.QUARRY_TEST_DEBUG) console.log(`waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

// The seeded randomness of a test-suite build: one generator per (seed, database, purpose), so a build's outputs
// depend on the seed only — not on how many databases run at once or in which order they finish.
import { seededRandom } from '../../models/onnx/sampler';

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** An integer in [lo, hi] (both included). */
  int(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy. */
  shuffle<T>(items: readonly T[]): T[];
}

/** FNV-1a over the parts, mixed with the seed: the seed of one generator. */
export function streamSeed(seed: number, ...parts: (string | number)[]): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (const ch of parts.join('\u0000')) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export function createRng(seed: number, ...parts: (string | number)[]): Rng {
  const next = seededRandom(streamSeed(seed, ...parts));
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  return {
    next,
    int,
    pick: (items) => items[int(0, items.length - 1)],
    shuffle(items) {
      const out = items.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i);
        [out[i], out[j]] = [out[j], out[i]];
      }
      return out;
    },
  };
}

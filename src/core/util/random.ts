// Quarry's seeded randomness, one module: the generators (each a fixed algorithm, identical on every platform, so a
// seed repeats its outputs: test-suite databases, sampled text, data rounds, property tests, bench workloads) and the
// draws made from them (a float, an integer in a range, a pick, a shuffle). Changing any generator changes stored
// results: test/unit/util/random.test.ts pins each one to values the earlier copies produced.

/** A generator: uniform floats in [0, 1). */
export type Random = () => number;

/** mulberry32 over the seed's low 32 bits (seed 0 is a seed like any other). */
export function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * mulberry32 as sampling and test-suite builds seed it: the seed floored, and 0 replaced by the golden-ratio constant
 * (so seed 0 and seed 0x9e3779b9 give the same stream).
 */
export function seededRandom(seed: number): Random {
  return mulberry32(Math.floor(seed) >>> 0 || 0x9e3779b9);
}

/** The 32-bit linear congruential generator of Numerical Recipes (a = 1664525, c = 1013904223). */
export function lcg32(seed: number): Random {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * The C library's rand() constants (1103515245, 12345, modulo 2^31) computed in doubles, where the product passes
 * 2^53 and rounds: not the integer LCG, but the sequence the soak bench has always drawn its workload from.
 */
export function floatLcg31(seed: number): Random {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

/** FNV-1a over the parts, mixed with the seed: the seed of one independent stream. */
export function streamSeed(seed: number, ...parts: (string | number)[]): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (const ch of parts.join('\u0000')) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Draws from a generator. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** An integer in [lo, hi] (both included). */
  int(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy (Fisher–Yates, from the end). */
  shuffle<T>(items: readonly T[]): T[];
}

export function rngOf(next: Random): Rng {
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

/**
 * One stream per (seed, parts…), as a test-suite build draws them: a build's outputs then depend on the seed only, not
 * on how many databases run at once or in which order they finish.
 */
export function createRng(seed: number, ...parts: (string | number)[]): Rng {
  return rngOf(seededRandom(streamSeed(seed, ...parts)));
}

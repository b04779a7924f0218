// Picks the next token from a row of logits: argmax when temperature is 0, otherwise temperature-scaled softmax
// restricted to the smallest set of tokens whose probability reaches top_p (nucleus sampling), drawn with a seeded
// generator so the same seed gives the same text.

export function argmax(logits: Float32Array, offset = 0, length = logits.length - offset): number {
  let best = 0;
  let bestValue = -Infinity;
  for (let i = 0; i < length; i++) {
    const v = logits[offset + i];
    if (v > bestValue) {
      bestValue = v;
      best = i;
    }
  }
  return best;
}

interface SamplerOptions {
  temperature: number;
  topP: number;
  random: () => number;
}

/** Index of the chosen token within logits[offset, offset + length). */
export function sampleToken(logits: Float32Array, offset: number, length: number, opts: SamplerOptions): number {
  if (!(opts.temperature > 0)) return argmax(logits, offset, length);
  let max = -Infinity;
  for (let i = 0; i < length; i++) max = Math.max(max, logits[offset + i]);
  const probs = new Float64Array(length);
  let sum = 0;
  for (let i = 0; i < length; i++) {
    const p = Math.exp((logits[offset + i] - max) / opts.temperature);
    probs[i] = p;
    sum += p;
  }
  const order = Array.from({ length }, (_, i) => i).sort((a, b) => probs[b] - probs[a] || a - b);
  const topP = opts.topP > 0 && opts.topP < 1 ? opts.topP : 1;
  let kept = 0;
  let mass = 0;
  while (kept < length && (kept === 0 || mass / sum < topP)) mass += probs[order[kept++]];
  let r = opts.random() * mass;
  for (let k = 0; k < kept; k++) {
    r -= probs[order[k]];
    if (r <= 0) return order[k];
  }
  return order[kept - 1];
}

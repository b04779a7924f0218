// Masking secrets in text bound for the log or a notification. Pure, so it is unit-tested without VS Code.

const MASK = '***';

/** Authorization headers and bearer tokens, and strings shaped like common API keys (sk-…, hf_…, ghp_…). */
const PATTERNS: RegExp[] = [
  /(authorization["']?\s*[:=]\s*["']?)(?:bearer\s+)?[^\s,'"}]+/gi,
  /\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b()(?:sk|hf|ghp|gho|xox[abp])[-_][A-Za-z0-9_-]{12,}/g,
];

/** Replaces every known secret and every key-shaped string in `text` with ***. */
export function redact(text: string, secrets: Iterable<string> = []): string {
  let out = text;
  // Longest first, so a secret that contains another is masked whole.
  for (const s of [...secrets].filter((x) => x.length > 0).sort((a, b) => b.length - a.length)) {
    out = out.split(s).join(MASK);
  }
  for (const p of PATTERNS) out = out.replace(p, (_m, keep: string) => `${keep}${MASK}`);
  return out;
}

// The official tokenizer: string values masked, NLTK's word tokenizer, lowercase, values restored, then
// "!", ">", "<" merged with a following "=".
import { SpiderParseError } from './pyErrors';

type Rule = [RegExp, string];

// NLTK's NLTKWordTokenizer (what word_tokenize runs on each sentence), in its order. Quote rules are kept although
// masked SQL has no quotes left, because backticks and typographic quotes can still occur.
const STARTING_QUOTES: Rule[] = [
  [/([«“‘„]|[`]+)/g, ' $1 '],
  [/^"/g, '``'],
  [/(``)/g, ' $1 '],
  [/([ ([{<])("|'{2})/g, '$1 `` '],
  [/(')(?!re|ve|ll|m|t|s|d|n)(\w)\b/gi, '$1 $2'],
];
const PUNCTUATION: Rule[] = [
  [/([^.])(\.)([\])}>"'»”’ ]*)\s*$/g, '$1 $2 $3 '],
  [/([:,])([^\d])/g, ' $1 $2'],
  [/([:,])$/g, ' $1 '],
  [/\.{2,}/g, ' $& '],
  [/[;@#$%&]/g, ' $& '],
  [/([^.])(\.)([\])}>"']*)\s*$/g, '$1 $2$3 '],
  [/[?!]/g, ' $& '],
  [/([^'])' /g, "$1 ' "],
  [/[*]/g, ' $& '],
];
const PARENS_BRACKETS: Rule = [/[\][(){}<>]/g, ' $& '];
const DOUBLE_DASHES: Rule = [/--/g, ' -- '];
const ENDING_QUOTES: Rule[] = [
  [/([»”’])/g, ' $1 '],
  [/''/g, " '' "],
  [/"/g, " '' "],
  [/([^' ])('[sS]|'[mM]|'[dD]|') /g, '$1 $2 '],
  [/([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) /g, '$1 $2 '],
];
const CONTRACTIONS: RegExp[] = [
  /\b(can)(not)\b/gi,
  /\b(d)('ye)\b/gi,
  /\b(gim)(me)\b/gi,
  /\b(gon)(na)\b/gi,
  /\b(got)(ta)\b/gi,
  /\b(lem)(me)\b/gi,
  /\b(more)('n)\b/gi,
  /\b(wan)(na)(?=\s)/gi,
  / ('t)(is)\b/gi,
  / ('t)(was)\b/gi,
];

/** NLTK's word tokenizer on one sentence (word_tokenize without its Punkt sentence split). */
export function nltkWordTokenize(input: string): string[] {
  let text = input;
  for (const [re, sub] of STARTING_QUOTES) text = text.replace(re, sub);
  for (const [re, sub] of PUNCTUATION) text = text.replace(re, sub);
  text = text.replace(PARENS_BRACKETS[0], PARENS_BRACKETS[1]);
  text = text.replace(DOUBLE_DASHES[0], DOUBLE_DASHES[1]);
  text = ' ' + text + ' ';
  for (const [re, sub] of ENDING_QUOTES) text = text.replace(re, sub);
  for (const re of CONTRACTIONS) text = text.replace(re, ' $1 $2 ');
  return text.split(/\s+/).filter((t) => t.length > 0);
}

/** process_sql.tokenize: the token list the official parser reads. Raises (as an AssertionError) on unpaired quotes. */
export function spiderTokenize(sql: string): string[] {
  let s = String(sql).replace(/'/g, '"');
  const quoteIdxs: number[] = [];
  for (let i = 0; i < s.length; i++) if (s[i] === '"') quoteIdxs.push(i);
  if (quoteIdxs.length % 2 !== 0) throw new SpiderParseError('AssertionError', 'Unexpected quote');
  const vals = new Map<string, string>();
  // From the last pair backwards so that the earlier offsets stay valid.
  for (let i = quoteIdxs.length - 1; i >= 0; i -= 2) {
    const q1 = quoteIdxs[i - 1]!;
    const q2 = quoteIdxs[i]!;
    const key = `__val_${q1}_${q2}__`;
    vals.set(key, s.slice(q1, q2 + 1));
    s = s.slice(0, q1) + key + s.slice(q2 + 1);
  }
  let toks = nltkWordTokenize(s)
    .map((w) => w.toLowerCase())
    .map((t) => vals.get(t) ?? t);
  const eqIdxs: number[] = [];
  toks.forEach((t, i) => {
    if (t === '=') eqIdxs.push(i);
  });
  eqIdxs.reverse();
  for (const i of eqIdxs) {
    // Python's toks[i-1] reads the last token when i is 0, and the slices below follow Python's too.
    const pre = i === 0 ? toks[toks.length - 1]! : toks[i - 1]!;
    if (pre === '!' || pre === '>' || pre === '<') {
      toks = [...(i === 0 ? toks.slice(0, -1) : toks.slice(0, i - 1)), pre + '=', ...toks.slice(i + 1)];
    }
  }
  return toks;
}

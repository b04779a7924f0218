// Helpers for the tagged text that agent protocols exchange (`<sql>…</sql>`, `<tool_call>…</tool_call>`, …).
// Model output is untrusted and often malformed, so nothing here throws: every oddity is reported as data
// (`unclosed`, `nested`) and the protocol decides what it means.

export interface TagBlock {
  tag: string;
  /** Text between the opening and closing tag (to the end of the text when unclosed), untrimmed. */
  inner: string;
  /** Offset of `<tag>` in the text. */
  start: number;
  /** Offset just past `</tag>` (or the end of the text when unclosed). */
  end: number;
  /** Offset where `inner` starts. */
  innerStart: number;
  /** True when no closing tag followed; the block then runs to the end of the text. */
  unclosed: boolean;
  /** True when another `<tag>` of the same name opened inside this block before it closed. */
  nested: boolean;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Opening tags match case-insensitively and may carry attributes or spaces (`<sql >`, `<SQL>`). */
function openRe(tag: string): RegExp {
  return new RegExp(`<${escapeRegExp(tag)}(?:\\s[^<>]*)?>`, 'gi');
}

function closeRe(tag: string): RegExp {
  return new RegExp(`</\\s*${escapeRegExp(tag)}\\s*>`, 'gi');
}

interface Mark {
  pos: number;
  len: number;
  open: boolean;
}

function marks(text: string, tag: string): Mark[] {
  const out: Mark[] = [];
  for (const m of text.matchAll(openRe(tag))) out.push({ pos: m.index ?? 0, len: m[0].length, open: true });
  for (const m of text.matchAll(closeRe(tag))) out.push({ pos: m.index ?? 0, len: m[0].length, open: false });
  return out.sort((a, b) => a.pos - b.pos);
}

/**
 * Every top-level `<tag>…</tag>` block, in order. A block opened inside an open block is treated as nesting: the
 * outer block runs to the close that balances it and is flagged `nested` (the inner text stays part of `inner`).
 * A final block with no close runs to the end of the text and is flagged `unclosed`. Stray closing tags are ignored.
 */
export function findBlocks(text: string, tag: string): TagBlock[] {
  if (typeof text !== 'string' || text.length === 0) return [];
  const blocks: TagBlock[] = [];
  let depth = 0;
  let open: Mark | null = null;
  let nested = false;
  for (const m of marks(text, tag)) {
    if (m.open) {
      if (depth === 0) {
        open = m;
        nested = false;
      } else nested = true;
      depth++;
    } else if (depth > 0) {
      depth--;
      if (depth === 0 && open) {
        const innerStart = open.pos + open.len;
        blocks.push({
          tag,
          inner: text.slice(innerStart, m.pos),
          start: open.pos,
          end: m.pos + m.len,
          innerStart,
          unclosed: false,
          nested,
        });
        open = null;
      }
    }
  }
  if (open) {
    const innerStart = open.pos + open.len;
    blocks.push({
      tag,
      inner: text.slice(innerStart),
      start: open.pos,
      end: text.length,
      innerStart,
      unclosed: true,
      nested,
    });
  }
  return blocks;
}

/** The first block, or null. */
export function firstBlock(text: string, tag: string): TagBlock | null {
  return findBlocks(text, tag)[0] ?? null;
}

/** The last block, or null. */
export function lastBlock(text: string, tag: string): TagBlock | null {
  const all = findBlocks(text, tag);
  return all.length > 0 ? all[all.length - 1] : null;
}

/** Whether the text holds an opening `<tag>` anywhere. */
export function hasOpenTag(text: string, tag: string): boolean {
  return openRe(tag).test(text);
}

/** Counts of opening and closing tags, for diagnostics ("3 <sql> but 2 </sql>"). */
export function countTags(text: string, tag: string): { open: number; close: number } {
  let open = 0;
  let close = 0;
  for (const m of marks(text, tag)) m.open ? open++ : close++;
  return { open, close };
}

interface Unfenced {
  text: string;
  /** True when a Markdown code fence was removed. */
  fenced: boolean;
  /** The fence's language tag (`sql`, `json`), lower-cased, or '' when none. */
  lang: string;
}

const FENCE_LANGS = new Set([
  'sql',
  'sqlite',
  'json',
  'mysql',
  'postgresql',
  'postgres',
  'text',
  'python',
  'plaintext',
]);

/**
 * The content of a Markdown code fence inside a block (```sql … ```), trimmed. With several fences the first is
 * taken; an unclosed fence runs to the end. Text without a fence comes back trimmed and unchanged.
 */
export function stripCodeFence(text: string): Unfenced {
  const t = text.trim();
  const open = /```[ \t]*([A-Za-z0-9_+-]*)([ \t]*\n)?/.exec(t);
  if (!open) return { text: t, fenced: false, lang: '' };
  // A word right after the fence is a language only when a line break follows it or it names one we know;
  // otherwise (```SELECT 1```) it is the start of the body.
  const word = open[1];
  const isLang = word !== '' && (open[2] !== undefined || FENCE_LANGS.has(word.toLowerCase()));
  const bodyStart = isLang ? open.index + open[0].length : open.index + 3;
  const close = t.indexOf('```', bodyStart);
  const body = close < 0 ? t.slice(bodyStart) : t.slice(bodyStart, close);
  return { text: body.trim(), fenced: true, lang: isLang ? word.toLowerCase() : '' };
}

/** The text with every block of the given tags removed (for finding prose outside tags). */
export function removeBlocks(text: string, tags: string[]): string {
  const spans = tags.flatMap((t) => findBlocks(text, t)).sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const b of spans) {
    if (b.start < at) continue;
    out += text.slice(at, b.start);
    at = b.end;
  }
  return out + text.slice(at);
}

/**
 * Cuts `text` just after the first closing `</tag>` of any of the given tags that ends a block, reporting what was cut.
 */
export function cutAfterClose(text: string, tags: string[]): { text: string; dropped: string } {
  let cut = -1;
  for (const tag of tags) {
    const b = findBlocks(text, tag).find((x) => !x.unclosed);
    if (b && (cut < 0 || b.end < cut)) cut = b.end;
  }
  if (cut < 0) return { text, dropped: '' };
  return { text: text.slice(0, cut), dropped: text.slice(cut) };
}

/** A short quote of model text for a problem message: one line, at most `max` characters. */
export function excerpt(text: string, max = 60): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= max ? one : one.slice(0, max - 1) + '…';
}

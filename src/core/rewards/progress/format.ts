// R_fmt's condition (Progress-SQL §4.2 and the App. F output format): the final output is exactly
// `<think> … </think> <sql> … </sql>` — one of each, in that order, a non-empty SQL, nothing outside the tags.
import { tagBlocks } from '../format';

interface ProgressFormat {
  ok: boolean;
  explanation: string;
}

export function checkProgressFormat(text: string): ProgressFormat {
  const think = tagBlocks(text, 'think');
  const sql = tagBlocks(text, 'sql');
  if (!think.balanced || !sql.balanced) return { ok: false, explanation: 'unclosed or stray <think>/<sql> tag' };
  if (think.blocks.length !== 1)
    return { ok: false, explanation: `${think.blocks.length} <think> blocks (exactly one required)` };
  if (sql.blocks.length !== 1)
    return { ok: false, explanation: `${sql.blocks.length} <sql> blocks (exactly one required)` };
  if (sql.blocks[0].trim() === '') return { ok: false, explanation: 'the <sql> block is empty' };
  if (!/^\s*<think>[\s\S]*<\/think>\s*<sql>[\s\S]*<\/sql>\s*$/.test(text)) {
    return { ok: false, explanation: 'text outside <think>…</think> <sql>…</sql>, or the tags out of order' };
  }
  return { ok: true, explanation: 'final output is <think>…</think> <sql>…</sql>' };
}

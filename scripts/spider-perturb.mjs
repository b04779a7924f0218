// Dev tool: checks the TypeScript Spider parser / hardness / exact-set match against the official Python scripts.
//   node scripts/spider-perturb.mjs gen  <spider-dir> <out.jsonl>     gold queries plus perturbed predictions
// node scripts/spider-perturb.mjs ts   <spider-dir> <in.jsonl> <out.jsonl>   our verdicts (needs `npm run test:unit`
// build in out/)
//   node scripts/spider-perturb.mjs diff <in.jsonl> <official.jsonl> <ours.jsonl>
// The official side is run separately (evaluate()'s match path on each pair), writing the same JSONL fields.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [mode, ...args] = process.argv.slice(2);

/** Applies f to the text outside quoted strings only. */
function outsideQuotes(sql, f) {
  return sql
    .split(/('[^']*'|"[^"]*")/)
    .map((part, i) => (i % 2 === 1 ? part : f(part)))
    .join('');
}

function columnsByTable(entry) {
  const m = new Map();
  entry.table_names_original.forEach((t) => m.set(t.toLowerCase(), []));
  for (const [ti, c] of entry.column_names_original)
    if (ti >= 0) m.get(entry.table_names_original[ti].toLowerCase()).push(c);
  return m;
}

function perturbations(q, entry, neighbor) {
  const out = {};
  out.identity = q;
  out.orderFlip = /\bDESC\b/i.test(q)
    ? q.replace(/\bDESC\b/i, 'ASC')
    : /\bASC\b/i.test(q)
      ? q.replace(/\bASC\b/i, 'DESC')
      : q.replace(/(ORDER BY [^ ]+)/i, '$1 DESC');
  out.aggChange = q.replace(/\bcount\s*\(/i, 'max(').replace(/\bavg\s*\(/i, 'sum(');
  out.dropCond = q.replace(/\s+(AND|OR)\s+[\w.]+\s*(=|>=|<=|!=|>|<|LIKE)\s*('[^']*'|"[^"]*"|[\w.]+)/i, '');
  out.valueChange = q
    .replace(/'[^']*'/g, "'zz'")
    .replace(/"[^"]*"/g, '"zz"')
    .replace(/\b\d+(\.\d+)?\b/g, (m) => String(Number(m) + 7));
  out.valuePlaceholder = q.replace(/'[^']*'/g, 'value').replace(/(=|>|<)\s*\d+(\.\d+)?\b/g, '$1 value ');
  out.upper = outsideQuotes(q, (s) => s.toUpperCase());
  out.lower = outsideQuotes(q, (s) => s.toLowerCase());
  out.whitespace = outsideQuotes(q, (s) =>
    s
      .replace(/ /g, '  ')
      .replace(/\s*=\s*/g, ' = ')
      .replace(/\(\s*/g, '( '),
  );
  out.tight = outsideQuotes(q, (s) => s.replace(/\s*,\s*/g, ',').replace(/\s*(>=|<=|!=|=|>|<)\s*/g, '$1'));
  out.distinct = /\bDISTINCT\b/i.test(q)
    ? q.replace(/\bDISTINCT\s+/i, '')
    : q.replace(/^\s*SELECT\b/i, 'SELECT DISTINCT');
  out.alias = outsideQuotes(q, (s) => s.replace(/\bT(\d)\b/gi, 'alias$1'));
  const join = q.match(/FROM\s+(\w+)\s+AS\s+(\w+)\s+JOIN\s+(\w+)\s+AS\s+(\w+)\s+ON\s+([\w.]+)\s*=\s*([\w.]+)/i);
  if (join)
    out.joinReorder = q.replace(
      join[0],
      `FROM ${join[3]} AS ${join[4]} JOIN ${join[1]} AS ${join[2]} ON ${join[6]} = ${join[5]}`,
    );
  const sel = q.match(/^SELECT\s+([\w.]+)\s*,\s*([\w.]+)\s+FROM/i);
  if (sel) out.selectSwap = q.replace(sel[0], `SELECT ${sel[2]} , ${sel[1]} FROM`);
  const from = q.match(/FROM\s+(\w+)/i);
  const cols = from && columnsByTable(entry).get(from[1].toLowerCase());
  if (cols && cols.length > 1) {
    const m = q.match(/^SELECT\s+(?:DISTINCT\s+)?(?:\w+\.)?(\w+)/i);
    if (m && m[1] !== '*') {
      const other = cols.find((c) => c.toLowerCase() !== m[1].toLowerCase() && /^\w+$/.test(c));
      if (other) out.columnSwap = q.replace(new RegExp(`\\b${m[1]}\\b`), other);
    }
  }
  out.limitChange = /\bLIMIT\s+\d+/i.test(q) ? q.replace(/\bLIMIT\s+\d+/i, 'LIMIT 5') : q.replace(/;?\s*$/, ' LIMIT 3');
  out.setOp = q.replace(/\bINTERSECT\b/i, 'UNION').replace(/\bEXCEPT\b/i, 'INTERSECT');
  out.groupDrop = q.replace(/\s+GROUP BY\s+[\w.]+/i, '');
  out.notIn = q.replace(/\bNOT IN\b/i, 'IN').replace(/\bWHERE\b/i, 'WHERE NOT');
  const toks = q.split(/\s+/);
  out.truncate = toks.slice(0, Math.max(1, Math.floor(toks.length * 0.6))).join(' ');
  out.semicolonJunk = q + ' ; ) garbage';
  // Token-level damage at a position that depends on the query, to exercise the parser's failure paths.
  const at = (toks.length * 7 + 3) % toks.length;
  out.dropToken = toks.filter((_, i) => i !== at).join(' ');
  out.dupToken = toks.flatMap((t, i) => (i === at ? [t, t] : [t])).join(' ');
  if (neighbor) out.neighbor = neighbor;
  out.fromSubquery = `SELECT count(*) FROM (${q.replace(/;\s*$/, '')})`;
  return out;
}

if (mode === 'gen') {
  const [dir, outPath] = args;
  const items = JSON.parse(readFileSync(join(dir, 'train_spider.json'), 'utf8'));
  const tables = new Map(JSON.parse(readFileSync(join(dir, 'tables.json'), 'utf8')).map((e) => [e.db_id, e]));
  const lines = [];
  const byDb = new Map();
  items.forEach((it, i) => {
    if (!byDb.has(it.db_id)) byDb.set(it.db_id, []);
    byDb.get(it.db_id).push(i);
  });
  items.forEach((it, i) => {
    // Another gold query of the same database: a realistic wrong prediction that still parses.
    const same = byDb.get(it.db_id);
    const neighbor = items[same[(same.indexOf(i) + 1) % same.length]].query;
    for (const [kind, pred] of Object.entries(perturbations(it.query, tables.get(it.db_id), neighbor))) {
      lines.push(JSON.stringify({ i, kind, db_id: it.db_id, gold: it.query, pred }));
    }
  });
  writeFileSync(outPath, lines.join('\n') + '\n');
  console.log(`${lines.length} pairs from ${items.length} gold queries`);
} else if (mode === 'ts') {
  const [dir, inPath, outPath] = args;
  const require = createRequire(import.meta.url);
  const spider = require(join(root, 'out/src/core/sql/spider/index.js'));
  const em = require(join(root, 'out/src/core/eval/exactMatch.js'));
  const fks = spider.foreignKeyMaps(join(dir, 'tables.json'));
  const out = [];
  const t0 = Date.now();
  for (const line of readFileSync(inPath, 'utf8').split('\n').filter(Boolean)) {
    const it = JSON.parse(line);
    const schema = spider.loadSpiderSchema(join(dir, 'database', it.db_id, `${it.db_id}.sqlite`));
    const h = spider.spiderHardness(it.gold, schema);
    if (h.hardness === null) {
      out.push(JSON.stringify({ gold_error: h.error }));
      continue;
    }
    const r = em.exactSetMatch(it.gold, it.pred, schema, fks.get(it.db_id) ?? new Map());
    const o = { hardness: h.hardness, pred_ok: r.predParseError === undefined };
    if (r.error) o.exact_error = r.error;
    else {
      o.exact = r.match ? 1 : 0;
      o.partial = Object.fromEntries(
        Object.entries(r.partial).map(([k, v]) => [k, [v.acc, v.labelCount, v.predCount]]),
      );
    }
    out.push(JSON.stringify(o));
  }
  writeFileSync(outPath, out.join('\n') + '\n');
  console.log(`${out.length} pairs in ${Date.now() - t0} ms`);
} else if (mode === 'diff') {
  const [inPath, offPath, oursPath] = args;
  const read = (p) =>
    readFileSync(p, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  const [ins, off, ours] = [read(inPath), read(offPath), read(oursPath)];
  const tally = {};
  const bump = (k, f) => {
    tally[k] ??= { agree: 0, differ: 0 };
    tally[k][f]++;
  };
  let shown = 0;
  ins.forEach((it, n) => {
    const a = off[n],
      b = ours[n];
    const fields = ['gold_error', 'hardness', 'exact', 'pred_ok', 'exact_error', 'partial'];
    const same = (f) =>
      JSON.stringify(f === 'gold_error' || f === 'exact_error' ? !!a[f] : a[f]) ===
      JSON.stringify(f === 'gold_error' || f === 'exact_error' ? !!b[f] : b[f]);
    const bad = fields.filter((f) => !same(f));
    bump(it.kind, bad.length ? 'differ' : 'agree');
    if (it.kind === 'identity' || it.kind.startsWith('gold_'))
      bump(`hardness (${it.kind})`, same('hardness') && same('gold_error') ? 'agree' : 'differ');
    if (bad.length && shown++ < 30)
      console.log(JSON.stringify({ kind: it.kind, bad, gold: it.gold, pred: it.pred, official: a, ours: b }));
  });
  console.table(tally);
} else {
  console.error('usage: spider-perturb.mjs gen|ts|diff ...');
  process.exit(2);
}

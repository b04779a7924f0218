// Agent overhead per turn, the model excluded: parse the turn, run its SQL in the sandbox, build the observation,
// record the turn and write the trajectory line. Episodes replay Spider train gold SQL through the skyrl protocol
// with an instant in-process model (explore with the gold query, then answer with it), so the SQL and the
// observations are realistic. Target: median under 2 ms.
// QUARRY_BENCH_LIMIT=N episodes (default: every gold query; a limit takes every k-th, so every database takes part);
// QUARRY_BENCH_PROTOCOL=skyrl|sqltrail.
import { readFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir, loadavg } from 'node:os';
import { requireSpider, writeResult, percentile } from './common';
import { createSqlPool } from '../src/core/db/pool';
import { runEpisode, EpisodeSetupError } from '../src/core/agent/loop';
import { SchemaCache } from '../src/core/agent/env';
import { TrajectoryWriter, type TrajectoryRecord } from '../src/core/trajectories';
import type { ChatModel, GenerateRequest, GenerateResult } from '../src/core/models/types';

interface Gold {
  db_id: string;
  query: string;
  question: string;
}

const spider = requireSpider();
const limit = Number(process.env.QUARRY_BENCH_LIMIT ?? Infinity);
const protocolName = process.env.QUARRY_BENCH_PROTOCOL ?? 'skyrl';
const dbPath = (id: string) => join(spider, 'database', id, `${id}.sqlite`);
const all = (JSON.parse(readFileSync(join(spider, 'train_spider.json'), 'utf8')) as Gold[]).filter((g) =>
  existsSync(dbPath(g.db_id)),
);
if (all.length === 0) {
  console.error(`bench agent: no Spider databases found under ${join(spider, 'database')}`);
  process.exit(2);
}
// Every k-th example, so every database takes part rather than the first few in file order.
const step = Math.max(1, Math.floor(all.length / Math.min(limit, all.length)));
const items = all.filter((_, i) => i % step === 0).slice(0, limit);

/** Answers instantly from a script, cutting at the first stop string as an OpenAI-compatible server does. */
function instantModel(replies: string[]): ChatModel {
  let next = 0;
  return {
    spec: 'bench:instant',
    async close() {},
    async generate(req: GenerateRequest): Promise<GenerateResult> {
      let text = replies[next++] ?? '';
      let stopString: string | null = null;
      for (const s of req.sampling.stop ?? []) {
        const i = text.indexOf(s);
        if (i >= 0) {
          text = text.slice(0, i);
          stopString = s;
          break;
        }
      }
      return {
        text,
        finishReason: 'stop',
        stopString,
        usage: { promptTokens: 0, completionTokens: 0 },
        timings: { totalMs: 0, firstTokenMs: 0 },
      };
    },
  };
}

function script(g: Gold): string[] {
  const sql = g.query.trim();
  const tag = protocolName === 'sqltrail' ? 'reasoning' : 'think';
  return [
    `<${tag}>The question asks: ${g.question} I will check the data first.</${tag}>\n<sql>${sql}</sql>`,
    `<${tag}>The result looks right.</${tag}>\n<solution>${sql}</solution>`,
  ];
}

async function main(): Promise<void> {
  const startLoad = loadavg()[0];
  const pool = createSqlPool({ size: 1, spares: 1 });
  const schemaCache = new SchemaCache(1024);
  const work = mkdtempSync(join(tmpdir(), 'quarry-bench-agent-'));
  const writer = await TrajectoryWriter.open(join(work, 'agent.jsonl'), { append: false });

  async function episode(g: Gold): Promise<{ record: TrajectoryRecord; writeMs: number }> {
    const record = await runEpisode({
      task: { question: g.question, dbPath: dbPath(g.db_id), dbId: g.db_id, gold: g.query },
      protocolName,
      model: instantModel(script(g)),
      pool,
      schemaCache,
      sampling: { temperature: 0 },
    });
    const w0 = performance.now();
    await writer.write(record);
    return { record, writeMs: performance.now() - w0 };
  }

  // Set-up (introspection and sha256 of each database) happens once per database and is not per-turn overhead:
  // one warm-up episode per database pays it, timed separately.
  const setupMs: number[] = [];
  // A database that cannot be opened is reported and left out, rather than ending the benchmark.
  const unusable = new Map<string, string>();
  for (const id of [...new Set(items.map((g) => g.db_id))]) {
    const g = items.find((x) => x.db_id === id)!;
    const t0 = performance.now();
    try {
      await episode(g);
    } catch (err) {
      if (!(err instanceof EpisodeSetupError)) throw err;
      unusable.set(id, err.message);
      console.error(`bench agent: skipping database ${id}: ${err.message}`);
      continue;
    }
    setupMs.push(performance.now() - t0);
  }

  const perTurn: number[] = [];
  const execTurn: number[] = [];
  const answerTurn: number[] = [];
  const sandboxMs: number[] = [];
  const loopShare: number[] = [];
  const ends: Record<string, number> = {};
  let turns = 0;
  const t0 = performance.now();
  for (const g of items.filter((x) => !unusable.has(x.db_id))) {
    const { record, writeMs } = await episode(g);
    ends[record.end] = (ends[record.end] ?? 0) + 1;
    // What the loop spends outside the env and the model (messages, events, the record) plus the JSONL write,
    // shared evenly by the episode's turns.
    const rest = Math.max(0, record.timings.totalMs - record.timings.modelMs - record.timings.envMs) + writeMs;
    for (const t of record.turns) {
      const ms = t.timings.envMs + rest / record.turns.length;
      perTurn.push(ms);
      (t.action.kind === 'execute' ? execTurn : answerTurn).push(ms);
      if (t.exec) sandboxMs.push(t.exec.ms);
      loopShare.push(rest / record.turns.length);
      turns++;
    }
  }
  const wall = performance.now() - t0;
  await writer.close();
  await pool.close();
  rmSync(work, { recursive: true, force: true });

  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const r = (v: number) => Math.round(v * 1000) / 1000;
    return {
      n: s.length,
      median: r(percentile(s, 50)),
      p90: r(percentile(s, 90)),
      p99: r(percentile(s, 99)),
      max: r(s[s.length - 1] ?? NaN),
    };
  };
  const overall = stats(perTurn);
  console.log(
    `agent: ${items.length - items.filter((x) => unusable.has(x.db_id)).length} episodes, ${turns} ` +
      `turns, ${protocolName}, ${(wall / 1000).toFixed(2)} s`,
  );
  console.log(
    `overhead per turn (model excluded): median ${overall.median} ms, p99 ${overall.p99} ms (target median < 2 ms)`,
  );
  console.log(`  execute turns: ${JSON.stringify(stats(execTurn))}`);
  console.log(`  answer turns:  ${JSON.stringify(stats(answerTurn))}`);
  console.log(
    `  of which sandbox statement time: ${JSON.stringify(stats(sandboxMs))}; loop + record + write ` +
      `share: ${JSON.stringify(stats(loopShare))}`,
  );
  console.log(
    `  ends: ${JSON.stringify(ends)}; per-database set-up (first episode): ${JSON.stringify(stats(setupMs))}`,
  );
  writeResult('agent', {
    episodes: items.length - items.filter((x) => unusable.has(x.db_id)).length,
    turns,
    skippedDatabases: Object.fromEntries(unusable),
    protocol: protocolName,
    wallSeconds: wall / 1000,
    overheadPerTurnMs: overall,
    executeTurnMs: stats(execTurn),
    answerTurnMs: stats(answerTurn),
    sandboxStatementMs: stats(sandboxMs),
    loopRecordWriteShareMs: stats(loopShare),
    firstEpisodePerDatabaseMs: stats(setupMs),
    ends,
    target: 'median < 2 ms',
    meetsTarget: overall.median < 2,
    // Other work on the machine moves the tail more than the median; the 1-minute load says how busy it was.
    loadAverage1m: { atStart: startLoad, atEnd: loadavg()[0] },
    notes:
      "Per turn: env time (parse, sandbox execution over IPC, observation) plus an even share of the loop's own work " +
      '(messages, events, record) and the JSONL write. The model is an instant in-process script (its ' +
      'time is excluded). ' +
      'Caches are warm: one earlier episode per database paid introspection and sha256 (reported separately).',
  });
}

main().catch((err) => {
  console.error(`bench agent failed: ${(err as Error)?.stack ?? String(err)}`);
  process.exit(1);
});

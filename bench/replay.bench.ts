// The replay list at 10,000 trajectories: what the extension host does when a file opens (read + validate every line,
// one summary and one search text per record) and on every filter change (filter + facets), and how big the one
// message carrying all summaries to the webview is. The trajectories are generated here (realistic sizes: a schema
// prompt, 1–4 turns with reasoning, SQL and a df observation, GRPO groups of 8), so the benchmark needs no data set.
import { mkdtempSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeResult, percentile } from './common';
import { loadTrajectoryFile } from '../src/extension/replay/source';
import { packRows, unpackRows } from '../src/protocol/replay';
import { filterSummaries, facets, groupKeys, type TrajectoryFilter } from '../src/core/trajectories/summary';
import { TRAJECTORY_SCHEMA, type TrajectoryRecord, type TrajectoryTurn } from '../src/core/trajectories/types';
import type { ProtocolName } from '../src/core/agent/types';

const N = Number(process.env.REPLAY_BENCH_N ?? 10_000);
const REPEATS = 5;
const PROTOCOLS: ProtocolName[] = ['skyrl', 'sqltrail', 'mtir', 'mtsqlr1'];
const MODELS = [
  'openai:http://127.0.0.1:8000/v1#qwen2.5-coder-7b',
  'openai:http://127.0.0.1:8000/v1#skyrl-sql-7b',
  'onnx:media/models/tiny-sql',
];
const DBS = [
  'concert_singer',
  'pets_1',
  'car_1',
  'flight_2',
  'employee_hire_evaluation',
  'cre_Doc_Template_Mgt',
  'course_teach',
  'museum_visit',
];
const TABLES = [
  'singer',
  'concert',
  'stadium',
  'pets',
  'student',
  'cars_data',
  'airlines',
  'employee',
  'museum',
  'visitor',
];

const SCHEMA = TABLES.map(
  (t) =>
    `Table: ${t}\n` +
    ['id (INTEGER, PRIMARY KEY)', 'name (TEXT)', 'age (INTEGER)', 'country (TEXT)', 'year (INTEGER)']
      .map((c) => `- ${c}`)
      .join('\n'),
).join('\n\n');

function df(rows: number): string {
  const lines = ['   name  age country'];
  for (let i = 0; i < rows; i++) lines.push(`${i}  person${i}  ${20 + (i % 30)}  country${i % 7}`);
  return lines.join('\n');
}

function synthetic(i: number): TrajectoryRecord {
  const g = Math.floor(i / 8);
  const t = TABLES[g % TABLES.length];
  const nTurns = 1 + ((i * 7) % 4);
  const turns: TrajectoryTurn[] = [];
  for (let k = 0; k < nTurns; k++) {
    const last = k === nTurns - 1;
    const sql = `SELECT name, age FROM ${t} WHERE age > ${20 + k + (i % 5)} ORDER BY age DESC LIMIT ${5 + k}`;
    const failed = !last && (i + k) % 6 === 0;
    turns.push({
      index: k,
      assistant:
        `<think>The question asks about ${t}. I should check the ages first and then filter; ` +
        `step ${k}. ${'Reasoning about joins and columns. '.repeat(6)}</think>\n` +
        (last ? `<solution>${sql}</solution>` : `<sql>${sql}</sql>`),
      action: {
        kind: last ? 'answer' : 'execute',
        sql,
        thought: `The question asks about ${t}. ${'Reasoning. '.repeat(10)}`,
        mdp: last ? ['FINALIZE'] : ['PROPOSE', 'EXECUTE'],
        problems: [],
      },
      observations: last
        ? []
        : [
            {
              role: 'user',
              content: failed
                ? '<observation>Error: no such column: agee</observation>'
                : `<observation>${df(6)}</observation>`,
            },
          ],
      exec: last
        ? null
        : failed
          ? {
              ok: false,
              errorClass: 'sql',
              error: 'no such column: agee',
              columns: [],
              rowCount: 0,
              truncated: false,
              ms: 0.4,
            }
          : {
              ok: true,
              errorClass: null,
              error: null,
              columns: ['name', 'age'],
              rowCount: 6,
              truncated: false,
              ms: 0.9,
            },
      finishReason: 'stop',
      usage: { promptTokens: 1500 + 200 * k, completionTokens: 90 },
      timings: { modelMs: 800, envMs: 2 },
    });
  }
  const finalSql = turns[turns.length - 1].action.sql;
  return {
    schema: TRAJECTORY_SCHEMA,
    id: `t${i}`,
    groupId: `q${g}`,
    sample: i % 8,
    createdAt: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    task: {
      id: `q${g}`,
      question: `Show the names and ages of every ${t} older than ${20 + (g % 30)}, oldest first (question ${g}).`,
      db: {
        path: `/data/spider/database/${DBS[g % DBS.length]}/${DBS[g % DBS.length]}.sqlite`,
        id: DBS[g % DBS.length],
        sha256: 'a'.repeat(64),
      },
      evidence: null,
      history: [],
      gold: `SELECT name, age FROM ${t} WHERE age > ${20 + (g % 30)} ORDER BY age DESC`,
      difficulty: (['easy', 'medium', 'hard', 'extra'] as const)[g % 4],
    },
    protocol: { name: PROTOCOLS[g % PROTOCOLS.length], config: { maxTurns: 5 }, budget: 5 },
    model: { spec: MODELS[i % MODELS.length], sampling: { temperature: 1 } },
    prompt: [
      { role: 'system', content: 'You are a data science expert. Database schema:\n' + SCHEMA },
      { role: 'user', content: `Question ${g}` },
    ],
    turns,
    finalSql,
    end: 'answer',
    error: null,
    usage: { promptTokens: 4000, completionTokens: 90 * nTurns },
    timings: { totalMs: 900 * nTurns, modelMs: 800 * nTurns, envMs: 2 * nTurns },
    meta: i % 3 === 0 ? { correct: i % 2 === 0, label: i % 9 === 0 ? 'wrong join' : 'ok' } : {},
  };
}

function ms(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function stats(xs: number[]): { median: number; p90: number; min: number } {
  const s = [...xs].sort((a, b) => a - b);
  return { median: percentile(s, 50), p90: percentile(s, 90), min: s[0] };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-replay-bench-'));
  try {
    const file = join(dir, 'trajectories.jsonl');
    const tGen = process.hrtime.bigint();
    const lines: string[] = [];
    for (let i = 0; i < N; i++) lines.push(JSON.stringify(synthetic(i)));
    writeFileSync(file, lines.join('\n') + '\n');
    const genMs = ms(tGen);
    const bytes = statSync(file).size;

    const loads: number[] = [];
    let loaded = await loadTrajectoryFile(file);
    for (let r = 0; r < REPEATS; r++) {
      const t0 = process.hrtime.bigint();
      loaded = await loadTrajectoryFile(file);
      loads.push(ms(t0));
    }
    if (loaded.records.length !== N || loaded.invalid.length !== 0)
      throw new Error(`expected ${N} valid records, got ${loaded.records.length} (+${loaded.invalid.length} invalid)`);
    // Rewards as if scored, so the reward-range filter has something to cut.
    loaded.summaries.forEach((s, i) => {
      s.reward = ((i * 37) % 100) / 50 - 1;
    });

    const filters: Record<string, TrajectoryFilter> = {
      none: {},
      verdict: { verdict: 'correct' },
      protocol_model: { protocol: 'sqltrail', model: MODELS[1] },
      turns_reward: { turnsMin: 2, turnsMax: 3, rewardMin: 0 },
      label: { label: 'wrong join' },
      text_one_word: { text: 'stadium' },
      text_three_words: { text: 'museum age desc' },
      text_no_match: { text: 'zzzz-nowhere' },
      everything: {
        verdict: 'incorrect',
        protocol: 'skyrl',
        db: 'concert_singer',
        turnsMin: 1,
        rewardMax: 0.5,
        text: 'older',
      },
    };
    const filterMs: Record<string, { median: number; p90: number; matched: number }> = {};
    for (const [name, f] of Object.entries(filters)) {
      const times: number[] = [];
      let matched = 0;
      for (let r = 0; r < 20; r++) {
        const t0 = process.hrtime.bigint();
        matched = filterSummaries(loaded.summaries, f, loaded.haystacks).length;
        times.push(ms(t0));
      }
      const s = stats(times);
      filterMs[name] = { median: s.median, p90: s.p90, matched };
    }
    const facetTimes: number[] = [];
    for (let r = 0; r < 20; r++) {
      const t0 = process.hrtime.bigint();
      facets(loaded.summaries);
      facetTimes.push(ms(t0));
    }
    const groupTimes: number[] = [];
    let groups = 0;
    for (let r = 0; r < 20; r++) {
      const t0 = process.hrtime.bigint();
      groups = groupKeys(loaded.summaries).size;
      groupTimes.push(ms(t0));
    }
    // The webview gets every summary in one message; postMessage serialises it (JSON-sized).
    const tJson = process.hrtime.bigint();
    const listJson = JSON.stringify({ type: 'list', rows: packRows(loaded.summaries) });
    const listSerializeMs = ms(tJson);
    const tUnpack = process.hrtime.bigint();
    const rows = unpackRows(JSON.parse(listJson).rows);
    const listParseUnpackMs = ms(tUnpack);
    if (rows.length !== N) throw new Error('unpacked rows lost some trajectories');
    const naiveKiB = Math.round(JSON.stringify({ type: 'list', summaries: loaded.summaries }).length / 1024);
    const keysJson = JSON.stringify({ type: 'view', keys: loaded.summaries.map((s) => s.key) });

    const load = stats(loads);
    const result = {
      trajectories: N,
      fileMiB: +(bytes / 2 ** 20).toFixed(2),
      generateMs: +genMs.toFixed(1),
      loadAndSummarizeMs: { median: +load.median.toFixed(1), p90: +load.p90.toFixed(1), min: +load.min.toFixed(1) },
      perTrajectoryUs: +((load.median * 1000) / N).toFixed(2),
      filterMs: Object.fromEntries(
        Object.entries(filterMs).map(([k, v]) => [
          k,
          { median: +v.median.toFixed(3), p90: +v.p90.toFixed(3), matched: v.matched },
        ]),
      ),
      facetsMs: +stats(facetTimes).median.toFixed(3),
      groupKeysMs: +stats(groupTimes).median.toFixed(3),
      groups,
      listMessageKiB: Math.round(listJson.length / 1024),
      listPackAndSerializeMs: +listSerializeMs.toFixed(1),
      listParseAndUnpackMs: +listParseUnpackMs.toFixed(1),
      listMessageKiBAsObjects: naiveKiB,
      viewMessageKiB: Math.round(keysJson.length / 1024),
      what:
        'load = readTrajectories (validating) + summarizeTrajectory + searchText per record, as the replay ' +
        'host does on open; filter = filterSummaries over all summaries with full-text haystacks',
    };
    console.log(JSON.stringify(result, null, 2));
    writeResult('replay', result);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`bench replay: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});

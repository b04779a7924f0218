// `quarry serve-env` under load (issue 19 §2): the server is a separate process (dist/cli.js serve-env --jobs 2 over
// the Spider train databases); 64 concurrent clients with keep-alive connections.
//   rewards:  /v1/reward (sqltrail panel) for Spider gold queries against near-miss predictions — rewards/s and p50/p99
//             latency, next to the same scorings done in this process (scorePanel, its own pool of 2 workers);
//   steps:    SkyRL episodes (create, a <sql> turn, a <solution> turn with the panel reward) — steps/s and latency;
//   memory:   the server's RSS sampled every 10,000 requests over 100,000 /v1/reward requests;
//   crashes:  runaway statements killed by their time limit among ordinary ones: each costs its own request only.
// Numbers depend on load from other processes: the machine's load average is recorded beside them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { percentile, repoRoot, requireSpider, writeResult } from './common';
import { createSqlPool } from '../src/core/db';
import { createScoringResources, loadPanel, scorePanel } from '../src/core/rewards';

interface SpiderExample {
  query: string;
  db_id: string;
  question: string;
}

const CLIENTS = 64;

async function startServer(dbDir: string): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'dist', 'cli.js'), 'serve-env', '--db-dir', dbDir, '--jobs', '2', '--max-episodes', '4096'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (c: Buffer) => {
      buf += String(c);
      const m = /listening on (\S+)/.exec(buf);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`serve-env exited ${code}`)));
  });
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** Runs `n` jobs over CLIENTS concurrent loops; returns per-request latencies (ms) and the wall time. */
async function load(n: number, job: (i: number) => Promise<void>): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (;;) {
        const i = next++;
        if (i >= n) return;
        const s = performance.now();
        await job(i);
        latencies.push(performance.now() - s);
      }
    }),
  );
  return { latencies: latencies.sort((a, b) => a - b), seconds: (performance.now() - t0) / 1000 };
}

const stats = (l: { latencies: number[]; seconds: number }, n: number) => ({
  perSecond: Math.round(n / l.seconds),
  p50Ms: +percentile(l.latencies, 50).toFixed(2),
  p99Ms: +percentile(l.latencies, 99).toFixed(2),
  seconds: +l.seconds.toFixed(2),
});

async function main(): Promise<void> {
  const spider = requireSpider();
  const dbDir = join(spider, 'database');
  const examples: SpiderExample[] = JSON.parse(readFileSync(join(spider, 'train_spider.json'), 'utf8'));
  const items = examples.slice(0, 2000).map((e, i) => ({
    db: e.db_id,
    question: e.question,
    goldSql: e.query,
    predSql: i % 2 === 0 ? e.query : `${e.query.replace(/;\s*$/, '')} LIMIT 1`,
  }));
  const server = await startServer(dbDir);
  const load0 = loadavg()[0];
  try {
    // Warm the server's caches (gold results, parses) once, as a training run's first step does.
    await load(items.length, async (i) => {
      await post(`${server.url}/v1/reward`, { panel: 'sqltrail', ...items[i] });
    });

    const rewardsN = 10_000;
    const served = await load(rewardsN, async (i) => {
      const r = await post(`${server.url}/v1/reward`, { panel: 'sqltrail', ...items[i % items.length] });
      if (r.status !== 200) throw new Error(`reward ${i}: ${JSON.stringify(r.json)}`);
    });

    // The same scorings in this process (warm caches too): the in-process ceiling the service is compared with.
    const pool = createSqlPool({ size: 2 });
    const resources = createScoringResources({ run: pool, timeoutMs: 30_000 });
    const panel = loadPanel('sqltrail');
    const inProc = async (i: number) => {
      const it = items[i % items.length];
      await scorePanel(
        panel,
        { goldSql: it.goldSql, predSql: it.predSql, dbPath: join(dbDir, it.db, `${it.db}.sqlite`) },
        resources,
      );
    };
    await load(items.length, inProc);
    const local = await load(rewardsN, inProc);
    await pool.close();

    const episodesN = 3000;
    const steps = await load(episodesN, async (i) => {
      const it = items[i % items.length];
      const e = await post(`${server.url}/v1/episodes`, {
        protocol: 'skyrl',
        db: it.db,
        question: it.question,
        goldSql: it.goldSql,
      });
      if (e.status !== 200) throw new Error(`episode ${i}: ${JSON.stringify(e.json)}`);
      await post(`${server.url}/v1/episodes/${e.json.id}/step`, {
        action: `<think>look</think>\n<sql>${it.predSql}</sql>`,
      });
      const done = await post(`${server.url}/v1/episodes/${e.json.id}/step`, {
        action: `<think>answer</think>\n<solution>${it.predSql}</solution>`,
      });
      if (!done.json.done || typeof done.json.reward !== 'number')
        throw new Error(`episode ${i} did not end with a reward`);
    });

    const memory: Array<[number, number]> = [[0, rssMiB(server.pid)]];
    const total = 100_000;
    for (let done = 0; done < total; done += 10_000) {
      await load(10_000, async (i) => {
        await post(`${server.url}/v1/reward`, { panel: 'sqltrail', ...items[(done + i) % items.length] });
      });
      memory.push([done + 10_000, rssMiB(server.pid)]);
    }

    const runaway = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';
    let ordinaryOk = 0;
    let ordinaryFailed = 0;
    let killed = 0;
    await load(1000, async (i) => {
      const it = items[i % items.length];
      const bad = i % 20 === 0;
      const r = await post(`${server.url}/v1/execute`, {
        db: it.db,
        sql: bad ? runaway : it.goldSql,
        timeoutMs: bad ? 200 : 30_000,
      });
      if (bad) {
        if (r.json.errorClass === 'timeout') killed++;
      } else if (r.status === 200 && r.json.ok) ordinaryOk++;
      else ordinaryFailed++;
    });
    const health = await (await fetch(`${server.url}/v1/health`)).json();

    const result = {
      command: 'npm run bench -- envServer',
      clients: CLIENTS,
      rewards: {
        requests: rewardsN,
        served: stats(served, rewardsN),
        inProcess: stats(local, rewardsN),
        ratio: +(stats(served, rewardsN).perSecond / stats(local, rewardsN).perSecond).toFixed(2),
      },
      steps: {
        episodes: episodesN,
        stepsPerSecond: Math.round((episodesN * 2) / steps.seconds),
        episodeLatency: stats(steps, episodesN),
      },
      memory: { requests: total, rssMiB: memory, growthMiB: memory[memory.length - 1][1] - memory[1][1] },
      crashes: {
        runaway: 50,
        killedByTimeout: killed,
        ordinaryOk,
        ordinaryFailed,
        serverStillServing: health.ok === true,
      },
      loadAverageAtStart: load0,
      loadAverageAtEnd: loadavg()[0],
    };
    console.log(JSON.stringify(result, null, 2));
    writeResult('envServer', result);
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

// `quarry serve-env` under load (issues 19 §2, 30): the server is a separate process (dist/cli.js serve-env --jobs 2
// over the Spider train databases); 64 concurrent clients, each a keep-alive HTTP/1.1 connection of its own
// (keepAliveClient.ts; fetch is measured too, as a heavier client), in this process, never in the server's.
//   rewards:  /v1/reward (sqltrail panel) for Spider gold queries against near-miss predictions — rewards/s and p50/p99
//             latency, next to the same scorings done in this process (scorePanel, its own pool of 2 workers, the
//             same databases, requests and caches, warmed alike), in alternating rounds; medians are reported, with
//             the CPU time each side spent per reward (server: its process and its SQL workers; in-process: this
//             process and its workers), so the per-core cost stands beside the machine-wide rate;
//   steps:    SkyRL episodes (create, a <sql> turn, a <solution> turn with the panel reward) — steps/s and latency;
//   memory:   the server's RSS sampled every 10,000 requests over 100,000 /v1/reward requests;
//   crashes:  runaway statements killed by their time limit among ordinary ones: each costs its own request only.
// Numbers depend on load from other processes: the machine's load average is recorded beside them.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { percentile, repoRoot, requireSpider, writeResult } from './common';
import { openConnections, type Connection } from './keepAliveClient';
import { createSqlPool } from '../src/core/db';
import { createScoringResources, loadPanel, scorePanel } from '../src/core/rewards';

interface SpiderExample {
  query: string;
  db_id: string;
  question: string;
}

const CLIENTS = 64;
/** Rounds of the rewards comparison (served, in-process, served to fetch clients): medians are reported. */
const ROUNDS = 5;
const REWARDS_N = 10_000;
/** Rewards per round served to fetch clients: the heavier client, for comparison (issue 30's first figures). */
const FETCH_N = 3_000;

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

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** CPU seconds a process has used (user + system), with those of its children it has waited for. */
function cpuSeconds(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLK_TCK;
  } catch {
    return 0; // gone
  }
}

/** The pids of a process's live children. */
function children(pid: number): number[] {
  const out: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
    if (text) out.push(...text.split(/\s+/).map(Number));
  }
  return out;
}

/** CPU seconds of a process and its live children (the server and its SQL workers). */
function treeCpuSeconds(pid: number): number {
  return cpuSeconds(pid) + children(pid).reduce((sum, c) => sum + cpuSeconds(c), 0);
}

const thisProcessCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

async function fetchPost(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** Runs `n` jobs over one loop per client; returns per-request latencies (ms) and the wall time. */
async function load<C>(
  n: number,
  clients: readonly C[],
  job: (client: C, i: number) => Promise<void>,
): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      for (;;) {
        const i = next++;
        if (i >= n) return;
        const s = performance.now();
        await job(client, i);
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

/** A load with the CPU seconds spent meanwhile by each named party, as µs per request. */
async function measured(
  n: number,
  cpu: Record<string, () => number>,
  run: () => Promise<{ latencies: number[]; seconds: number }>,
): Promise<ReturnType<typeof stats> & Record<string, number>> {
  const before = Object.fromEntries(Object.entries(cpu).map(([k, f]) => [k, f()]));
  const l = await run();
  const perReward = Object.fromEntries(
    Object.entries(cpu).map(([k, f]) => [k, Math.round(((f() - before[k]) / n) * 1e6)]),
  );
  return { ...stats(l, n), ...perReward };
}

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

/** The median of each numeric field over the rounds. */
function medians<T extends Record<string, number>>(rounds: T[]): T {
  return Object.fromEntries(Object.keys(rounds[0]).map((k) => [k, median(rounds.map((r) => r[k]))])) as T;
}

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
  const bodies = items.map((it) => JSON.stringify({ panel: 'sqltrail', ...it }));
  const server = await startServer(dbDir);
  const conns = await openConnections(server.url, CLIENTS);
  const pool = createSqlPool({ size: 2 });
  const load0 = loadavg()[0];
  const uptime0 = readFileSync('/proc/loadavg', 'utf8').trim();
  const post = async (c: Connection, path: string, body: unknown): Promise<{ status: number; json: any }> => {
    const a = await c.request('POST', path, JSON.stringify(body));
    return { status: a.status, json: JSON.parse(a.text) };
  };
  try {
    const reward = async (c: Connection, i: number) => {
      const a = await c.request('POST', '/v1/reward', bodies[i % bodies.length]);
      if (a.status !== 200) throw new Error(`reward ${i}: ${a.text}`);
    };
    // The same scorings in this process: the same panel, databases and requests, and the same caches (executions,
    // parses) as the server's, which warm up alike. The in-process ceiling the service is compared with.
    const resources = createScoringResources({ run: pool, timeoutMs: 30_000 });
    const panel = loadPanel('sqltrail');
    const inProc = async (_: null, i: number) => {
      const it = items[i % items.length];
      await scorePanel(
        panel,
        { goldSql: it.goldSql, predSql: it.predSql, dbPath: join(dbDir, it.db, `${it.db}.sqlite`) },
        resources,
      );
    };
    const callers = Array.from({ length: CLIENTS }, () => null);
    const fetchers = Array.from({ length: CLIENTS }, () => null);
    // Warm both sides' caches (gold results, parses) once, as a training run's first step does.
    await load(items.length, conns.list, reward);
    await load(items.length, callers, inProc);

    const serverCpu = () => treeCpuSeconds(server.pid);
    const inProcessCpu = () => thisProcessCpuSeconds() + pool.pids().reduce((t, p) => t + cpuSeconds(p), 0);
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      const served = await measured(REWARDS_N, { serverCpuUs: serverCpu, clientCpuUs: thisProcessCpuSeconds }, () =>
        load(REWARDS_N, conns.list, reward),
      );
      const inProcess = await measured(REWARDS_N, { cpuUs: inProcessCpu }, () => load(REWARDS_N, callers, inProc));
      const servedToFetch = await measured(
        FETCH_N,
        { serverCpuUs: serverCpu, clientCpuUs: thisProcessCpuSeconds },
        () =>
          load(FETCH_N, fetchers, async (_, i) => {
            const res = await fetchPost(`${server.url}/v1/reward`, JSON.parse(bodies[i % bodies.length]));
            if (res.status !== 200) throw new Error(`reward ${i}: ${JSON.stringify(res.json)}`);
          }),
      );
      rounds.push({
        served,
        inProcess,
        servedToFetch,
        ratio: +(served.perSecond / inProcess.perSecond).toFixed(2),
        ratioPerCore: +(inProcess.cpuUs / served.serverCpuUs).toFixed(2),
        loadAverage: +loadavg()[0].toFixed(2),
      });
    }
    const served = medians(rounds.map((r) => r.served));
    const inProcess = medians(rounds.map((r) => r.inProcess));
    const servedToFetch = medians(rounds.map((r) => r.servedToFetch));

    const episodesN = 3000;
    const steps = await load(episodesN, conns.list, async (c, i) => {
      const it = items[i % items.length];
      const e = await post(c, '/v1/episodes', {
        protocol: 'skyrl',
        db: it.db,
        question: it.question,
        goldSql: it.goldSql,
      });
      if (e.status !== 200) throw new Error(`episode ${i}: ${JSON.stringify(e.json)}`);
      await post(c, `/v1/episodes/${e.json.id}/step`, {
        action: `<think>look</think>\n<sql>${it.predSql}</sql>`,
      });
      const done = await post(c, `/v1/episodes/${e.json.id}/step`, {
        action: `<think>answer</think>\n<solution>${it.predSql}</solution>`,
      });
      if (!done.json.done || typeof done.json.reward !== 'number')
        throw new Error(`episode ${i} did not end with a reward`);
    });

    const memory: Array<[number, number]> = [[0, rssMiB(server.pid)]];
    const total = 100_000;
    for (let done = 0; done < total; done += 10_000) {
      await load(10_000, conns.list, (c, i) => reward(c, done + i));
      memory.push([done + 10_000, rssMiB(server.pid)]);
    }

    const runaway = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';
    let ordinaryOk = 0;
    let ordinaryFailed = 0;
    let killed = 0;
    await load(1000, conns.list, async (c, i) => {
      const it = items[i % items.length];
      const bad = i % 20 === 0;
      const r = await post(c, '/v1/execute', {
        db: it.db,
        sql: bad ? runaway : it.goldSql,
        timeoutMs: bad ? 200 : 30_000,
      });
      if (bad) {
        if (r.json.errorClass === 'timeout') killed++;
      } else if (r.status === 200 && r.json.ok) ordinaryOk++;
      else ordinaryFailed++;
    });
    const health = JSON.parse((await conns.list[0].request('GET', '/v1/health')).text);

    const result = {
      command: 'npm run bench -- envServer',
      clients: CLIENTS,
      rewards: {
        requests: REWARDS_N,
        rounds: ROUNDS,
        client:
          `${CLIENTS} keep-alive HTTP/1.1 connections over loopback TCP, one request at a time each ` +
          '(bench/keepAliveClient.ts)',
        served,
        inProcess,
        /** Rewards/s served over rewards/s scored in this process, round by round (median). */
        ratio: median(rounds.map((r) => r.ratio)),
        /** In-process CPU per reward over the server's (its process and SQL workers), round by round (median). */
        ratioPerCore: median(rounds.map((r) => r.ratioPerCore)),
        servedToFetchClients: {
          requests: FETCH_N,
          ...servedToFetch,
          ratio: +(servedToFetch.perSecond / inProcess.perSecond).toFixed(2),
        },
        perRound: rounds,
        notes: [
          'Both sides score the same 2,000 Spider items with the same panel, databases and caches, warmed alike ' +
            '(every gold and prediction result is cached after the warm-up): what is compared is the cost of serving.',
          'The server runs in its own process; the clients run in the benchmark process, never in the server’s event ' +
            'loop. On a machine of few cores they share its CPUs with the server: the clients’ own CPU per request ' +
            'is recorded (clientCpuUs).',
          'Scoring is single-threaded on both sides (the SQL workers only run statements, idle with warm caches).',
          'ratio compares wall-clock rates. When other programs load the machine past its cores, each process gets a ' +
            'share of the CPUs and the served side (the server and the clients, two processes) gets about twice the ' +
            'in-process side’s, which flatters ratio; ratioPerCore (CPU time per reward) does not depend on it.',
        ],
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
      procLoadavgAtStart: uptime0,
      procLoadavgAtEnd: readFileSync('/proc/loadavg', 'utf8').trim(),
    };
    console.log(JSON.stringify(result, null, 2));
    writeResult('envServer', result);
  } finally {
    conns.close();
    await pool.close();
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

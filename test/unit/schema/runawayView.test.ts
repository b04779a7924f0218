// Schema introspection has a time limit (issue 9, item 4): a database holding a view that never ends no longer hangs
// `quarry schema` or the agent's set-up; the view's row count reads as unknown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot, tempDir, buildDb } from '../../helpers/fixtures';
import { createSqlPool } from '../../../src/core/db/pool';
import { SchemaCache, SqlAgentEnv } from '../../../src/core/agent/env';
import { getProtocol } from '../../../src/core/agent/protocols';

const FOREVER =
  "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT); INSERT INTO t VALUES (1, 'x');\n" +
  'CREATE VIEW forever AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c;';
const db = buildDb('forever', { sql: FOREVER, dir: tempDir() });

test('quarry schema on a database with a never-ending view returns, the view counted as unknown', () => {
  const r = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'schema', '--db', db, '--json'], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const info = JSON.parse(r.stdout) as { tables: { name: string; rowCount: number | null }[] };
  assert.equal(info.tables.find((t) => t.name === 't')?.rowCount, 1);
  assert.equal(info.tables.find((t) => t.name === 'forever')?.rowCount, null);
});

test('the agent environment loads the schema through the pool before its first turn', async () => {
  const pool = createSqlPool({ size: 1, spares: 0 });
  try {
    const env = new SqlAgentEnv({
      task: { question: 'how many?', dbPath: db },
      protocol: getProtocol('skyrl'),
      pool,
      schemaCache: new SchemaCache(),
    });
    await env.prepare();
    assert.deepEqual(env.schema.tables.map((t) => t.name).sort(), ['forever', 't']);
    const messages = env.reset();
    assert.match(messages.map((m) => m.content).join('\n'), /forever/);
  } finally {
    await pool.close();
  }
});

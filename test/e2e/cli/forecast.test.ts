import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { runCli } from '../../helpers/cli.ts';
import { postCreated, submit } from '../../helpers/jobs.ts';
import { ADMIN_KEY, startE2eServer, type TestServer } from '../../helpers/server.ts';

/**
 * `millrace forecast` run as a user runs it against a listening server: every page of the forecast, as a table for
 * people and as one JSON array with -o json. The recurrence starts tomorrow, so nothing changes while the test runs.
 */

const [backend] = backends();
const SLOW = { timeout: 360_000 };
const HOUR = 3_600_000;

describe('millrace forecast', () => {
  let t: TestServer;
  let dir = '';
  let env: Record<string, string> = {};
  const from = new Date(Math.ceil(Date.now() / HOUR) * HOUR + 24 * HOUR);
  const until = new Date(from.getTime() + 5 * HOUR);
  before(async () => {
    t = await startE2eServer(backend as NonNullable<typeof backend>);
    const { port } = t.server.app.server.address() as { port: number };
    dir = mkdtempSync(join(tmpdir(), 'millrace-forecast-e2e-'));
    env = { MILLRACE_URL: `http://127.0.0.1:${port}/millrace`, MILLRACE_API_KEY: ADMIN_KEY, XDG_CONFIG_HOME: dir };
    await postCreated(t, '/SubmitFrame/GLOBAL.EveryMinute', {
      TimeZone: 'UTC',
      Elements: [{ Kind: 'Every', Every: 1, Unit: 'Minutes' }],
    });
    for (const name of ['Report', 'Other']) {
      await postCreated(t, `/JobDefinition/GLOBAL.${name}`, { JobDefinitionType: 'BASH', Script: 'true' });
      await submit(t, `GLOBAL.${name}`, { SubmitFrame: 'GLOBAL.EveryMinute', RequestedStartTime: from.toISOString() });
    }
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  test('-o json walks every page; the table has a row per start; --definition narrows it', SLOW, async () => {
    const range = ['--from', from.toISOString(), '--until', until.toISOString()];
    const [json, one, tableOut, missing] = await Promise.all([
      runCli(['forecast', ...range, '-o', 'json'], env, 180_000),
      runCli(['forecast', ...range, '--definition', 'Report', '-o', 'json'], env, 180_000),
      runCli(['forecast', ...range, '--definition', 'GLOBAL.Report'], env, 180_000),
      runCli(['forecast', '--from', from.toISOString()], env, 180_000),
    ]);
    assert.equal(json.code, 0, json.stderr);
    const all = JSON.parse(json.stdout);
    assert.equal(all.length, 2 * 300, "two definitions, every minute for 5 hours: more than one of the client's pages");
    const api = await t.req('GET', `/forecast?From=${from.toISOString()}&Until=${until.toISOString()}&Limit=1000`);
    assert.deepEqual(all, api.json.items);
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual(
      JSON.parse(one.stdout),
      all.filter((e: { JobDefinition: string }) => e.JobDefinition === 'GLOBAL.Report'),
    );
    assert.equal(tableOut.code, 0, tableOut.stderr);
    const lines = tableOut.stdout.trim().split('\n');
    assert.match(lines[0] as string, /^START\s+DEFINITION\s+SOURCE\s+JOB\s+QUEUE\s+WINDOW$/);
    assert.equal(lines.length, 1 + 300);
    assert.match(
      lines[1] as string,
      /^\d{4}\/\d\d\/\d\d \d\d:00:00 UTC\s+GLOBAL\.Report\s+Recurrence\s+\d+\s+GLOBAL\.Default\s+-$/,
    );
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /--until/);
  });
});

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULTS, loadServeConfig } from '../../src/config/config.ts';
import { runCli } from '../helpers/cli.ts';

describe('the configuration file', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'millrace-config-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));
  const file = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };

  test('TOML and YAML set every kind of option; flag > environment > file > default', async () => {
    const toml = await file(
      'a.toml',
      '[serve]\nport = 7171\nhost = "0.0.0.0"\nmetrics = false\nwebhook-allow = ["10.0.0.0/8", "hooks.internal"]\nhistory-days = 7\n\n[agent]\nslots = 4\n',
    );
    const c = await loadServeConfig({ config: toml }, {});
    assert.equal(c.port, 7171);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.metrics, false);
    assert.deepEqual(c.webhookAllow, ['10.0.0.0/8', 'hooks.internal']);
    assert.equal(c.historyRetentionDays, 7);
    assert.equal(c.context, DEFAULTS.context, 'default where nothing sets it');
    const env = { MILLRACE_PORT: '7272', MILLRACE_HOST: '127.0.0.2' };
    const viaEnv = await loadServeConfig({ config: toml }, env);
    assert.equal(viaEnv.port, 7272, 'environment over file');
    const viaFlag = await loadServeConfig({ config: toml, port: '7373' }, env);
    assert.equal(viaFlag.port, 7373, 'flag over environment');
    assert.equal(viaFlag.host, '127.0.0.2');
    const yaml = await file('b.yaml', 'serve:\n  port: 7474\n  log-format: pretty\nagent:\n  log-jobs: true\n');
    const y = await loadServeConfig({}, { MILLRACE_CONFIG: yaml });
    assert.equal(y.port, 7474);
    assert.equal(y.logFormat, 'pretty');
  });

  test('an unknown key or a bad value is refused naming the key and its line', async () => {
    const typo = await file('typo.toml', '# Millrace\n[serve]\nport = 7070\nhots = "0.0.0.0"\n');
    await assert.rejects(loadServeConfig({ config: typo }, {}), (e: Error) => {
      assert.match(e.message, /typo\.toml line 4: unknown key "hots" in \[serve\]/);
      return true;
    });
    const agentTypo = await file('agent.yaml', 'serve:\n  port: 7070\nagent:\n  slot: 4\n');
    await assert.rejects(
      loadServeConfig({ config: agentTypo }, {}),
      /agent\.yaml line 4: unknown key "slot" in \[agent\]/,
    );
    const section = await file('section.toml', '[server]\nport = 1\n');
    await assert.rejects(loadServeConfig({ config: section }, {}), /section\.toml line \d: unknown section "server"/);
    const bad = await file('bad.yaml', 'serve:\n  context: acme\n  port: 99999\n');
    await assert.rejects(loadServeConfig({ config: bad }, {}), /invalid "port" in .*bad\.yaml line 3: "99999"/);
    const shape = await file('shape.toml', '[serve]\nmetrics = "perhaps"\n');
    await assert.rejects(loadServeConfig({ config: shape }, {}), /"metrics" in .*shape\.toml line 2/);
    const syntax = await file('syntax.toml', '[serve]\nport = \n');
    await assert.rejects(loadServeConfig({ config: syntax }, {}), /syntax\.toml line 2/);
  });

  test('millrace serve refuses to start with a typo in its file: one line naming the key and the line', async () => {
    const typo = await file('serve.toml', '[serve]\ndata = "x"\nlog-levl = "debug"\n');
    const res = await runCli(['serve', '--config', typo]);
    assert.notEqual(res.code, 0);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^millrace: .*serve\.toml line 3: unknown key "log-levl" in \[serve\]/);
    const agent = await runCli(['agent'], { MILLRACE_CONFIG: typo });
    assert.notEqual(agent.code, 0, 'the agent checks the whole file too');
    assert.match(agent.stderr, /serve\.toml line 3: unknown key "log-levl"/);
  });
});

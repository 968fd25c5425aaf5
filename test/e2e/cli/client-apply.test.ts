import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { currentOf, diff, parseFile } from '../../../src/cli/client/manifest.ts';
import { backends } from '../../helpers/backends.ts';
import { runCli } from '../../helpers/cli.ts';
import { postCreated } from '../../helpers/jobs.ts';
import { type CliTarget, startCliTarget } from '../../helpers/cli-target.ts';
import type { TestServer } from '../../helpers/server.ts';

/**
 * Jobs as code (`millrace apply`, `millrace def export`) run as a user runs it, against a real listening server.
 * CLI invocations are few and run in parallel where they are independent: each one starts a Node process.
 */

const [backend] = backends();

// Each CLI call starts a Node process: on a loaded machine that alone can take tens of seconds.
const SLOW = { timeout: 360_000 };
const cli = (args: string[], extraEnv: Record<string, string>) => runCli(args, extraEnv, 180_000);

describe('millrace apply against a running server', () => {
  let t: TestServer;
  let target: CliTarget;
  let dir = '';
  let env: Record<string, string> = {};
  before(async () => {
    target = await startCliTarget(backend as NonNullable<typeof backend>, 'apply-e2e', { localAgent: false });
    ({ t, env, dir } = target);
  });
  after(() => target.close());

  test(
    'apply creates in dependency order, changes nothing the second time, previews with --dry-run, prunes',
    SLOW,
    async () => {
      const files = join(dir, 'objects');
      mkdirSync(files);
      const chainFile = join(files, '0-chain.json');
      const mainFile = join(files, 'etl.yaml');
      // The chain comes first in file order; apply still creates what it calls before it.
      writeFileSync(
        chainFile,
        JSON.stringify({
          Type: 'JobChain',
          Key: 'APP.Flow',
          Steps: [{ Name: 'Load', Calls: [{ JobDefinition: 'APP.Load' }, { JobDefinition: 'APP.Extra' }] }],
        }),
      );
      const yaml = (withExtra: boolean) => `Type: JobDefinition
Key: APP.Load
DefaultQueue: APP.Nightly
Script: |
  echo loading
  echo done
---
Type: Queue
Key: APP.Nightly
ExecutionSize: 4
---
Type: QueueProvider
Key: GLOBAL.Local.APP.Nightly
---
Type: Partition
Key: APP
${withExtra ? '---\nType: JobDefinition\nKey: APP.Extra\nScript: echo extra\n' : ''}`;
      writeFileSync(mainFile, yaml(true));
      const first = await cli(['apply', '-f', files], env);
      assert.equal(first.code, 0, first.stderr);
      const created = first.stdout.trim().split('\n');
      assert.equal(created.at(-1), '6 created, 0 changed, 0 unchanged');
      const at = (object: string) => created.indexOf(`created   ${object}`);
      const before = (a: string, b: string) =>
        assert.ok(at(a) >= 0 && at(a) < at(b), `${a} before ${b}:\n${first.stdout}`);
      assert.equal(at('Partition APP'), 0);
      before('Queue APP.Nightly', 'JobDefinition APP.Load');
      before('Queue APP.Nightly', 'QueueProvider GLOBAL.Local.APP.Nightly');
      before('JobDefinition APP.Load', 'JobChain APP.Flow');
      before('JobDefinition APP.Extra', 'JobChain APP.Flow');
      assert.equal((await t.req('GET', '/Queue/APP.Nightly')).json.ExecutionSize, 4);
      // Each object apply created is in the audit log once, by the key's user over the JSON interface (docs/architecture.md §18).
      const audited = (await t.req('GET', '/AuditEntry?Action=create&User=admin&Limit=100')).json.items as Array<{
        ObjectType: string;
        ObjectKey: string;
        Interface: string;
      }>;
      const applied = audited.filter((e) => e.ObjectKey === 'APP' || e.ObjectKey.includes('APP.'));
      assert.deepEqual(applied.map((e) => `${e.ObjectType} ${e.ObjectKey} ${e.Interface}`).sort(), [
        'JobChain APP.Flow json',
        'JobDefinition APP.Extra json',
        'JobDefinition APP.Load json',
        'Partition APP json',
        'Queue APP.Nightly json',
        'QueueProvider GLOBAL.Local.APP.Nightly json',
      ]);
      // Something outside the applied partitions, and a change made by hand.
      await postCreated(t, '/Partition/OTHER', {});
      await postCreated(t, '/Queue/OTHER.Keep', {});
      await postCreated(t, '/JobDefinition/APP.Manual', { Script: 'echo by hand' });

      const [second, exported] = await Promise.all([
        cli(['apply', '-f', files, '-o', 'json'], env),
        cli(['def', 'export', '--partition', 'APP', '--dir', join(dir, 'exported')], env),
      ]);
      assert.equal(second.code, 0, second.stderr);
      const outcomes = JSON.parse(second.stdout) as Array<{ action: string }>;
      assert.equal(outcomes.length, 6);
      assert.ok(
        outcomes.every((o) => o.action === 'unchanged'),
        second.stdout,
      );
      assert.equal(exported.code, 0, exported.stderr);
      // def export wrote files that apply reads (with apply's own reader) as the objects the server has.
      const back = readdirSync(join(dir, 'exported')).flatMap((f) =>
        parseFile(readFileSync(join(dir, 'exported', f), 'utf8'), f),
      );
      assert.deepEqual(back.map((m) => `${m.type.name}:${m.key}`).sort(), [
        'JobChain:APP.Flow',
        'JobDefinition:APP.Extra',
        'JobDefinition:APP.Flow',
        'JobDefinition:APP.Load',
        'JobDefinition:APP.Manual',
      ]);
      for (const m of back) {
        const onServer = await t.req('GET', `/${m.type.name}/${m.key}`);
        assert.deepEqual(diff(currentOf(m.type, onServer.json), m.desired), [], `${m.type.name} ${m.key} reads back`);
      }

      assert.equal((await t.req('PUT', '/Queue/APP.Nightly', { body: { ExecutionSize: 9 } })).status, 200);
      writeFileSync(mainFile, yaml(false));
      writeFileSync(
        chainFile,
        JSON.stringify({
          Type: 'JobChain',
          Key: 'APP.Flow',
          Steps: [{ Name: 'Load', Calls: [{ JobDefinition: 'APP.Load' }] }],
        }),
      );
      const dry = await cli(['apply', '-f', files, '--prune', '--dry-run'], env);
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /^changed {3}Queue APP.Nightly \(dry run\)\n {4}ExecutionSize: 9 → 4$/m);
      assert.match(dry.stdout, /^changed {3}JobChain APP.Flow \(dry run\)$/m);
      assert.match(dry.stdout, /^deleted {3}JobDefinition APP.Extra \(dry run\)$/m);
      assert.match(dry.stdout, /^deleted {3}JobDefinition APP.Manual \(dry run\)$/m);
      assert.match(dry.stdout, /nothing was changed/);
      assert.equal((await t.req('GET', '/Queue/APP.Nightly')).json.ExecutionSize, 9, 'a dry run changes nothing');
      assert.equal((await t.req('GET', '/JobDefinition/APP.Extra')).status, 200, 'a dry run deletes nothing');

      const pruned = await cli(['apply', '-f', files, '--prune'], env);
      assert.equal(pruned.code, 0, pruned.stderr);
      // The chain stops calling APP.Extra before APP.Extra goes.
      const lines = pruned.stdout.trim().split('\n');
      assert.ok(lines.indexOf('changed   JobChain APP.Flow') < lines.indexOf('deleted   JobDefinition APP.Extra'));
      assert.equal(lines.at(-1), '0 created, 2 changed, 3 unchanged, 2 deleted');
      assert.equal((await t.req('GET', '/JobDefinition/APP.Extra')).status, 404);
      assert.equal((await t.req('GET', '/JobDefinition/APP.Manual')).status, 404);
      assert.equal((await t.req('GET', '/Queue/APP.Nightly')).json.ExecutionSize, 4);
      // Other partitions and built-in objects (the GLOBAL queue providers share a partition with the applied one).
      assert.equal((await t.req('GET', '/Queue/OTHER.Keep')).status, 200);
      assert.equal((await t.req('GET', '/QueueProvider/GLOBAL.Local.GLOBAL.Default')).status, 200);
      assert.equal((await t.req('GET', '/QueueProvider/GLOBAL.System.GLOBAL.System')).status, 200);
    },
  );

  test(
    '--dry-run refuses a missing partition or reference as apply does, and says nothing is created',
    SLOW,
    async () => {
      const files = join(dir, 'incomplete');
      mkdirSync(files);
      // No Partition document for NEW, and a queue that exists nowhere.
      writeFileSync(
        join(files, 'new.yaml'),
        'Type: Queue\nKey: NEW.Nightly\n---\nType: JobDefinition\nKey: NEW.Load\nDefaultQueue: NEW.Nightly\nScript: echo\n',
      );
      writeFileSync(
        join(files, 'ref.yaml'),
        'Type: JobDefinition\nKey: GLOBAL.Orphan\nDefaultQueue: GLOBAL.Missing\nScript: echo\n',
      );
      const [dryNew, realNew, dryRef, realRef] = await Promise.all([
        cli(['apply', '-f', join(files, 'new.yaml'), '--dry-run'], env),
        cli(['apply', '-f', join(files, 'new.yaml')], env),
        cli(['apply', '-f', join(files, 'ref.yaml'), '--dry-run'], env),
        cli(['apply', '-f', join(files, 'ref.yaml')], env),
      ]);
      for (const r of [dryNew, realNew]) {
        assert.equal(r.code, 1, r.stdout);
        assert.match(r.stderr, /Queue NEW\.Nightly\): .*404 Unable to find object Partition:NEW/);
        assert.doesNotMatch(r.stdout, /^created/m);
      }
      for (const r of [dryRef, realRef]) {
        assert.equal(r.code, 1, r.stdout);
        assert.match(
          r.stderr,
          /JobDefinition GLOBAL\.Orphan\): .*400 Field "DefaultQueue": Queue:GLOBAL\.Missing does not exist/,
        );
      }
      assert.match(dryNew.stdout, /0 created.*\(dry run: nothing was changed\)/);
      assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.Orphan')).status, 404);

      // With the partition among the files, the dry run plans all three, in order, and still creates nothing.
      writeFileSync(join(files, 'partition.yaml'), 'Type: Partition\nKey: NEW\n');
      const planned = await cli(
        ['apply', '-f', join(files, 'new.yaml'), '-f', join(files, 'partition.yaml'), '--dry-run'],
        env,
      );
      assert.equal(planned.code, 0, planned.stderr);
      assert.match(planned.stdout, /3 created, 0 changed, 0 unchanged \(dry run/);
      assert.equal((await t.req('GET', '/Partition/NEW')).status, 404);
    },
  );
  test(
    'a Deadline is applied like every type: after the chain, window and escalation it names; unchanged the second time',
    SLOW,
    async () => {
      const files = join(dir, 'deadline');
      mkdirSync(files);
      // The deadline comes first in the file; apply orders by the registry's references, with no code of its own.
      writeFileSync(
        join(files, 'sla.yaml'),
        `Type: Deadline
Key: SLA.Reports_By6
Description: Morning reports
JobDefinition: SLA.Nightly
EndBy: "06:00"
TimeZone: Europe/Amsterdam
TimeWindow: SLA.Weekdays
LeadMinutes: 30
AlertEscalation: SLA.Oncall
---
Type: JobChain
Key: SLA.Nightly
Steps: []
---
Type: TimeWindow
Key: SLA.Weekdays
TimeZone: Europe/Amsterdam
Elements:
  - FromWeekday: Monday
    UntilWeekday: Friday
---
Type: AlertEscalation
Key: SLA.Oncall
Recipients:
  - Kind: Email
    Address: oncall@example.com
---
Type: Partition
Key: SLA
`,
      );
      const first = await cli(['apply', '-f', files], env);
      assert.equal(first.code, 0, first.stderr);
      const lines = first.stdout.trim().split('\n');
      const at = (object: string) => lines.indexOf(`created   ${object}`);
      for (const before of ['JobChain SLA.Nightly', 'TimeWindow SLA.Weekdays', 'AlertEscalation SLA.Oncall'])
        assert.ok(at(before) >= 0 && at(before) < at('Deadline SLA.Reports_By6'), first.stdout);
      const stored = (await t.req('GET', '/Deadline/SLA.Reports_By6')).json;
      assert.deepEqual(
        [stored.JobDefinition, stored.EndBy, stored.TimeWindow, stored.LeadMinutes, stored.AlertEscalation],
        ['SLA.Nightly', '06:00', 'SLA.Weekdays', 30, 'SLA.Oncall'],
      );
      const second = await cli(['apply', '-f', files], env);
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stdout, /^0 created, 0 changed, \d+ unchanged$/m);
    },
  );
});

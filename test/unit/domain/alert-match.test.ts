import assert from 'node:assert/strict';
import { test } from 'node:test';
import { delayMs, globMatch, jobKind, jobSourceEntry, serverSourceMatches } from '../../../src/domain/alert-match.ts';
import type { JobRecord } from '../../../src/domain/job.ts';
import { SOURCE_DEFAULTS } from '../../../src/engine/alerts.ts';

const job = (definition: string, extra: Partial<JobRecord['data']> = {}, type = 'BASH') =>
  ({ definition, data: { spec: { type }, ...extra } }) as unknown as JobRecord;

const source = (over: Record<string, unknown> = {}) => ({
  NamePattern: 'Load*',
  PartitionPattern: '*',
  Statuses: [{ Status: 'Error', DelayAmount: 0, DelayUnits: 'Minutes', Message: null }],
  AppliesToChains: true,
  AppliesToSteps: false,
  AppliesToProcesses: true,
  Enabled: true,
  ...over,
});

test('globs: * any run, ? one character, case-insensitive, regex characters literal', () => {
  assert.ok(globMatch('Load*', 'LoadSales'));
  assert.ok(globMatch('load*', 'LoadSales'));
  assert.ok(globMatch('L?ad', 'Lead'));
  assert.ok(!globMatch('L?ad', 'Leaad'));
  assert.ok(globMatch('*', ''));
  assert.ok(!globMatch('a.c', 'abc'), 'a dot is a dot');
  assert.ok(!globMatch('(a+)+', 'aaaa'), 'no regular expressions');
});

test('a job source matches on definition name, partition, status and the kind of job', () => {
  assert.equal(jobSourceEntry(source(), job('GLOBAL.LoadSales'), 'Error', SOURCE_DEFAULTS)?.Status, 'Error');
  assert.equal(jobSourceEntry(source(), job('GLOBAL.LoadSales'), 'Completed', SOURCE_DEFAULTS), undefined);
  assert.equal(jobSourceEntry(source(), job('GLOBAL.Unload'), 'Error', SOURCE_DEFAULTS), undefined);
  assert.equal(
    jobSourceEntry(source({ PartitionPattern: 'FIN*' }), job('GLOBAL.LoadSales'), 'Error', SOURCE_DEFAULTS),
    undefined,
  );
  assert.ok(jobSourceEntry(source({ PartitionPattern: 'FIN*' }), job('FINANCE.LoadSales'), 'Error', SOURCE_DEFAULTS));
  assert.equal(
    jobSourceEntry(source({ Enabled: false }), job('GLOBAL.LoadSales'), 'Error', SOURCE_DEFAULTS),
    undefined,
  );
  const step = job('GLOBAL.LoadChain', { chain: { step: { index: 0, runs: 1 } } }, 'JobChain');
  assert.equal(jobKind(step), 'AppliesToSteps');
  assert.equal(jobSourceEntry(source(), step, 'Error', SOURCE_DEFAULTS), undefined, 'steps only when AppliesToSteps');
  assert.ok(jobSourceEntry(source({ AppliesToSteps: true }), step, 'Error', SOURCE_DEFAULTS));
  assert.equal(jobKind(job('GLOBAL.LoadChain', {}, 'JobChain')), 'AppliesToChains');
  assert.equal(
    jobSourceEntry(
      source({ AppliesToChains: false }),
      job('GLOBAL.LoadChain', {}, 'JobChain'),
      'Error',
      SOURCE_DEFAULTS,
    ),
    undefined,
  );
});

test('delays in their units', () => {
  assert.equal(
    delayMs({ Status: 'Queued', DelayAmount: 2, DelayUnits: 'Seconds', Message: null }, SOURCE_DEFAULTS),
    2000,
  );
  assert.equal(
    delayMs({ Status: 'Queued', DelayAmount: 3, DelayUnits: null, Message: null }, SOURCE_DEFAULTS),
    180_000,
  );
  assert.equal(delayMs({ Status: 'Queued', DelayAmount: null, DelayUnits: 'Days', Message: null }, SOURCE_DEFAULTS), 0);
});

test('a process server source matches name and partition globs and the statuses listed', () => {
  const s = { NamePattern: 'Agent_*', PartitionPattern: 'GLOBAL', Statuses: ['Unknown', 'Shutdown'], Enabled: true };
  assert.ok(serverSourceMatches(s, 'GLOBAL.Agent_7', 'Unknown', SOURCE_DEFAULTS));
  assert.ok(!serverSourceMatches(s, 'GLOBAL.Agent_7', 'Running', SOURCE_DEFAULTS));
  assert.ok(!serverSourceMatches(s, 'OTHER.Agent_7', 'Unknown', SOURCE_DEFAULTS));
  assert.ok(!serverSourceMatches({ ...s, Enabled: false }, 'GLOBAL.Agent_7', 'Unknown', SOURCE_DEFAULTS));
});

test('a status entry naming a Cause matches only a change with that history cause, before an entry naming none', () => {
  const killed = (Message: string, Cause?: string) => ({
    Status: 'Killed',
    DelayAmount: 0,
    DelayUnits: null,
    Message,
    Cause,
  });
  const onlyLimit = source({ Statuses: [killed('too long', 'maxruntime')] });
  assert.equal(
    jobSourceEntry(onlyLimit, job('GLOBAL.LoadSales'), 'Killed', SOURCE_DEFAULTS, 'maxruntime')?.Message,
    'too long',
  );
  assert.equal(jobSourceEntry(onlyLimit, job('GLOBAL.LoadSales'), 'Killed', SOURCE_DEFAULTS, 'kill'), undefined);
  assert.equal(jobSourceEntry(onlyLimit, job('GLOBAL.LoadSales'), 'Killed', SOURCE_DEFAULTS), undefined);
  const both = source({ Statuses: [killed('killed'), killed('too long', 'maxruntime')] });
  assert.equal(
    jobSourceEntry(both, job('GLOBAL.LoadSales'), 'Killed', SOURCE_DEFAULTS, 'maxruntime')?.Message,
    'too long',
  );
  assert.equal(jobSourceEntry(both, job('GLOBAL.LoadSales'), 'Killed', SOURCE_DEFAULTS, 'kill')?.Message, 'killed');
});

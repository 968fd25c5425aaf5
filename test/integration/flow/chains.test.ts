import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import {
  act,
  getJob,
  type JobJson,
  postCreated as post,
  submit,
  utcMillis,
  waitForStatus,
} from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * Chains from a client's side (type JobChain), with System_Sleep calls that run inside the
 * server in real time. A chain's step and call jobs are created at submit, right after the chain job, in the order
 * step 1, its calls, step 2, …; each names its parent in ParentJob.
 */

const sleepCall = (ms: number | string, extra: Record<string, unknown> = {}) => ({
  JobDefinition: 'GLOBAL.System_Sleep',
  ParameterMappings: [{ Parameter: 'MilliSeconds', Source: 'Value', Value: String(ms) }],
  ...extra,
});

/** A chain definition with parameters, and its steps. */
async function chain(
  t: TestServer,
  name: string,
  steps: unknown[],
  extra: Record<string, unknown> = {},
  params: unknown[] = [],
) {
  await post(t, `/JobDefinition/GLOBAL.${name}`, {
    JobDefinitionType: 'JobChain',
    DefaultQueue: 'GLOBAL.System',
    Parameters: params,
  });
  await post(t, `/JobChain/GLOBAL.${name}`, { Steps: steps, ...extra });
}

/** The jobs made for a chain submitted as `chainId`: `n` jobs after it. */
async function family(t: TestServer, chainId: number, n: number): Promise<JobJson[]> {
  const jobs: JobJson[] = [];
  for (let id = chainId + 1; id <= chainId + n; id++) jobs.push(await getJob(t, id));
  return jobs;
}

for (const backend of backends()) {
  describe(`Chains (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      // A System definition the server does not know ends Error at once: a dependable failing call.
      await post(t, '/JobDefinition/GLOBAL.Fails', { JobDefinitionType: 'System', DefaultQueue: 'GLOBAL.System' });
    });
    after(() => t.close());

    test('steps run one after another, calls of a step in parallel; the chain waits, then Completed', async () => {
      await chain(t, 'Flow', [
        // Proven afterwards from the run times and histories the server wrote, not by polls that must catch a
        // moment: four seconds leave a loaded machine time to start both calls of a step together.
        { Name: 'First', Calls: [sleepCall(4000), sleepCall(4000)] },
        { Name: 'Second', Calls: [sleepCall(10)] },
      ]);
      const c = await submit(t, 'GLOBAL.Flow');
      const [s1, c1, c2, s2, c3] = await family(t, c.jobId, 5);
      assert.deepEqual(
        [s1.ParentJob, c1.ParentJob, c2.ParentJob, s2.ParentJob, c3.ParentJob],
        [c.jobId, s1.jobId, s1.jobId, c.jobId, s2.jobId],
      );
      const done = await waitForStatus(t, c.jobId, 'Completed');
      const [e1, f1, f2, e2, f3] = await family(t, c.jobId, 5);
      assert.deepEqual([e1.Status, f1.Status, f2.Status, e2.Status, f3.Status], Array(5).fill('Completed'));
      const start = (j: JobJson) => utcMillis(j.RunStart);
      const end = (j: JobJson) => utcMillis(j.RunEnd);
      // The calls of a step in parallel: each started before the other ended.
      assert.ok(start(f1) < end(f2) && start(f2) < end(f1), `calls of a step ran apart: ${JSON.stringify([f1, f2])}`);
      // The second step after the first: its call started only once both calls had ended.
      assert.ok(start(f3) >= Math.max(end(f1), end(f2)), 'the second step waited for the first');
      const statuses = async (id: number) =>
        ((await t.req('GET', `/Job/${id}/history`)).json.items as JobJson[]).map((e) => e.ToStatus);
      assert.ok((await statuses(c.jobId)).includes('Waiting'), 'the chain waited for its steps');
      assert.equal((await statuses(c3.jobId))[0], 'Chained', "the second step's call was Chained first");
      assert.equal(done.ProcessServer, 'GLOBAL.System');
    });

    test('mappings from the chain and literal values; preconditions skip; disabled calls end Ignored', async () => {
      await chain(
        t,
        'Mapped',
        [
          {
            Name: 'A',
            Calls: [
              {
                JobDefinition: 'GLOBAL.System_Sleep',
                ParameterMappings: [{ Parameter: 'MilliSeconds', Source: 'ChainParameter', ChainParameter: 'Wait' }],
              },
            ],
          },
          {
            Name: 'B',
            Calls: [
              sleepCall(7),
              sleepCall(5, { Precondition: { Expression: 'Wait > 1000' } }),
              sleepCall(5, { SubmitDisabled: true }),
            ],
          },
          { Name: 'C', Precondition: { Expression: "Mode == 'full'" }, Calls: [sleepCall(5)] },
        ],
        {},
        [
          { Name: 'Wait', DataType: 'Number', DefaultValue: '20' },
          { Name: 'Mode', DataType: 'String', DefaultValue: 'quick' },
        ],
      );
      const c = await submit(t, 'GLOBAL.Mapped', { JobParameters: [{ Name: 'Wait', InValueNumber: 40 }] });
      const done = await waitForStatus(t, c.jobId, 'Completed');
      assert.equal(done.JobParameters.find((p: JobJson) => p.Name === 'Wait').InValueNumber, 40);
      const [sA, a1, sB, b1, b2, b3, sC, c1] = await family(t, c.jobId, 8);
      assert.equal(a1.JobParameters[0].InValueNumber, 40, 'mapped from the chain parameter');
      assert.equal(b1.JobParameters[0].InValueNumber, 7, 'a literal value, converted to the parameter type');
      assert.deepEqual(
        [sA.Status, sB.Status, b1.Status, b2.Status, b3.Status],
        ['Completed', 'Completed', 'Completed', 'Skipped', 'Ignored'],
      );
      assert.deepEqual([sC.Status, c1.Status], ['Skipped', 'Skipped']);
    });

    test('no handler: a failing call ends step and chain in Error, later steps Skipped', async () => {
      await chain(t, 'Failing', [
        { Name: 'Bad', Calls: [{ JobDefinition: 'GLOBAL.Fails' }, sleepCall(5)] },
        { Name: 'Never', Calls: [sleepCall(5)] },
      ]);
      const c = await submit(t, 'GLOBAL.Failing');
      await waitForStatus(t, c.jobId, 'Error');
      const [s1, bad, ok, s2, later] = await family(t, c.jobId, 5);
      assert.deepEqual(
        [s1.Status, bad.Status, ok.Status, s2.Status, later.Status],
        ['Error', 'Error', 'Completed', 'Skipped', 'Skipped'],
      );
    });

    test('status handlers: Error → Continue on the step, chain-wide Error → MarkCompleted', async () => {
      await chain(t, 'Handled', [
        {
          Name: 'Tolerant',
          Calls: [{ JobDefinition: 'GLOBAL.Fails' }],
          StatusHandlers: [{ Status: 'Error', Action: 'Continue' }],
        },
        { Name: 'Next', Calls: [sleepCall(5)] },
      ]);
      const c = await submit(t, 'GLOBAL.Handled');
      await waitForStatus(t, c.jobId, 'Completed');
      const [s1, , s2, next] = await family(t, c.jobId, 4);
      assert.deepEqual([s1.Status, s2.Status, next.Status], ['Error', 'Completed', 'Completed']);

      await chain(
        t,
        'Rescued',
        [
          { Name: 'Bad', Calls: [{ JobDefinition: 'GLOBAL.Fails' }] },
          { Name: 'After', Calls: [sleepCall(5)] },
        ],
        { StatusHandlers: [{ Status: 'Error', Action: 'MarkCompleted' }] },
      );
      const r = await submit(t, 'GLOBAL.Rescued');
      await waitForStatus(t, r.jobId, 'Completed');
      const [, , after1, after2] = await family(t, r.jobId, 4);
      assert.deepEqual([after1.Status, after2.Status], ['Skipped', 'Skipped']);
    });

    test('RestartStep runs the step again up to MaxRestarts, then the chain ends Error', async () => {
      await chain(t, 'Retry', [
        {
          Name: 'Flaky',
          MaxRestarts: 3,
          Calls: [{ JobDefinition: 'GLOBAL.Fails' }],
          StatusHandlers: [{ Status: 'Error', Action: 'RestartStep' }],
        },
      ]);
      const c = await submit(t, 'GLOBAL.Retry');
      await waitForStatus(t, c.jobId, 'Error');
      const [step, first, ...rest] = await family(t, c.jobId, 4);
      assert.equal(step.Status, 'Error');
      assert.equal(first.Status, 'Error');
      assert.deepEqual(
        rest.map((j) => [j.ParentJob, j.Status]),
        [
          [step.jobId, 'Error'],
          [step.jobId, 'Error'],
        ],
      );
      assert.equal((await t.req('GET', `/Job/${c.jobId + 5}`)).status, 404, 'three runs in all');
    });

    test('GotoStep jumps over steps; a step can be disabled before it runs', async () => {
      await chain(t, 'Jumping', [
        {
          Name: 'One',
          Calls: [sleepCall(5)],
          StatusHandlers: [{ Status: 'Completed', Action: 'GotoStep', GotoStep: 'Three' }],
        },
        { Name: 'Two', Calls: [sleepCall(5)] },
        { Name: 'Three', Calls: [sleepCall(200)] },
        { Name: 'Four', Calls: [sleepCall(5)] },
      ]);
      const c = await submit(t, 'GLOBAL.Jumping');
      const [, , , , , , s4] = await family(t, c.jobId, 7);
      assert.equal((await act(t, s4.jobId, 'disable')).status, 200);
      await waitForStatus(t, c.jobId, 'Completed');
      const [s1, , s2, two, s3, , s4b, four] = await family(t, c.jobId, 8);
      assert.deepEqual(
        [s1.Status, s2.Status, two.Status, s3.Status, s4b.Status, four.Status],
        ['Completed', 'Skipped', 'Skipped', 'Completed', 'Ignored', 'Ignored'],
      );
    });

    test('kill reaches the running calls and cancels what has not started', async () => {
      await chain(t, 'Long', [
        { Name: 'Slow', Calls: [sleepCall(60_000)] },
        { Name: 'Later', Calls: [sleepCall(5)] },
      ]);
      const c = await submit(t, 'GLOBAL.Long');
      const [, slow] = await family(t, c.jobId, 2);
      await waitForStatus(t, slow.jobId, 'Running');
      assert.equal((await act(t, c.jobId, 'kill')).status, 200);
      await waitForStatus(t, c.jobId, 'Killed');
      const [s1, call, s2, later] = await family(t, c.jobId, 4);
      assert.deepEqual([s1.Status, call.Status, s2.Status, later.Status], ['Killed', 'Killed', 'Canceled', 'Canceled']);
    });

    test('cancel of a chain that has not started cancels its children', async () => {
      await chain(t, 'Held', [{ Name: 'Only', Calls: [sleepCall(5)] }]);
      const c = await submit(t, 'GLOBAL.Held', { HoldOnSubmit: true });
      assert.equal(c.Status, 'Held');
      assert.equal((await act(t, c.jobId, 'cancel')).status, 200);
      const [step, call] = await family(t, c.jobId, 2);
      assert.deepEqual(
        [(await getJob(t, c.jobId)).Status, step.Status, call.Status],
        ['Canceled', 'Canceled', 'Canceled'],
      );
    });

    test('a chain calls another chain', async () => {
      await chain(t, 'Inner', [{ Name: 'In', Calls: [sleepCall(5), sleepCall(5)] }]);
      await chain(t, 'Outer', [
        { Name: 'Out', Calls: [{ JobDefinition: 'GLOBAL.Inner' }] },
        { Name: 'End', Calls: [sleepCall(5)] },
      ]);
      const c = await submit(t, 'GLOBAL.Outer');
      await waitForStatus(t, c.jobId, 'Completed');
      const [sOut, inner, sIn, i1, i2, sEnd, end] = await family(t, c.jobId, 7);
      assert.equal(inner.JobDefinition, 'GLOBAL.Inner');
      assert.equal(sIn.ParentJob, inner.jobId);
      assert.deepEqual(
        [sOut, inner, sIn, i1, i2, sEnd, end].map((j) => j.Status),
        Array(7).fill('Completed'),
      );
    });

    test('a chain of a definition without JobChain steps is refused at submit', async () => {
      await post(t, '/JobDefinition/GLOBAL.Hollow', { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' });
      const res = await t.req('POST', '/Job/GLOBAL.Hollow');
      assert.equal(res.status, 400, res.body);
      assert.match(res.json.message, /JobChain:GLOBAL.Hollow/);
    });
  });
}

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Command } from 'commander';
import { registerJobCommands } from '../../../src/cli/client/job-commands.ts';
import { JOB_ACTIONS, jobAction, notApplicableMessage } from '../../../src/domain/job-actions.ts';
import { JOB_STATUS_NAMES } from '../../../src/domain/job-status.ts';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, submitSleep } from '../../helpers/jobs.ts';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * The job action table (src/domain/job-actions.ts) is what every surface offers: the route's enum and its 400, the
 * 409, the OpenAPI document, the dashboard's buttons and the CLI's verbs. Each check reads the surface as its user
 * meets it and compares it with the table, so a surface that keeps a list of its own fails here.
 */

type Operation = {
  summary: string;
  description: string;
  parameters: Array<{ name: string; in: string; schema: { enum?: string[] } }>;
};

const [sqlite] = backends();
describe('the job action table drives every surface', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer(sqlite as NonNullable<typeof sqlite>);
    const res = await t.req('POST', '/JobDefinition/GLOBAL.Echo', { body: { Script: 'echo hi' } });
    assert.equal(res.status, 201, res.body);
  });
  after(() => t.close());

  test('the OpenAPI document lists exactly the table’s actions, each with statuses, privileges, body and answer', () => {
    const doc = t.server.app.swagger() as unknown as { paths: Record<string, Record<string, Operation>> };
    const op = doc.paths[`${t.base}/Job/{key}/{action}`]?.put as Operation;
    assert.deepEqual(op.parameters.find((p) => p.name === 'action')?.schema.enum, JOB_ACTIONS);
    const lines = op.description.split('\n').filter((l) => l.startsWith('- `'));
    assert.deepEqual(
      lines.map((l) => /^- `([^`]+)`/.exec(l)?.[1]),
      JOB_ACTIONS,
    );
    for (const [i, name] of JOB_ACTIONS.entries()) {
      const a = jobAction(name);
      const line = lines[i] as string;
      assert.ok(line.includes(`Applies in ${a.applies.join(', ')}.`), line);
      for (const p of a.privileges) assert.ok(line.includes(`${p.type} ${p.privilege}`), line);
      assert.ok(line.includes(a.creates ? 'Answers 201' : 'Answers 200'), line);
    }
    const creating = JOB_ACTIONS.filter((a) => jobAction(a).creates);
    assert.match(op.summary, new RegExp(`${creating.join(' and ')} answer the new job`));
  });

  test('the route refuses a name not in the table (400 listing the table) and each action outside its statuses (409)', async () => {
    const job = await submitSleep(t, 0, { HoldOnSubmit: true });
    assert.equal((await getJob(t, job.jobId)).Status, 'Held');
    assertError(await act(t, job.jobId, 'touch'), 400, `Unknown action "touch"; one of ${JOB_ACTIONS.join(', ')}`);
    const refused = JOB_ACTIONS.filter((a) => !jobAction(a).applies.includes('Held'));
    assert.ok(refused.length > 0);
    for (const action of refused)
      assertError(await act(t, job.jobId, action), 409, notApplicableMessage(action, job.jobId, 'Held'));
    assert.equal((await getJob(t, job.jobId)).Status, 'Held', 'no refused action changed the job');
    assert.equal((await act(t, job.jobId, 'cancel')).status, 200);
  });

  test('the dashboard’s session carries the table: statuses per action and the buttons with their privileges', async () => {
    const ui = '/millrace/ui';
    const signIn = await t.server.app.inject({
      method: 'POST',
      url: `${ui}/api/session`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ user: 'admin', password: ADMIN_PASSWORD }),
    });
    assert.equal(signIn.statusCode, 200, signIn.body);
    const me = signIn.json() as {
      actions: Record<string, string[]>;
      actionButtons: Array<{ name: string; label: string; privileges: unknown[]; creates: boolean }>;
    };
    assert.deepEqual(Object.keys(me.actions), JOB_ACTIONS);
    for (const name of JOB_ACTIONS)
      assert.deepEqual(
        me.actions[name],
        JOB_STATUS_NAMES.filter((s) => jobAction(name).applies.includes(s)),
      );
    const withButton = JOB_ACTIONS.filter((a) => jobAction(a).button);
    assert.deepEqual(
      me.actionButtons.map((b) => b.name),
      withButton,
    );
    for (const b of me.actionButtons) {
      const a = jobAction(b.name as (typeof JOB_ACTIONS)[number]);
      assert.equal(b.label, a.button?.label);
      assert.deepEqual(b.privileges, a.privileges);
      assert.equal(b.creates, a.creates);
    }
  });

  test('the CLI’s `millrace job` verbs that act on jobs are the table’s verbs', () => {
    const program = new Command('millrace');
    registerJobCommands(program);
    const job = program.commands.find((c) => c.name() === 'job');
    const names = new Set(job?.commands.map((c) => c.name()));
    assert.deepEqual(
      JOB_ACTIONS.filter((a) => names.has(a)),
      JOB_ACTIONS.filter((a) => jobAction(a).verb === true),
    );
    assert.ok(names.has('hold') && names.has('runnow') && !names.has('updateJob'));
  });
});

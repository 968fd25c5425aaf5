import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { suiteServer } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';

const KEY = 'crash-test-admin-key-0123456789';
const FINAL = ['Completed', 'Error', 'Killed', 'Canceled', 'Unknown'];

/**
 * Crash recovery with a real `millrace serve` killed by SIGKILL: no acknowledged submit is lost,
 * and jobs running on the agent when the server died get their real final status, having run exactly once
 * (each run appends `jobId:attempt:pid` to a marker file).
 */
for (const backend of backends()) {
  describe(`server killed with SIGKILL (${backend.name})`, () => {
    const server = suiteServer(backend, { MILLRACE_ADMIN_API_KEY: KEY });
    const { api, start } = server;
    const crash = async () => {
      const gone = new Promise((r) => server.serve.child.once('exit', r));
      server.serve.child.kill('SIGKILL');
      await gone;
    };

    test('jobs running on the agent survive the crash and report their real outcome once', async () => {
      const marker = join(server.db.dataDir, 'markers.txt');
      // The jobs run until the test lets them go (the file `go`), after the crash: all six Running is a state to see.
      const go = join(server.db.dataDir, 'crash-go');
      const r = await api('POST', '/JobDefinition/GLOBAL.Marked', {
        JobDefinitionType: 'BASH',
        Script: `echo "$MILLRACE_JOB_ID:$MILLRACE_ATTEMPT:$$" >> ${marker}; while [ ! -e ${go} ]; do sleep 0.1; done; exit $((MILLRACE_JOB_ID % 3))`,
        ReturncodeMapToCompleted: '0,1',
      });
      assert.equal(r.status, 201, r.body);
      const ids: number[] = [];
      for (let i = 0; i < 6; i++) ids.push((await api('POST', '/Job/GLOBAL.Marked')).json.jobId);
      await waitFor('all jobs Running', async () => {
        const s = await Promise.all(ids.map(async (id) => (await api('GET', `/Job/${id}`)).json.Status));
        return s.every((x) => x === 'Running') ? true : undefined;
      });
      await crash();
      writeFileSync(go, '');
      await start();
      const jobs = await waitFor(
        'every job final after the restart',
        async () => {
          const all = await Promise.all(ids.map(async (id) => (await api('GET', `/Job/${id}`)).json));
          return all.every((j) => FINAL.includes(j.Status)) ? all : undefined;
        },
        30_000,
      );
      for (const j of jobs) {
        const rc = j.jobId % 3;
        assert.equal(j.ReturnCode, rc, JSON.stringify(j));
        assert.equal(j.Status, rc === 2 ? 'Error' : 'Completed', JSON.stringify(j));
      }
      const lines = readFileSync(marker, 'utf8').trim().split('\n');
      for (const id of ids)
        assert.equal(lines.filter((l) => l.startsWith(`${id}:`)).length, 1, `Job ${id} ran once: ${lines}`);
    });

    test('every submit answered 201 before the crash exists after the restart', async () => {
      const acknowledged: number[] = [];
      let stop = false;
      const submitter = async () => {
        while (!stop) {
          try {
            const r = await api('POST', '/Job/GLOBAL.System_Sleep', {
              JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }],
            });
            if (r.status === 201) acknowledged.push(r.json.jobId);
          } catch {
            return; // the server is gone
          }
        }
      };
      const workers = Array.from({ length: 8 }, submitter);
      await waitFor(
        'some acknowledged submits',
        async () => (acknowledged.length >= 200 ? true : undefined),
        60_000,
        5,
      );
      await crash();
      stop = true;
      await Promise.all(workers);
      await start();
      for (const id of acknowledged) {
        const r = await api('GET', `/Job/${id}`);
        assert.equal(r.status, 200, `acknowledged Job:${id} lost`);
      }
      assert.ok(acknowledged.length >= 200);
    });
  });
}

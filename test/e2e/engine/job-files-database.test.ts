import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { startE2eServer, type TestServer } from '../../helpers/server.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

/**
 * `--job-files database`: job files kept in the database, where every server node reads them.
 * A real BASH job through the local agent writes 300 KB (many chunks); the whole file, ranges across chunk
 * boundaries, and a file of its own read back the same as written; nothing lands in the data folder; deleting the
 * job removes its chunks.
 */
for (const backend of backends())
  describe(`job files in the database (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startE2eServer(backend, { jobFilesDir: 'database' });
    });
    after(() => t.close());

    test('written by the agent, read whole and by range, removed with the job', async () => {
      const define = await t.req('POST', '/JobDefinition/GLOBAL.Big', {
        body: {
          JobDefinitionType: 'BASH',
          // 300,000 bytes: line n is "n" padded to 9 characters and a newline, so every offset has one right byte.
          Script: 'seq 0 29999 | xargs printf "%09d\\n"; printf "a,b\\n1,2\\n" > "$MILLRACE_FILES/report.csv"',
        },
      });
      assert.equal(define.status, 201, define.body);
      const id = (await t.req('POST', '/Job/GLOBAL.Big')).json.jobId as number;
      const job = await waitForJob((p) => t.req('GET', p), id, undefined, 60_000);
      assert.equal(job.Status, 'Completed', JSON.stringify(job));
      const expected = Array.from({ length: 30_000 }, (_, n) => `${String(n).padStart(9, '0')}\n`).join('');
      const stdout = job.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
      const report = job.JobFiles.find((f: { Name: string }) => f.Name === 'report.csv');
      assert.equal(stdout.Size, 300_000);
      const content = (uniqueId: number, range?: string) =>
        t.req('GET', `/JobFile/${uniqueId}/content`, range ? { headers: { range } } : {});
      assert.equal((await content(stdout.uniqueId)).body, expected);
      for (const [from, to] of [
        [0, 9],
        [65_530, 65_560],
        [123_456, 234_567],
        [299_990, 299_999],
      ] as const) {
        const r = await content(stdout.uniqueId, `bytes=${from}-${to}`);
        assert.equal(r.status, 206);
        assert.equal(r.body, expected.slice(from, to + 1), `${from}-${to}`);
      }
      assert.equal((await content(report.uniqueId)).body, 'a,b\n1,2\n');
      const head = await t.req('HEAD', `/JobFile/${stdout.uniqueId}/content`);
      assert.deepEqual([head.status, head.headers['content-length'], head.body], [200, '300000', '']);
      assert.equal(existsSync(join(t.config.dataDir, 'jobfiles')), false, 'nothing on the disk');
      assert.ok((await t.server.store.jobFileChunks.size(id, 'stdout.log')) > 0);

      assert.equal((await t.req('DELETE', `/Job/${id}`)).status, 204);
      await t.server.engine.idle();
      // Removed after the delete's commit, like files on disk.
      await waitFor(
        'the chunks gone with the job',
        async () =>
          (await t.server.store.jobFileChunks.chunks(id, 'stdout.log', 0, 1)).length === 0 ? true : undefined,
        60_000,
      );
    });
  });

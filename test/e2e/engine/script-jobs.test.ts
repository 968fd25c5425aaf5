import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { startE2eServer, type TestServer } from '../../helpers/server.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

/** Script jobs run by the real local agent: parameters in, Out values back, files, return codes. */
for (const backend of backends()) {
  describe(`script jobs through the local agent (${backend.name})`, () => {
    let t: TestServer;
    const get = (path: string) => t.req('GET', path);
    before(async () => {
      t = await startE2eServer(backend);
    });
    after(() => t.close());

    const define = async (name: string, body: Record<string, unknown>) => {
      const r = await t.req('POST', `/JobDefinition/GLOBAL.${name}`, { body });
      assert.equal(r.status, 201, r.body);
    };
    const submit = async (name: string, body: unknown = {}) => {
      const r = await t.req('POST', `/Job/GLOBAL.${name}`, { body });
      assert.equal(r.status, 201, r.body);
      return r.json.jobId as number;
    };
    const content = async (uniqueId: number, range?: string) =>
      t.req('GET', `/JobFile/${uniqueId}/content`, range ? { headers: { range } } : {});

    test('a BASH job gets its In parameters as variables and sets Out parameters by assignment', async () => {
      await define('Greet', {
        JobDefinitionType: 'BASH',
        Script: 'echo "hello $WHO"; echo "to stderr" >&2; GREETING="hi $WHO"; COUNT=$((N * 2))',
        Parameters: [
          { Name: 'WHO', DefaultValue: 'world' },
          { Name: 'N', DataType: 'Number', DefaultValue: '21' },
          { Name: 'GREETING', Direction: 'Out' },
          { Name: 'COUNT', Direction: 'Out', DataType: 'Number' },
        ],
      });
      const job = await waitForJob(
        get,
        await submit('Greet', { JobParameters: [{ Name: 'WHO', InValueString: 'Ada' }] }),
      );
      assert.equal(job.Status, 'Completed');
      assert.equal(job.ReturnCode, 0);
      assert.equal(job.ProcessServer, 'GLOBAL.Local');
      const out = Object.fromEntries(job.JobParameters.map((p: { Name: string }) => [p.Name, p]));
      assert.equal(out.GREETING.OutValueString, 'hi Ada');
      assert.equal(out.COUNT.OutValueNumber, 42);
      const stdout = job.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
      const stderr = job.JobFiles.find((f: { Name: string }) => f.Name === 'stderr.log');
      assert.deepEqual([stdout.FileOrder, stdout.Type, stdout.Size], [1, 'Output', 'hello Ada\n'.length]);
      assert.deepEqual([stderr.FileOrder, stderr.Type], [2, 'Log']);
      assert.equal((await content(stdout.uniqueId)).body, 'hello Ada\n');
      assert.equal((await content(stderr.uniqueId)).body, 'to stderr\n');
    });

    test('a parameter value is never executed, whatever it holds (every script type)', async () => {
      const marker = join(tmpdir(), `millrace-pwned-${process.pid}-${backend.name}`);
      const hostile = `$(touch ${marker}); \`touch ${marker}\`; echo $((1+1)) "; touch ${marker}; '${marker}'`;
      const scripts: Record<string, string> = {
        BASH: 'echo "$V"; eval_not_used=1',
        SH: 'echo "$V"',
        PYTHON: 'import os\nprint(os.environ["V"])',
        NODE: 'console.log(process.env.V)',
      };
      for (const [type, script] of Object.entries(scripts)) {
        await define(`Echo_${type}`, { JobDefinitionType: type, Script: script, Parameters: [{ Name: 'V' }] });
        const job = await waitForJob(
          get,
          await submit(`Echo_${type}`, { JobParameters: [{ Name: 'V', InValueString: hostile }] }),
        );
        assert.equal(job.Status, 'Completed', `${type}: ${JSON.stringify(job.JobNotes)}`);
        const stdout = job.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
        assert.equal((await content(stdout.uniqueId)).body, `${hostile}\n`, type);
      }
      assert.equal(existsSync(marker), false, 'the parameter was executed');
    });

    test('PYTHON and NODE jobs set Out parameters through $MILLRACE_OUT; files in $MILLRACE_FILES are job files', async () => {
      await define('PyOut', {
        JobDefinitionType: 'PYTHON',
        Script: [
          'import os',
          'open(os.environ["MILLRACE_OUT"], "a").write("ANSWER=42\\n")',
          'open(os.path.join(os.environ["MILLRACE_FILES"], "report.csv"), "w").write("a,b\\n1,2\\n")',
        ].join('\n'),
        Parameters: [{ Name: 'ANSWER', Direction: 'Out', DataType: 'Number' }],
      });
      const py = await waitForJob(get, await submit('PyOut'));
      assert.equal(py.Status, 'Completed', JSON.stringify(py.JobNotes));
      assert.equal(py.JobParameters[0].OutValueNumber, 42);
      const report = py.JobFiles.find((f: { Name: string }) => f.Name === 'report.csv');
      assert.ok(report, JSON.stringify(py.JobFiles));
      assert.equal(report.FileOrder, 3);
      assert.equal((await content(report.uniqueId)).body, 'a,b\n1,2\n');

      await define('NodeOut', {
        JobDefinitionType: 'NODE',
        Script:
          'require("fs").appendFileSync(process.env.MILLRACE_OUT, "WHEN=2026/11/21 10:00:00,000 Europe/Amsterdam\\n")',
        Parameters: [{ Name: 'WHEN', Direction: 'Out', DataType: 'Date' }],
      });
      const node = await waitForJob(get, await submit('NodeOut'));
      assert.equal(node.Status, 'Completed', JSON.stringify(node.JobNotes));
      assert.equal(node.JobParameters[0].OutValueDate, '2026/11/21 10:00:00,000 Europe/Amsterdam');
    });

    test('ReturncodeMapToCompleted decides Completed or Error', async () => {
      await define('Exit3', { JobDefinitionType: 'SH', Script: 'exit 3', ReturncodeMapToCompleted: '0,3-5' });
      await define('Exit7', { JobDefinitionType: 'SH', Script: 'exit 7', ReturncodeMapToCompleted: '0,3-5' });
      const [a, b] = await Promise.all([submit('Exit3'), submit('Exit7')]);
      const ja = await waitForJob(get, a);
      const jb = await waitForJob(get, b);
      assert.deepEqual([ja.Status, ja.ReturnCode], ['Completed', 3]);
      assert.deepEqual([jb.Status, jb.ReturnCode], ['Error', 7]);
    });

    test("a running job's output can be followed with Range requests", async () => {
      // Three lines, then it waits for the test (the file `go`) before three more: the first part is read while the
      // job runs, whatever the machine's speed.
      const go = join(t.config.dataDir, 'ticker-go');
      await define('Ticker', {
        JobDefinitionType: 'BASH',
        Script: `for i in 1 2 3; do echo "line $i"; done; while [ ! -e ${go} ]; do sleep 0.1; done; for i in 4 5 6; do echo "line $i"; done`,
      });
      const id = await submit('Ticker');
      const running = await waitForJob(get, id, ['Running']);
      const stdout = running.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
      let seen = '';
      let partials = 0;
      await waitFor('the first three lines while the job runs', async () => {
        const r = await content(stdout.uniqueId, `bytes=${seen.length}-`);
        if (r.status === 206) {
          seen += r.body;
          partials += 1;
        }
        return seen === 'line 1\nline 2\nline 3\n' ? true : undefined;
      });
      assert.equal((await get(`/Job/${id}`)).json.Status, 'Running');
      writeFileSync(go, '');
      const final = await waitForJob(async (path) => {
        const r = await content(stdout.uniqueId, `bytes=${seen.length}-`);
        if (r.status === 206) {
          seen += r.body;
          partials += 1;
        } else assert.equal(r.status, r.body === '' ? 200 : 416, r.body);
        return get(path);
      }, id);
      const rest = await content(stdout.uniqueId, `bytes=${seen.length}-`);
      if (rest.status === 206) seen += rest.body;
      assert.equal(final.Status, 'Completed');
      assert.equal(seen, 'line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n');
      assert.ok(partials >= 2, `expected the output to arrive in several parts, got ${partials}`);
      const bad = await content(stdout.uniqueId, 'bytes=9999-');
      assert.equal(bad.status, 416);
      assert.equal(bad.headers['content-range'], `bytes */${'line 1\n'.length * 6}`);
    });

    test("HEAD answers a job file's size now, without its bytes, so a follower need not read past the end", async () => {
      // The job writes its second line once the test has seen the first and made the file it waits for.
      const go = join(tmpdir(), `millrace-head-go-${process.pid}-${backend.name}`);
      await define('Slow', {
        JobDefinitionType: 'BASH',
        Script: 'echo first; while [ ! -e "$GO" ]; do sleep 0.1; done; echo second',
        Parameters: [{ Name: 'GO' }],
      });
      const id = await submit('Slow', { JobParameters: [{ Name: 'GO', InValueString: go }] });
      const running = await waitForJob(get, id, ['Running']);
      const stdout = running.JobFiles.find((f: { Name: string }) => f.Name === 'stdout.log');
      const head = () => t.req('HEAD', `/JobFile/${stdout.uniqueId}/content`);
      const early = await waitFor(
        'the first line',
        async () => ((await head()).headers['content-length'] === '6' ? head() : undefined),
        30_000,
      );
      assert.deepEqual([early.status, early.body], [200, '']);
      await writeFile(go, '');
      try {
        assert.equal((await waitForJob(get, id)).Status, 'Completed');
      } finally {
        await rm(go, { force: true });
      }
      const late = await head();
      assert.deepEqual([late.status, late.headers['content-length'], late.body], [200, '13', '']);
      assert.equal(late.headers['accept-ranges'], 'bytes');
      assert.equal((await t.req('HEAD', '/JobFile/999999/content')).status, 404);
      assert.equal((await t.req('HEAD', `/JobFile/${stdout.uniqueId}/content`, { key: null })).status, 401);
    });
  });
}

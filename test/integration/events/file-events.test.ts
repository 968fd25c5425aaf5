import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { createDefinition } from '../../helpers/events.ts';
import { pause } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/wait.ts';
import { parseDate } from '../../../src/time/date-format.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read answers as a client does
type Json = any;

const FILES = 200;
const SLOW = 20;

/**
 * File events end to end: a real server with its real local agent (`--watch-root`), real files, real jobs. Each
 * stable file raises the event once — through bursts, slow writers and the agent SIGKILLed midway — and the
 * jobs AutoSubmit'ted per file read its path from MILLRACE_EVENT_COMMENT.
 */
for (const backend of backends()) {
  describe(`file events (${backend.name})`, () => {
    let t: TestServer;
    let root: string;
    let outside: string;
    const get = async (path: string): Promise<Json> => {
      const r = await t.req('GET', path);
      assert.equal(r.status, 200, `${path}: ${r.body}`);
      return r.json;
    };
    const post = async (path: string, body: unknown) => {
      const r = await t.req('POST', path, { body });
      assert.equal(r.status, 201, `${path}: ${r.body}`);
    };
    /** Every job of a definition (at most 1,000), with its files. */
    const jobsOf = async (definition: string): Promise<Json[]> =>
      (await get(`/Job?JobDefinition=${definition}&Limit=1000`)).items;
    const stdout = async (job: Json): Promise<string> => {
      const file = job.JobFiles.find((f: Json) => f.Name === 'stdout.log');
      const r = await t.req('GET', `/JobFile/${file.uniqueId}/content`);
      assert.equal(r.status, 200, r.body);
      return r.body;
    };
    const event = async (id: string): Promise<Json | undefined> => {
      const r = await t.req('GET', `/Event/${id}`);
      return r.status === 200 ? r.json : undefined;
    };

    before(async () => {
      root = await mkdtemp(join(tmpdir(), 'millrace-watch-'));
      outside = await mkdtemp(join(tmpdir(), 'millrace-outside-'));
      t = await startTestServer(backend, { watchRoots: [root] }, { listen: true });
    });
    after(async () => {
      await t.close();
      await rm(root, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    });

    test(`${FILES} files in bursts, some written slowly: one raise and one job per file, the path in its environment`, async () => {
      const inbox = join(root, 'in');
      await mkdir(inbox);
      await createDefinition(t, 'GLOBAL.FileArrived', {
        FileEvents: [
          { ProcessServer: 'GLOBAL.Local', Directory: inbox, Pattern: '*.csv', PollSeconds: 1, StableSeconds: 3 },
        ],
      });
      await post('/JobDefinition/GLOBAL.ImportFile', {
        JobDefinitionType: 'BASH',
        Script: 'printf "%s\\n" "$MILLRACE_EVENT_COMMENT"',
        WaitEvents: [{ EventDefinition: 'GLOBAL.FileArrived', ClearsEvent: true, AutoSubmit: 'Always' }],
      });
      const paths = Array.from({ length: FILES }, (_, i) => join(inbox, `f${String(i).padStart(3, '0')}.csv`));
      const slow = paths.slice(0, SLOW);
      // The slow ones: a line every 250 ms over 3 s. StableSeconds 3 leaves a loaded machine room: a writer stalled
      // for under 3 s between two lines still counts as writing.
      const writingSlowly = (async () => {
        for (let i = 0; i < 12; i++) {
          await Promise.all(slow.map((p) => appendFile(p, `row ${i}\n`)));
          await pause(250);
        }
      })();
      const rest = paths.slice(SLOW);
      const bursts = 4;
      const per = Math.ceil(rest.length / bursts);
      for (let b = 0; b < bursts; b++) {
        await Promise.all(rest.slice(b * per, (b + 1) * per).map((p) => writeFile(p, `${p}\n`)));
        await writeFile(join(inbox, `ignored${b}.tmp`), 'not a csv\n');
        if (b === 1) {
          // The agent dies with raises in flight; the server's supervisor starts it again on the same spool.
          const agent = t.server.localAgent?.current();
          assert.ok(agent?.pid);
          agent.kill('SIGKILL');
        }
        await pause(700);
      }
      await writingSlowly;
      const slowDone = await Promise.all(slow.map(async (p) => (await stat(p)).mtimeMs));

      await waitFor(
        `${FILES} completed jobs`,
        async () => {
          const jobs = await jobsOf('GLOBAL.ImportFile');
          return jobs.filter((j) => j.Status === 'Completed').length >= FILES ? true : undefined;
        },
        300_000,
        500,
      );
      await pause(3000); // a few more looks at the folder and resends: nothing more may come
      const jobs = await jobsOf('GLOBAL.ImportFile');
      assert.equal(jobs.length, FILES, 'one job per file');
      const printed = await Promise.all(jobs.map(async (j) => (await stdout(j)).trim()));
      assert.deepEqual([...printed].sort(), [...paths].sort(), 'each job printed the path of its own file');

      const events: Json[] = [];
      for (let i = 1; i <= FILES; i++) events.push(await event(`FileArrived${i}`));
      assert.equal(await event(`FileArrived${FILES + 1}`), undefined, 'no raise beyond one per file');
      assert.deepEqual(events.map((e) => e.RaiserComment).sort(), [...paths].sort(), 'each path raised once');
      for (const e of events) assert.equal(e.RaiserObject, 'ProcessServer:GLOBAL.Local');
      for (const [i, p] of slow.entries()) {
        const e = events.find((x) => x.RaiserComment === p);
        assert.ok(parseDate(e.RaiseTime, 'UTC').ms >= (slowDone[i] as number), `${p} raised after its last write`);
      }

      const watches = (await get('/ProcessServer/GLOBAL.Local/filewatches')).items;
      assert.equal(watches.length, 1);
      assert.deepEqual(
        { ...watches[0], LastPoll: typeof watches[0].LastPoll },
        {
          EventDefinition: 'GLOBAL.FileArrived',
          Directory: inbox,
          Pattern: '*.csv',
          LastPoll: 'string',
          FilesSeen: watches[0].FilesSeen,
          LastError: null,
        },
      );
    });

    test('a folder outside --watch-root is refused, with the reason on the process server', async () => {
      await writeFile(join(outside, 'secret.csv'), 'no\n');
      await createDefinition(t, 'GLOBAL.Outside', {
        FileEvents: [{ ProcessServer: 'GLOBAL.Local', Directory: outside, PollSeconds: 1, StableSeconds: 0 }],
      });
      const watch = await waitFor('the refusal on the process server', async () => {
        const items = (await get('/ProcessServer/GLOBAL.Local/filewatches')).items as Json[];
        return items.find((w) => w.EventDefinition === 'GLOBAL.Outside' && w.LastError !== null);
      });
      assert.equal(watch.LastError, `${outside} is not inside a --watch-root folder of this agent (${root})`);
      assert.equal(await event('Outside1'), undefined, 'nothing raised');
    });

    test('a file that cannot be moved stays, is not raised, and leaves one operator message', async () => {
      const inbox = join(root, 'stuck');
      const missing = join(root, 'no-such-folder');
      await mkdir(inbox);
      await writeFile(join(inbox, 'stuck.csv'), 'x\n');
      await createDefinition(t, 'GLOBAL.Stuck', {
        FileEvents: [
          { ProcessServer: 'GLOBAL.Local', Directory: inbox, PollSeconds: 1, StableSeconds: 0, MoveDirectory: missing },
        ],
      });
      const messages = async (): Promise<Json[]> =>
        ((await get('/OperatorMessage?Limit=1000')).items as Json[]).filter((m) =>
          String(m.FullText).startsWith('EventDefinition:GLOBAL.Stuck:'),
        );
      const [message] = await waitFor('the operator message', async () => {
        const found = await messages();
        return found.length > 0 ? found : undefined;
      });
      assert.match(
        message.FullText,
        /could not move .*\/stuck\/stuck\.csv to .*no-such-folder: .*ENOENT.*; it is not raised$/,
      );
      assert.equal(message.SenderObject, 'ProcessServer:GLOBAL.Local');
      const watch = await waitFor('the error on the process server', async () => {
        const items = (await get('/ProcessServer/GLOBAL.Local/filewatches')).items as Json[];
        return items.find((w) => w.EventDefinition === 'GLOBAL.Stuck' && w.LastError !== null);
      });
      assert.match(watch.LastError, /^could not move/);
      await pause(2500); // more looks: the unchanged file is not offered again
      assert.equal((await messages()).length, 1, 'one message for the file');
      assert.equal(await event('Stuck1'), undefined, 'not raised');
      await stat(join(inbox, 'stuck.csv'));
    });

    test('bad FileEvents are refused with the error record and change nothing', async () => {
      const bad = async (item: Record<string, unknown>, message: string) => {
        const r = await t.req('POST', '/EventDefinition/GLOBAL.Bad', {
          body: { FileEvents: [{ ProcessServer: 'GLOBAL.Local', Directory: '/data/in', ...item }] },
        });
        assert.equal(r.status, 400, r.body);
        assert.deepEqual(r.json, { code: '400', message });
      };
      await bad({ Directory: 'data/in' }, 'Field "FileEvents[0].Directory" must be an absolute path (starting with /)');
      await bad({ Directory: '/data/../etc' }, 'Field "FileEvents[0].Directory" must not hold a ".." part');
      await bad({ MoveDirectory: '/data/in/../x' }, 'Field "FileEvents[0].MoveDirectory" must not hold a ".." part');
      await bad({ PollSeconds: 0 }, 'Field "FileEvents[0].PollSeconds" must be an integer from 1 to 86400');
      const many = Array.from({ length: 51 }, () => ({ ProcessServer: 'GLOBAL.Local', Directory: '/data/in' }));
      const r = await t.req('POST', '/EventDefinition/GLOBAL.Bad', { body: { FileEvents: many } });
      assert.deepEqual(r.json, { code: '400', message: 'Field "FileEvents" must hold at most 50 items' });
      assert.equal((await t.req('GET', '/EventDefinition/GLOBAL.Bad')).status, 404);
    });
  });
}

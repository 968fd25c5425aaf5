import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { submit } from '../../helpers/jobs.ts';
import { ADMIN_KEY, startTestServer, type TestServer } from '../../helpers/server.ts';
import { openSse, type SseClient, type SseEvent } from '../../helpers/sse.ts';
import { waitFor } from '../../helpers/wait.ts';

const jobEvents = (events: SseEvent[], jobId: number) =>
  events.filter((e) => e.event === 'job' && e.data.jobId === jobId);
const reached = (jobId: number, to: string) => (events: SseEvent[]) =>
  jobEvents(events, jobId).some((e) => e.data.to === to) ? true : undefined;

/** GET …/stream: the live feed over a real listening server and node's HTTP client. */
for (const backend of backends()) {
  describe(`live feed (${backend.name})`, () => {
    let t: TestServer;
    let url: string;
    const clients: SseClient[] = [];
    const open = async (key: string, headers: Record<string, string> = {}, query = '') => {
      const c = await openSse(`${url}${query}`, { 'X-API-Key': key, ...headers });
      clients.push(c);
      return c;
    };

    before(async () => {
      t = await startTestServer(backend, { feedRetainEvents: 500 }, { listen: true });
      const { port } = t.server.app.server.address() as { port: number };
      url = `http://127.0.0.1:${port}${t.base}/stream`;
      for (const [path, body] of [
        ['/JobDefinition/GLOBAL.Echo', { JobDefinitionType: 'BASH', Script: 'echo hi' }],
        ['/Partition/B', {}],
        ['/JobDefinition/B.Echo', { JobDefinitionType: 'BASH', Script: 'echo hi' }],
      ] as const)
        assert.equal((await t.req('POST', path, { body })).status, 201);
    });
    after(async () => {
      for (const c of clients) c.close();
      await t.close();
    });

    test('a client receives the status changes of a job in order, with monotonic ids', async () => {
      const c = await open(ADMIN_KEY);
      assert.equal(c.status, 200);
      assert.match(String(c.headers['content-type']), /^text\/event-stream/);
      await c.until('ready', (es) => es.find((e) => e.event === 'ready'));
      const job = await submit(t, 'GLOBAL.Echo');
      await c.until('Completed', reached(job.jobId, 'Completed'));
      const mine = jobEvents(c.events, job.jobId);
      assert.deepEqual(
        mine.map((e) => [e.data.from, e.data.to]),
        [
          [null, 'Queued'],
          ['Queued', 'Dispatched'],
          ['Dispatched', 'Running'],
          ['Running', 'Completed'],
        ],
      );
      const first = mine[0]?.data;
      assert.deepEqual(first, {
        ...first,
        definition: 'GLOBAL.Echo',
        partition: 'GLOBAL',
        parentJob: null,
        user: 'admin',
        cause: 'submit',
      });
      assert.match(first.time, /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2},\d{3} UTC$/);
      const ids = c.events.filter((e) => e.event !== 'ready').map((e) => Number(e.id));
      for (let i = 1; i < ids.length; i++) assert.ok((ids[i] as number) > (ids[i - 1] as number), `ids ${ids}`);
    });

    test("a Viewer of partition A gets none of partition B's events", async () => {
      const viewer = await t.keyWithGrants('viewer-a', ['*:GLOBAL:View']);
      const v = await open(viewer);
      const admin = await open(ADMIN_KEY);
      await v.until('ready', (es) => es.find((e) => e.event === 'ready'));
      await admin.until('ready', (es) => es.find((e) => e.event === 'ready'));
      const hidden = await submit(t, 'B.Echo');
      await admin.until('the B job', reached(hidden.jobId, 'Completed'));
      // A job of A submitted after B's finished: once the viewer has it, it has had every event before it.
      const shown = await submit(t, 'GLOBAL.Echo');
      await v.until('the A job', reached(shown.jobId, 'Completed'));
      assert.deepEqual(
        v.events.filter((e) => e.data.partition === 'B'),
        [],
      );
      assert.equal(jobEvents(v.events, hidden.jobId).length, 0);
      assert.ok(jobEvents(admin.events, hidden.jobId).length >= 4);
    });

    test('a reconnect with Last-Event-ID gets exactly the missed events; the query parameter works too', async () => {
      const reference = await open(ADMIN_KEY);
      const leaving = await open(ADMIN_KEY);
      const ready = await leaving.until('ready', (es) => es.find((e) => e.event === 'ready'));
      const before = await submit(t, 'GLOBAL.Echo');
      await leaving.until('a first job', reached(before.jobId, 'Completed'));
      leaving.close();
      const seen = leaving.events.at(-1)?.id as string;
      assert.ok(Number(seen) > Number(ready.id));
      const missed = [await submit(t, 'GLOBAL.Echo'), await submit(t, 'GLOBAL.Echo')];
      for (const j of missed) await reference.until('the missed jobs', reached(j.jobId, 'Completed'));
      const last = Number(reference.events.at(-1)?.id);
      const expected = reference.events.filter((e) => Number(e.id) > Number(seen) && Number(e.id) <= last);
      for (const j of missed) assert.ok(jobEvents(expected, j.jobId).length >= 4);
      for (const back of [
        await open(ADMIN_KEY, { 'Last-Event-ID': seen }),
        await open(ADMIN_KEY, {}, `?lastEventId=${seen}`),
      ]) {
        await back.until('the ready event', (es) => es.find((e) => e.event === 'ready'));
        const replayed = back.events.filter(
          (e) => e.event !== 'ready' && Number(e.id) > Number(seen) && Number(e.id) <= last,
        );
        assert.deepEqual(
          replayed.map((e) => [e.id, e.event, e.data]),
          expected.map((e) => [e.id, e.event, e.data]),
        );
        assert.equal(back.events.filter((e) => Number(e.id) <= Number(seen)).length, 0);
      }
    });

    test('an id outside the retention window gets a reset event', async () => {
      for (const id of ['1', '99999999999999']) {
        const c = await open(ADMIN_KEY, { 'Last-Event-ID': id });
        const reset = await c.until('reset', (es) => es.find((e) => e.event === 'reset'));
        assert.match(reset.data.reason, /retention window/);
        assert.equal(typeof reset.data.lastEventId, 'number');
      }
      const bad = await open(ADMIN_KEY, { 'Last-Event-ID': 'x' });
      await waitFor('the error', async () => (bad.ended ? true : undefined));
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.events[0]?.data, { code: '400', message: 'Last-Event-ID "x" is not an event id' });
      const anonymous = await open('wrong-key');
      await waitFor('the error', async () => (anonymous.ended ? true : undefined));
      assert.equal(anonymous.status, 401);
    });
  });
}

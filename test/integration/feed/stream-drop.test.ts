import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { submitSleep } from '../../helpers/jobs.ts';
import { ADMIN_KEY, startTestServer, type TestServer } from '../../helpers/server.ts';
import { openSse, type SseClient, type SseEvent } from '../../helpers/sse.ts';
import { waitForJob } from '../../helpers/wait.ts';

/**
 * argv: port, path, key. Sends the request, says so, and never reads. A small receive buffer and segment size keep
 * the kernels from absorbing megabytes first (loopback's 64 KiB segments grow the server's send buffer fast).
 */
const STUCK_CLIENT = `
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.sendall(("GET %s HTTP/1.1\\r\\nHost: x\\r\\nX-API-Key: %s\\r\\n\\r\\n" % (sys.argv[2], sys.argv[3])).encode())
print("sent", flush=True)
time.sleep(600)
`;

const jobEvents = (events: SseEvent[], jobId: number) =>
  events.filter((e) => e.event === 'job' && e.data.jobId === jobId);
const reached = (jobId: number, to: string) => (events: SseEvent[]) =>
  jobEvents(events, jobId).some((e) => e.data.to === to) ? true : undefined;

/** GET …/stream: a slow consumer never slows the engine. In-server jobs only, so no agent is needed. */
// Storage plays no part in how the feed treats a slow client: SQLite only, to keep the suite lean.
for (const backend of backends().slice(0, 1)) {
  describe(`live feed, a client that does not read (${backend.name})`, () => {
    let t: TestServer;
    let url: string;
    const clients: SseClient[] = [];
    const get = (path: string) => t.req('GET', path);
    const open = async (key: string) => {
      const c = await openSse(url, { 'X-API-Key': key });
      clients.push(c);
      return c;
    };

    before(async () => {
      // A small buffer per client, so a client that never reads is dropped after about a hundred jobs.
      t = await startTestServer(backend, { feedClientBufferBytes: 16 * 1024, localAgent: false }, { listen: true });
      const { port } = t.server.app.server.address() as { port: number };
      url = `http://127.0.0.1:${port}${t.base}/stream`;
    });
    after(async () => {
      for (const c of clients) c.close();
      await t.close();
    });

    test('a client that never reads is dropped, and jobs go on completing', async () => {
      // A client that sends its request and never reads a byte, with a small receive buffer (so the kernel does
      // not absorb megabytes first): a separate process, since node cannot set SO_RCVBUF on TCP.
      const { port } = t.server.app.server.address() as { port: number };
      const stuck = spawn('python3', ['-c', STUCK_CLIENT, String(port), `${t.base}/stream`, ADMIN_KEY], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      try {
        await new Promise((resolve) => stuck.stdout.once('data', resolve));
        const watcher = await open(ADMIN_KEY);
        await watcher.until('ready', (es) => es.find((e) => e.event === 'ready'));
        const droppedBefore = t.server.feed.dropped;
        const ids: number[] = [];
        for (let round = 0; round < 100 && t.server.feed.dropped === droppedBefore; round++)
          for (const j of await Promise.all(Array.from({ length: 20 }, () => submitSleep(t, 0)))) ids.push(j.jobId);
        assert.ok(t.server.feed.dropped > droppedBefore, 'the client that never reads was dropped');
        for (const id of ids) assert.equal((await waitForJob(get, id, ['Completed'])).Status, 'Completed');
        // The client that reads is still there and has every event of those jobs.
        await watcher.until('the last job', reached(ids.at(-1) as number, 'Completed'));
        assert.equal(watcher.ended, false);
        for (const id of ids) assert.ok(jobEvents(watcher.events, id).length >= 3, `events of Job:${id}`);
      } finally {
        stuck.kill();
      }
    });
  });
}

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';
import { DEFAULTS } from '../../../src/config/config.ts';
import { backends } from '../../helpers/backends.ts';
import { ADMIN_KEY, startTestServer, type TestServer } from '../../helpers/server.ts';
import { type CertFiles, httpsRequest, makeCa, makeLeaf } from '../../helpers/tls.ts';

/**
 * The cap on connections per client address holds over HTTPS too (docs/architecture.md §10): the connections counted
 * are the TLS ones requests arrive on, and the one over the cap is answered 503 in the interface's error record.
 */
const CAP = 2;
const sqlite = backends().find((b) => b.name === 'sqlite');

describe('the per-address connection cap over HTTPS', { skip: sqlite ? false : 'no SQLite backend' }, () => {
  let t: TestServer;
  let dir = '';
  let ca: CertFiles;
  let port = 0;
  const held: TLSSocket[] = [];

  before(async () => {
    assert.ok(sqlite);
    dir = mkdtempSync(join(tmpdir(), 'millrace-tls-cap-'));
    ca = makeCa(dir, 'ca');
    const leaf = makeLeaf(dir, ca, 'server');
    t = await startTestServer(
      sqlite,
      {
        tls: { cert: leaf.cert, key: leaf.key },
        limits: { ...DEFAULTS.limits, maxEventLoopDelayMs: 60_000, maxConnectionsPerAddress: CAP },
      },
      { listen: true },
    );
    ({ port } = t.server.app.server.address() as { port: number });
  });
  after(async () => {
    for (const s of held) s.destroy();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('connections beyond the cap get 503; below it requests are served', async () => {
    const url = `https://127.0.0.1:${port}${t.base}/Partition/GLOBAL`;
    const headers = { 'X-API-Key': ADMIN_KEY };
    assert.equal((await httpsRequest(url, ca.cert, { headers })).status, 200);
    for (let i = 0; i < CAP; i++)
      held.push(
        await new Promise<TLSSocket>((resolve, reject) => {
          const s = connect({ host: '127.0.0.1', port, ca: readFileSync(ca.cert) }, () => resolve(s));
          s.on('error', reject);
        }),
      );
    const over = await httpsRequest(url, ca.cert, { headers });
    assert.equal(over.status, 503, over.body);
    assert.deepEqual(JSON.parse(over.body), {
      code: '503',
      message: 'Too many connections from your address; try again later',
    });
    for (const s of held.splice(0)) s.destroy();
  });
});

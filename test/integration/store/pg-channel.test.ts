import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../../src/store/open.ts';
import type { Channel, Store } from '../../../src/store/store.ts';
import { backends } from '../../helpers/backends.ts';
import { suiteStore } from '../../helpers/suite-store.ts';
import { waitFor } from '../../helpers/wait.ts';

/**
 * The channel between server nodes on PostgreSQL (store/pg-channel.ts, docs/architecture.md §16): the payloads of one
 * send arrive at another node whole and in the order sent, though they go in one statement.
 */

const postgres = backends().find((b) => b.name === 'postgres');

describe('the nodes’ channel (postgres)', { skip: postgres ? false : 'no PostgreSQL' }, () => {
  // biome-ignore lint/style/noNonNullAssertion: skipped above without PostgreSQL
  const t = suiteStore(postgres!);
  let other: Store;
  let sender: Channel | undefined;
  let listener: Channel | undefined;
  before(async () => {
    other = await openStore(t.db);
  });
  after(async () => {
    await sender?.close();
    await listener?.close();
    await other?.close();
  });

  test('the payloads of one send arrive in order, quotes, backslashes and other scripts intact', async () => {
    sender = t.store.openChannel();
    listener = other.openChannel();
    assert.ok(sender && listener, 'PostgreSQL opens a channel');
    const heard: string[] = [];
    await listener.listen(
      (p) => heard.push(p),
      () => {},
    );
    const payloads = [
      ...Array.from({ length: 40 }, (_, i) => JSON.stringify({ n: i, text: 'x'.repeat(7_000) })),
      '{"say":"a \\"quoted\\" word, a back\\\\slash, {braces}, commas, and a NUL-free ünïcødé ✓"}',
      'not JSON: a raw\nnewline, a\ttab, NULL, and a "quote" beside a \\ backslash',
      'last',
    ];
    await sender.notify(payloads);
    await waitFor('every payload heard', async () => (heard.length >= payloads.length ? true : undefined));
    assert.deepEqual(heard, payloads);
  });
});

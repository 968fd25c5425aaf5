import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import { type AddressedResponse, loopback, requestFrom } from '../../helpers/from-address.ts';
import { ADMIN_PASSWORD, basicAuth, startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * docs/architecture.md §10: nobody locks the administrator out by guessing its password. Failed sign-ins are
 * limited per client address, and per user name only for the addresses that failed themselves; the right password
 * from an address that never failed goes through. Real sockets from distinct loopback addresses, basic auth of the
 * XML interface and the dashboard's sign-in, with 20 failures a minute allowed as by default.
 */

const START = Date.UTC(2026, 10, 26, 9, 0, 0);
const PAST_WINDOW = 61_000;

/** One attempt to sign in as `user` from `address`, through one of the two doors that take a password. */
type Door = (address: string, user: string, password: string) => Promise<AddressedResponse>;

for (const backend of backends()) {
  describe(`failed sign-ins (${backend.name})`, () => {
    const clock = new FakeClock(START);
    let t: TestServer;
    let origin = '';

    before(async () => {
      t = await startTestServer(backend, { authFailuresPerMinute: 20, localAgent: false }, { listen: true, clock });
      origin = `http://127.0.0.1:${(t.server.app.server.address() as { port: number }).port}`;
      await t.loginWithGrants('viewer', 'viewer-password-1', ['Queue:GLOBAL:View']);
    });
    after(() => t?.close());

    const basic: Door = (address, user, password) =>
      requestFrom(address, `${origin}${t.xmlBase}/object/Queue/GLOBAL.Default`, {
        headers: { authorization: basicAuth(user, password) },
      });
    const dashboard: Door = (address, user, password) =>
      requestFrom(address, `${origin}/millrace/ui/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user, password }),
      });

    /** Sends `count` wrong passwords for admin, round robin over `addresses`; answers the statuses. */
    async function guess(door: Door, addresses: string[], count: number): Promise<number[]> {
      const statuses: number[] = [];
      for (let i = 0; i < count; i++) {
        const res = await door(addresses[i % addresses.length] as string, 'admin', `guess-${i}`);
        assert.ok(res.status === 401 || res.status === 429, `guess ${i}: ${res.status} ${res.body}`);
        statuses.push(res.status);
      }
      return statuses;
    }

    const assertRefused = (res: AddressedResponse, what: string) => {
      assert.equal(res.status, 429, `${what}: ${res.status} ${res.body}`);
      const retryAfter = Number(res.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `${what}: ${retryAfter}`);
    };

    for (const [name, door, signedIn] of [
      ['basic auth', basic, (res: AddressedResponse) => /<Name>Default<\/Name>/.test(res.body)],
      ['the dashboard sign-in', dashboard, (res: AddressedResponse) => JSON.parse(res.body).user === 'admin'],
    ] as const) {
      test(`${name}: 25 wrong passwords from 10 addresses; the right one from an 11th is served`, async () => {
        clock.advance(PAST_WINDOW);
        const guessers = Array.from({ length: 10 }, (_, i) => loopback(2 + i));
        const statuses = await guess(door, guessers, 25);
        assert.equal(statuses.filter((s) => s === 401).length, 20, `20 guesses counted, then refused: ${statuses}`);

        const admin = await door(loopback(12), 'admin', ADMIN_PASSWORD);
        assert.equal(admin.status, 200, admin.body);
        assert.ok(signedIn(admin), admin.body);
        // An address that never failed is not refused for a wrong password either: it gets its answer, later.
        assert.equal((await door(loopback(13), 'admin', 'one-more-guess')).status, 401);
        // The addresses that guessed are refused for admin, the right password included, but not for others.
        assertRefused(await door(loopback(2), 'admin', ADMIN_PASSWORD), 'a guesser with the right password');
        assertRefused(await door(loopback(13), 'admin', ADMIN_PASSWORD), 'the address that just failed');
        assert.equal((await door(loopback(3), 'viewer', 'viewer-password-1')).status, 200, 'a guesser as viewer');
      });

      test(`${name}: 25 wrong passwords from one address; that address alone is refused`, async () => {
        clock.advance(PAST_WINDOW);
        const statuses = await guess(door, [loopback(20)], 25);
        assert.deepEqual(statuses, [...Array(20).fill(401), ...Array(5).fill(429)]);
        assertRefused(await door(loopback(20), 'admin', ADMIN_PASSWORD), 'the right password from there');
        assertRefused(await door(loopback(20), 'viewer', 'viewer-password-1'), 'another user from there');
        const elsewhere = await door(loopback(21), 'admin', ADMIN_PASSWORD);
        assert.equal(elsewhere.status, 200, elsewhere.body);
        assert.ok(signedIn(elsewhere), elsewhere.body);

        clock.advance(PAST_WINDOW);
        const later = await door(loopback(20), 'admin', ADMIN_PASSWORD);
        assert.equal(later.status, 200, `a minute later: ${later.body}`);
      });
    }
  });
}

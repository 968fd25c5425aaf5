import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MillraceError } from '../../../src/errors.ts';
import { encodeCursor } from '../../../src/services/list-query.ts';
import { namePage, readApiKeyBody, readUserBody } from '../../../src/services/account-bodies.ts';

/** docs/architecture.md §10: what the JSON interface takes as a User or API key body, and how its lists page. */

const refused = (fn: () => unknown): boolean => {
  try {
    fn();
    return false;
  } catch (e) {
    assert.ok(e instanceof MillraceError && e.status === 400, `a 400, not ${String(e)}`);
    return true;
  }
};

test('any JSON value is either a well-typed change or a 400, never anything else', () => {
  const body = fc.oneof(
    fc.jsonValue(),
    fc.record({ Roles: fc.jsonValue(), Disabled: fc.jsonValue(), Password: fc.jsonValue() }, { requiredKeys: [] }),
  );
  fc.assert(
    fc.property(body, (value) => {
      let change: ReturnType<typeof readUserBody>;
      try {
        change = readUserBody(value);
      } catch (e) {
        assert.ok(e instanceof MillraceError && e.status === 400, String(e));
        return;
      }
      assert.ok(Object.keys(change).every((k) => ['roles', 'disabled', 'password'].includes(k)));
      if (change.roles) assert.ok(change.roles.every((r) => typeof r === 'string'));
      if (change.disabled !== undefined) assert.equal(typeof change.disabled, 'boolean');
      if (change.password !== undefined) assert.ok(change.password.length >= 8);
    }),
    { numRuns: 2000 },
  );
});

test('a User body: each field checked, anything else refused', () => {
  assert.deepEqual(readUserBody(undefined), {});
  assert.deepEqual(readUserBody({ Roles: ['Operator'], Disabled: true, Password: 'long-enough' }), {
    roles: ['Operator'],
    disabled: true,
    password: 'long-enough',
  });
  for (const bad of [null, [], 'x', { Roles: 'Operator' }, { Roles: ['A', 'A'] }, { Password: 'short' }, { Name: 'x' }])
    assert.ok(
      refused(() => readUserBody(bad)),
      JSON.stringify(bad),
    );
});

test('an API key body: days from 1 to the longest lifetime, a short description', () => {
  assert.deepEqual(readApiKeyBody(undefined, 182), { description: '' });
  assert.deepEqual(readApiKeyBody({ Description: 'ci', ExpiresInDays: 30 }, 182), {
    description: 'ci',
    lifetimeMs: 30 * 86_400_000,
  });
  for (const bad of [{ ExpiresInDays: 0 }, { ExpiresInDays: 183 }, { ExpiresInDays: 2.5 }, { Description: 5 }, []])
    assert.ok(
      refused(() => readApiKeyBody(bad, 182)),
      JSON.stringify(bad),
    );
});

test('lists page by name: every item once, in order, whatever the page size', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.stringMatching(/^[A-Za-z0-9_.@-]{1,8}$/)),
      fc.integer({ min: 1, max: 5 }),
      (names, limit) => {
        const items = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((Name) => ({ Name }));
        const seen: string[] = [];
        let after: string | undefined;
        for (let pages = 0; pages <= items.length + 1; pages++) {
          const page = namePage(items, { limit, after, fields: undefined });
          seen.push(...page.items.map((i) => String(i.Name)));
          if (page.next === null) break;
          after = Buffer.from(page.next, 'base64url').toString('utf8').slice(2);
          assert.equal(page.next, encodeCursor('k', after));
        }
        assert.deepEqual(
          seen,
          items.map((i) => i.Name),
        );
      },
    ),
  );
});

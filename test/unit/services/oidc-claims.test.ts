import assert from 'node:assert/strict';
import { test } from 'node:test';
import { claimAt, rolesFrom, userNameFrom } from '../../../src/services/oidc-claims.ts';

/** docs/architecture.md §10: which roles and which user name a token's claims give. */

const KNOWN = new Set(['Administrator', 'Operator', 'Viewer']);
const noMap = { rolesClaim: 'groups', roleMap: new Map<string, string>() };

test('without a role map, values naming a role are that role; others are dropped', () => {
  assert.deepEqual(rolesFrom({ groups: ['Viewer', 'Operator', 'staff', 'Viewer'] }, noMap, KNOWN), [
    'Operator',
    'Viewer',
  ]);
  assert.deepEqual(rolesFrom({ groups: 'Viewer' }, noMap, KNOWN), ['Viewer'], 'a single string');
  assert.deepEqual(rolesFrom({ groups: [7, null, { a: 1 }] }, noMap, KNOWN), []);
  assert.deepEqual(rolesFrom({}, noMap, KNOWN), []);
});

test('with a role map, only mapped values count, and only to roles that exist', () => {
  const settings = {
    rolesClaim: 'realm_access.roles',
    roleMap: new Map([
      ['ops', 'Operator'],
      ['gone', 'NoSuchRole'],
    ]),
  };
  const claims = { realm_access: { roles: ['ops', 'Administrator', 'gone'] } };
  assert.deepEqual(rolesFrom(claims, settings, KNOWN), ['Operator']);
});

test('a dotted path reads own properties only', () => {
  assert.equal(claimAt({ a: { b: 'x' } }, 'a.b'), 'x');
  assert.equal(claimAt({ a: ['x'] }, 'a.0'), undefined);
  assert.equal(claimAt({ a: {} }, 'a.constructor'), undefined);
  assert.equal(claimAt({}, 'toString'), undefined);
});

test('the user name: the user claim, else sub', () => {
  const settings = { userClaim: 'preferred_username' };
  assert.equal(userNameFrom({ sub: 's1', preferred_username: 'ada' }, settings), 'ada');
  assert.equal(userNameFrom({ sub: 's1', preferred_username: '' }, settings), 's1');
  assert.equal(userNameFrom({ sub: 's1' }, settings), 's1');
  assert.equal(userNameFrom({}, settings), undefined);
});

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig, loadServeConfig } from '../../../src/config/config.ts';

/** docs/architecture.md §10: the single sign-on options as `millrace serve` reads them. */

const load = (env: Record<string, string>) => loadConfig({}, env);
const BASE = {
  MILLRACE_OIDC_ISSUER: 'https://login.example.com/realms/ops',
  MILLRACE_OIDC_CLIENT_ID: 'millrace',
  MILLRACE_OIDC_CLIENT_SECRET_FILE: '/etc/millrace/oidc-secret',
};

test('no issuer: no single sign-on', () => {
  assert.equal(load({}).oidc, undefined);
});

test('an issuer with its client: the defaults', () => {
  const oidc = load(BASE).oidc;
  assert.ok(oidc);
  assert.equal(oidc.audience, 'millrace', 'the audience is the client id unless set');
  assert.equal(oidc.rolesClaim, 'groups');
  assert.equal(oidc.userClaim, 'preferred_username');
  assert.equal(oidc.roleMap.size, 0);
  assert.equal(oidc.createUsers, true);
  assert.equal(oidc.only, false);
  assert.equal(oidc.redirectUri, undefined);
});

test('the role map, the audience and the switches', () => {
  const oidc = load({
    ...BASE,
    MILLRACE_OIDC_ROLE_MAP: 'ops=Operator, cn=admins,dc=example=Administrator',
    MILLRACE_OIDC_AUDIENCE: 'api://millrace',
    MILLRACE_OIDC_CREATE_USERS: 'false',
    MILLRACE_OIDC_ONLY: 'true',
  }).oidc;
  assert.ok(oidc);
  // A comma separates entries, so `cn=admins,dc=example=Administrator` is two; the role follows an entry's last `=`.
  assert.deepEqual(
    [...oidc.roleMap],
    [
      ['ops', 'Operator'],
      ['cn', 'admins'],
      ['dc=example', 'Administrator'],
    ],
  );
  assert.equal(oidc.audience, 'api://millrace');
  assert.equal(oidc.createUsers, false);
  assert.equal(oidc.only, true);
});

test('refused: a half-configured client, http off loopback, --oidc-only alone, a bad map entry', () => {
  assert.throws(() => load({ MILLRACE_OIDC_ISSUER: BASE.MILLRACE_OIDC_ISSUER }), /needs --oidc-client-id/);
  assert.throws(() => load({ ...BASE, MILLRACE_OIDC_ISSUER: 'http://login.example.com' }), /https/);
  assert.throws(() => load({ ...BASE, MILLRACE_OIDC_ISSUER: 'not a url' }), /a URL/);
  assert.ok(load({ ...BASE, MILLRACE_OIDC_ISSUER: 'http://127.0.0.1:8080' }).oidc);
  assert.throws(() => load({ MILLRACE_OIDC_ONLY: 'true' }), /--oidc-only needs --oidc-issuer/);
  assert.throws(() => load({ ...BASE, MILLRACE_OIDC_ROLE_MAP: 'ops' }), /claimValue=Role/);
  assert.throws(() => load({ ...BASE, MILLRACE_OIDC_REDIRECT_URI: 'https://x.example.com/elsewhere' }), /callback/);
});

test('the same keys in the configuration file, a flag above them', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'millrace-oidc-config-'));
  try {
    const path = join(dir, 'millrace.toml');
    await writeFile(
      path,
      [
        '[serve]',
        'oidc-issuer = "https://login.example.com"',
        'oidc-client-id = "millrace"',
        'oidc-client-secret-file = "/etc/millrace/oidc-secret"',
        'oidc-role-map = ["wla-ops=Operator", "wla-read=Viewer"]',
        'oidc-roles-claim = "realm_access.roles"',
        'oidc-only = true',
        '',
      ].join('\n'),
    );
    const oidc = (await loadServeConfig({ config: path, oidcClientId: 'from-flag' }, {})).oidc;
    assert.ok(oidc);
    assert.equal(oidc.issuer, 'https://login.example.com');
    assert.equal(oidc.clientId, 'from-flag');
    assert.deepEqual(
      [...oidc.roleMap],
      [
        ['wla-ops', 'Operator'],
        ['wla-read', 'Viewer'],
      ],
    );
    assert.equal(oidc.rolesClaim, 'realm_access.roles');
    assert.equal(oidc.only, true);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

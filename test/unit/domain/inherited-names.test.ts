import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { jobEnvironment } from '../../../src/agent/environment.ts';
import { collectOut, workPaths } from '../../../src/agent/scripts.ts';
import { parseRuleSetProperties } from '../../../src/car/import-rules.ts';
import { readProfiles, resolveConnection, saveProfile } from '../../../src/cli/client/profiles.ts';
import { emptyRecord, own } from '../../../src/domain/own.ts';
import type { JobParameter } from '../../../src/domain/job.ts';
import { parameterEnvironment } from '../../../src/domain/parameters.ts';
import { substitute } from '../../../src/domain/substitute.ts';
import { renderError } from '../../../src/http/errors.ts';
import { requireType } from '../../../src/model/registry.ts';
import { dropServerOwned, dropUnchanged } from '../../../src/model/round-trip.ts';

/**
 * Names from outside are looked up and stored as own properties only: what every JavaScript object inherits
 * (`constructor`, `toString`, `__proto__` …) never answers for a name that is not there, and `__proto__` is kept
 * like any other name.
 */

/** Every name a plain object answers without holding it. */
const INHERITED = Object.getOwnPropertyNames(Object.prototype);

const parameter = (Name: string, value: string): JobParameter => ({
  Name,
  Direction: 'In',
  DataType: 'String',
  JobDefinitionParameter: `JobDefinitionParameter:GLOBAL.D.${Name}`,
  InValueString: value,
  InValueNumber: null,
  InValueDate: null,
  OutValueString: null,
  OutValueNumber: null,
  OutValueDate: null,
});

describe('names that every object inherits', () => {
  test('own() finds only what a record holds itself; emptyRecord keeps __proto__ as a name', () => {
    for (const name of INHERITED) {
      assert.equal(own({ a: 1 }, name), undefined, name);
      const r = emptyRecord<number>();
      r[name] = 7;
      assert.equal(own(r, name), 7, name);
      assert.deepEqual(Object.keys(r), [name]);
    }
  });

  test('round trip: a field the server owns is compared with what the object holds itself', () => {
    const current = { Status: 'Completed', jobId: 3 };
    for (const name of INHERITED) {
      // Owned and absent from the object: it must be null to be accepted, whatever the value inherits.
      assert.deepEqual(
        { ...(dropUnchanged({ [name]: null, Priority: 5 }, current, (k) => k !== 'Priority') as object) },
        { Priority: 5 },
        `${name} given as null is unchanged`,
      );
      assert.throws(
        () => dropUnchanged(JSON.parse(`{${JSON.stringify(name)}: 1}`), current, () => true),
        (e: Error & { status?: number }) =>
          e.status === 400 && e.message.includes(`"${name}" is read-only; it is null`),
        name,
      );
      // Not owned: passed on as a field, for the validator to refuse by name.
      const body = JSON.parse(`{${JSON.stringify(name)}: "x"}`) as Record<string, unknown>;
      assert.deepEqual(Object.entries(dropUnchanged(body, current, () => false) as object), [[name, 'x']]);
    }
    const queue = requireType('Queue');
    assert.deepEqual(
      { ...(dropServerOwned(queue, { constructor: 1, toString: 'x' }, undefined, 'Queue:GLOBAL.Q') as object) },
      { constructor: 1, toString: 'x' },
    );
  });

  test('substitution: an unknown placeholder stays as written, a parameter of any name is substituted', () => {
    for (const name of INHERITED) {
      assert.equal(substitute(`a \${${name}} b`, { jobid: '7' }), `a \${${name}} b`, name);
      const env = parameterEnvironment([parameter(name, 'v')]);
      assert.deepEqual(Object.entries(env), [[name, 'v']], name);
      assert.equal(substitute(`\${${name}}`, { ...env }), 'v', name);
    }
    assert.equal(substitute('${JobId} ${jobid}', { jobid: '7' }), '7 7');
  });

  test('rule-set properties, job environments and Out values keep every name', () => {
    for (const name of INHERITED.filter((n) => /^[A-Za-z_]\w*$/.test(n))) {
      assert.deepEqual(Object.entries(parseRuleSetProperties(`${name}=1,b=2`)), [
        [name, '1'],
        ['b', '2'],
      ]);
      const env = jobEnvironment({ PATH: '/bin' }, { [name]: 'p' }, { MILLRACE_JOB_ID: '1' });
      assert.equal(own(env, name), 'p', name);
    }
    const env = jobEnvironment({}, JSON.parse('{"__proto__": "p"}'), {});
    assert.deepEqual(Object.entries(env), [['__proto__', 'p']]);

    const dir = mkdtempSync(join(tmpdir(), 'millrace-names-'));
    try {
      const paths = workPaths(dir, 1, 1);
      mkdirSync(paths.dir, { recursive: true });
      writeFileSync(paths.out, '__proto__=a\nconstructor=b\ntoString=c\n');
      const out = collectOut('PYTHON', ['__proto__', 'constructor'], paths);
      assert.deepEqual(Object.entries(out), [
        ['__proto__', 'a'],
        ['constructor', 'b'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('CLI profiles: a profile of any name is kept, and a missing one is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'millrace-names-'));
    try {
      const path = join(dir, 'millrace', 'config');
      await saveProfile(path, '__proto__', { server: 'http://a:1/m', api_key: 'ka' });
      await saveProfile(path, 'constructor', { server: 'http://b:1/m', api_key: 'kb' });
      assert.deepEqual(Object.keys(readProfiles(path).profiles), ['__proto__', 'constructor']);
      const env = { XDG_CONFIG_HOME: dir };
      assert.equal(resolveConnection({ profile: '__proto__' }, env).apiKey, 'ka');
      assert.equal(resolveConnection({ profile: 'constructor' }, env).apiKey, 'kb');
      assert.throws(() => resolveConnection({ profile: 'toString' }, env), /no profile "toString"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a JSON body naming __proto__ is refused as such, not called invalid JSON', () => {
    const e = renderError(
      Object.assign(new SyntaxError('Object contains forbidden prototype property'), { statusCode: 400 }),
      1024,
    );
    assert.equal(e.status, 400);
    assert.match(e.message, /__proto__/);
  });
});

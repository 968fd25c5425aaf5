import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { JOB_ACTIONS, jobAction } from '../../../src/domain/job-actions.ts';
import { requireType } from '../../../src/model/registry.ts';
import { backends } from '../../helpers/backends.ts';
import { submitSleep } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { SAMPLES } from '../objects/samples.ts';

/**
 * The OpenAPI document is what the server enforces. Every JSON request body the served document
 * declares is probed field by field from the document itself: a value of the wrong type, past its maxLength,
 * minimum or maximum, outside its enum or its pattern, and a field the schema does not list (where it says
 * `additionalProperties: false`), each alone, and nested one level into list items. Each probe must be refused
 * with 400 naming the field and must change nothing. A body the document lets through but the server refuses, or
 * the reverse, fails here by name.
 */

type Schema = {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  enum?: string[];
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  additionalProperties?: boolean;
  readOnly?: boolean;
};
type Doc = {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
  components: { schemas: Record<string, Schema> };
};

/** One bad body: what it is, the body, and the name the 400's message must hold. */
interface Probe {
  what: string;
  body: Record<string, unknown>;
  names: string;
}

/** Values the schema `s` does not allow, each with what it breaks. */
function badValues(s: Schema): Array<[string, unknown]> {
  if (s.oneOf || s.anyOf) return [['a value of none of its types', { not: 'this' }]];
  const out: Array<[string, unknown]> = [];
  switch (s.type) {
    case 'string':
      out.push(['a number for a string', 12345]);
      if (s.maxLength !== undefined) out.push([`${s.maxLength + 1} characters`, 'x'.repeat(s.maxLength + 1)]);
      if (s.enum) out.push(['a value outside its enum', 'NotOneOfThem']);
      if (s.pattern) out.push(['text outside its pattern', '!not the pattern!']);
      break;
    case 'integer':
    case 'number':
      out.push(['text for a number', 'seven']);
      if (s.type === 'integer') out.push(['a fraction for an integer', 1.5]);
      if (s.minimum !== undefined) out.push([`${s.minimum - 1} (minimum ${s.minimum})`, s.minimum - 1]);
      if (s.maximum !== undefined) out.push([`${s.maximum + 1} (maximum ${s.maximum})`, s.maximum + 1]);
      break;
    case 'boolean':
      out.push(['text for a boolean', 'yes']);
      break;
    case 'array':
      out.push(['text for a list', 'text']);
      break;
    case 'object':
      out.push(['a number for an object', 5]);
      break;
  }
  return out;
}

describe('the OpenAPI document is what the JSON interface enforces', () => {
  const [backend] = backends();
  let t: TestServer;
  let doc: Doc;
  let heldJob: number;
  const resolve = (s: Schema): Schema => {
    const name = s.$ref?.split('/').pop();
    return name ? resolve(doc.components.schemas[name] as Schema) : s;
  };

  /** The probes of a body schema: every property, alone, and every property of its list items. */
  const probesOf = (schema: Schema): Probe[] => {
    const s = resolve(schema);
    const probes: Probe[] = [];
    if (s.additionalProperties === false)
      probes.push({ what: 'a field it does not list', body: { Zz_NotAField: 1 }, names: 'Zz_NotAField' });
    for (const [name, raw] of Object.entries(s.properties ?? {})) {
      const p = resolve(raw);
      if (p.readOnly) continue;
      for (const [what, value] of badValues(p))
        probes.push({ what: `${name}: ${what}`, body: { [name]: value }, names: name });
      const item = p.items ? resolve(p.items) : undefined;
      for (const [inner, rawInner] of Object.entries(item?.properties ?? {}))
        for (const [what, value] of badValues(resolve(rawInner)))
          probes.push({ what: `${name}[0].${inner}: ${what}`, body: { [name]: [{ [inner]: value }] }, names: inner });
    }
    return probes;
  };

  /** Every probe of `schema` sent to `path` is 400 naming its field. */
  const enforce = async (method: string, path: string, schema: Schema): Promise<number> => {
    const probes = probesOf(schema);
    assert.ok(probes.length > 0, `${method} ${path}: the document declares no field to probe`);
    for (const probe of probes) {
      const res = await t.req(method, path, { body: probe.body });
      assert.equal(
        res.status,
        400,
        `${method} ${path} with ${probe.what} (${JSON.stringify(probe.body).slice(0, 80)}): ${res.body}`,
      );
      assert.ok(
        String(res.json?.message).includes(probe.names),
        `${method} ${path} with ${probe.what}: the message names ${probe.names}: ${res.body}`,
      );
    }
    return probes.length;
  };

  const bodyOf = (path: string, method: string): Schema => {
    const op = doc.paths[`${t.base}${path}`]?.[method];
    const schema = op?.requestBody?.content['application/json']?.schema;
    assert.ok(schema, `${method.toUpperCase()} ${path} has a JSON body in the document`);
    return schema;
  };

  before(async () => {
    t = await startTestServer(backend as NonNullable<typeof backend>, { localAgent: false });
    await t.server.app.ready();
    doc = t.server.app.swagger() as unknown as Doc;
    for (const s of SAMPLES) {
      const res = await t.req('POST', `/${s.type}/${s.key}`, { body: s.body });
      assert.equal(res.status, 201, `${s.type} ${s.key}: ${res.body}`);
    }
    heldJob = (await submitSleep(t, 60_000, { HoldOnSubmit: true })).jobId as number;
  });
  after(() => t?.close());

  test('every JSON body the document declares is probed here', () => {
    const probed = new Set([
      ...SAMPLES.flatMap((s) => [`post /${s.type}/{key}`, `put /${s.type}/{key}`]),
      'post /Job/{key}',
      'put /Job/{key}',
      'patch /Job/{key}',
      'post /Job/{key}/{action}',
      'put /Job/{key}/{action}',
      'post /Event/{key}',
      'post /EventDefinition/{key}/clear',
      'post /EventDefinition/{key}/clearAllPending',
      'post /Event/{key}/clear',
      'post /Job/bulk/{action}',
    ]);
    // Replies, forwards and delegations need a question waiting (an operator or user message, an alert): tested in
    // test/integration/people.
    const elsewhere = new Set([
      'put /OperatorMessage/{key}/reply',
      'put /UserMessage/{key}/reply',
      'put /Alert/{key}/reply',
      'put /UserMessage/{key}/forward',
      'put /UserMessage/{key}/delegate',
      // Users and their keys take administrators' bodies: probed in test/integration/auth/accounts-api.test.ts.
      'post /User/{name}',
      'put /User/{name}',
      'post /User/{name}/apikeys',
    ]);
    const declared = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.requestBody?.content['application/json'])
        .map(([method]) => `${method} ${path.slice(t.base.length)}`),
    );
    assert.deepEqual(
      declared.filter((d) => !probed.has(d) && !elsewhere.has(d)),
      [],
      'a JSON body neither probed nor listed as tested elsewhere',
    );
    assert.equal(SAMPLES.length, new Set(SAMPLES.map((s) => s.type)).size, 'one sample per type');
  });

  test('object bodies: POST (create) and PUT (update) of every definition type', async () => {
    for (const s of SAMPLES) {
      const type = requireType(s.type);
      const fresh =
        type.key === 'name' ? 'Probe' : type.key === 'queueProvider' ? 'GLOBAL.System.GLOBAL.Probe' : 'GLOBAL.Probe';
      await enforce('POST', `/${s.type}/${fresh}`, bodyOf(`/${s.type}/{key}`, 'post'));
      assert.equal((await t.req('GET', `/${s.type}/${fresh}`)).status, 404, `${s.type}: no probe created ${fresh}`);
      const before = (await t.req('GET', `/${s.type}/${s.key}`)).json;
      await enforce('PUT', `/${s.type}/${s.key}`, bodyOf(`/${s.type}/{key}`, 'put'));
      assert.deepEqual((await t.req('GET', `/${s.type}/${s.key}`)).json, before, `${s.type}: no probe changed it`);
    }
  });

  test('job bodies: submit, resubmit, and each action with the form the action table names', async () => {
    const jobsBefore = (await t.req('GET', '/Job?fields=jobId')).json.items.length;
    await enforce('POST', '/Job/GLOBAL.System_Sleep', bodyOf('/Job/{key}', 'post'));
    await enforce('POST', '/Job/GLOBAL.System_Sleep/submit', bodyOf('/Job/{key}/{action}', 'post'));
    await enforce('PUT', `/Job/${heldJob}`, bodyOf('/Job/{key}', 'put'));
    const heldBefore = (await t.req('GET', `/Job/${heldJob}`)).json;
    await enforce('PATCH', `/Job/${heldJob}`, bodyOf('/Job/{key}', 'patch'));
    assert.deepEqual((await t.req('GET', `/Job/${heldJob}`)).json, heldBefore, 'no probe changed the job');
    const actionBody = resolve(bodyOf('/Job/{key}/{action}', 'put'));
    const offered = (actionBody.anyOf ?? []).map((s) => s.$ref?.split('/').pop());
    for (const action of JOB_ACTIONS) {
      const form = requireType('Job').forms[jobAction(action).body];
      assert.ok(form && offered.includes(form.id), `${action}: its body ${form?.id} is one the document offers`);
      await enforce('PUT', `/Job/${heldJob}/${action}`, { $ref: `#/components/schemas/${form.id}` });
    }
    // A bulk action's body: probed with an action that would apply to the held job.
    await enforce('POST', '/Job/bulk/cancel', bodyOf('/Job/bulk/{action}', 'post'));
    assert.equal((await t.req('GET', '/Job?fields=jobId')).json.items.length, jobsBefore, 'no probe made a job');
    assert.equal((await t.req('GET', `/Job/${heldJob}`)).json.Status, 'Held', 'no probe acted on the job');
  });

  test('event bodies: raise, clear the raised, clear all pending, clear one', async () => {
    await enforce('POST', '/Event/Finance.LedgerClosed', bodyOf('/Event/{key}', 'post'));
    await enforce(
      'POST',
      '/EventDefinition/Finance.LedgerClosed/clear',
      bodyOf('/EventDefinition/{key}/clear', 'post'),
    );
    await enforce(
      'POST',
      '/EventDefinition/Finance.LedgerClosed/clearAllPending',
      bodyOf('/EventDefinition/{key}/clearAllPending', 'post'),
    );
    const raised = await t.req('POST', '/Event/Finance.LedgerClosed', { body: {} });
    assert.equal(
      raised.json?.eventId,
      'LedgerClosed1',
      `no probe raised an event (or took its number): ${raised.body}`,
    );
    await enforce('POST', '/Event/LedgerClosed1/clear', bodyOf('/Event/{key}/clear', 'post'));
    assert.equal((await t.req('GET', '/Event/LedgerClosed1')).json?.Status, 'Raised', 'no probe cleared it');
  });
});

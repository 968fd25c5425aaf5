import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MillraceError } from '../../../src/errors.ts';
import type { FieldKind, TypeName } from '../../../src/model/fields.ts';
import type { ObjectType } from '../../../src/model/object-type.ts';
import { allTypes, keyShapeOf, requireType } from '../../../src/model/registry.ts';
import { renderObject } from '../../../src/model/render.ts';
import { checkRules, validateObjectBody } from '../../../src/model/validate.ts';

const opts = { mode: 'create', defaultZone: 'UTC', keyShapeOf } as const;

/** Validates a create body (identity included) and runs the type's rules, as a create does. */
function create(type: TypeName, body: Record<string, unknown>): Record<string, unknown> {
  const t = requireType(type);
  const value = validateObjectBody(t, body, opts);
  checkRules(t, value);
  return value;
}

const rejects = (type: TypeName, body: Record<string, unknown>, message: RegExp): void => {
  assert.throws(
    () => create(type, body),
    (e: unknown) => e instanceof MillraceError && e.status === 400 && message.test(e.message),
  );
};

const referencedTypes = (kind: FieldKind): string[] => {
  switch (kind.kind) {
    case 'reference':
      return [kind.type];
    case 'record':
      return kind.fields.flatMap((f) => referencedTypes(f.kind));
    case 'list':
      return referencedTypes(kind.of);
    default:
      return [];
  }
};

test('the registry holds the 24 types of docs/architecture.md §3, each once, under its own name', () => {
  const names = allTypes().map((t) => t.name);
  assert.equal(names.length, 24);
  assert.equal(new Set(names).size, names.length);
  for (const t of allTypes()) assert.equal(requireType(t.name), t);
});

test('field names are unique in every type and in every nested record', () => {
  const check = (fields: ObjectType['fields'], where: string): void => {
    const names = fields.map((f) => f.name);
    assert.equal(new Set(names).size, names.length, `${where} declares a field twice`);
    for (const f of fields) {
      let k = f.kind;
      while (k.kind === 'list') k = k.of;
      if (k.kind === 'record') check(k.fields, `${where}.${f.name}`);
    }
  };
  for (const t of allTypes()) check(t.fields, t.name);
});

test('every reference names a type of the registry', () => {
  const known = new Set<string>(allTypes().map((t) => t.name));
  for (const t of allTypes())
    for (const f of t.fields)
      for (const r of referencedTypes(f.kind)) assert.ok(known.has(r), `${t.name}.${f.name} references ${r}`);
});

test('definition types start with the common fields; runtime types declare only read-only fields', () => {
  for (const t of allTypes()) {
    const first = t.fields.map((f) => f.name);
    if (t.storage === 'runtime') {
      for (const f of t.fields) assert.ok(f.readOnly, `${t.name}.${f.name} should be read-only`);
      continue;
    }
    const expected =
      t.key === 'partitioned'
        ? ['Comment', 'Description', 'Name', 'Partition', 'ParentApplication']
        : t.key === 'queueProvider'
          ? ['Comment', 'Description', 'ProcessServer', 'Queue']
          : ['Comment', 'Description', 'Name'];
    assert.deepEqual(first.slice(0, expected.length), expected, t.name);
    assert.deepEqual(first.slice(-2), ['CreationTime', 'LastModificationTime'], t.name);
  }
});

test('defaults are valid values of their fields', () => {
  for (const t of allTypes()) {
    if (t.storage !== 'definition') continue;
    const withDefaults = t.fields.filter((f) => f.default !== undefined && !f.readOnly);
    const body = Object.fromEntries(withDefaults.map((f) => [f.name, f.default]));
    const value = validateObjectBody(t, body, { ...opts, mode: 'update' });
    for (const f of withDefaults) assert.deepEqual(value[f.name], f.default, `${t.name}.${f.name}`);
  }
});

const chainKey = { Partition: 'GLOBAL', Name: 'Nightly' };
const call = (definition: string, extra: Record<string, unknown> = {}) => ({ JobDefinition: definition, ...extra });

test('a JobChain with steps, calls, mappings and handlers is accepted, with defaults filled in', () => {
  const v = create('JobChain', {
    ...chainKey,
    Steps: [
      { Name: 'Extract', Calls: [call('Extract_A'), call('Extract_B')] },
      {
        Name: 'Load',
        Precondition: { TimeWindow: 'Weekdays' },
        Calls: [
          call('Load', {
            ParameterMappings: [
              { Parameter: 'Day', Source: 'ChainParameter', ChainParameter: 'RunDay' },
              { Parameter: 'Rows', Source: 'CallOutput', FromStep: 'Extract', FromCall: 2, FromParameter: 'Count' },
              { Parameter: 'Mode', Value: 'full' },
            ],
          }),
        ],
        StatusHandlers: [{ Status: 'Error', Action: 'GotoStep', GotoStep: 'Extract' }],
        MaxRestarts: 3,
      },
    ],
    StatusHandlers: [{ Status: 'Otherwise', Action: 'MarkError' }],
  });
  type Rec = Record<string, unknown>;
  const load = ((v.Steps as Rec[])[1]?.Calls as Rec[] | undefined)?.[0] ?? {};
  assert.equal(load.JobDefinition, 'GLOBAL.Load');
  assert.equal(load.HoldOnSubmit, false);
  assert.equal((load.ParameterMappings as Rec[] | undefined)?.[2]?.Source, 'Value');
});

test('JobChain rules name the offending field', () => {
  rejects(
    'JobChain',
    { ...chainKey, Steps: [{ Name: 'A', Calls: [call('X')] }, { Name: 'B' }] },
    /^Field "Steps\[1\]\.Calls" must hold at least one call/,
  );
  rejects(
    'JobChain',
    {
      ...chainKey,
      Steps: [
        { Name: 'A', Calls: [call('X')] },
        { Name: 'A', Calls: [call('Y')] },
      ],
    },
    /^Field "Steps\[1\]\.Name": step A is declared twice/,
  );
  rejects(
    'JobChain',
    {
      ...chainKey,
      Steps: [
        { Name: 'A', Calls: [call('X')], StatusHandlers: [{ Status: 'Error', Action: 'GotoStep', GotoStep: 'Nope' }] },
      ],
    },
    /^Field "Steps\[0\]\.StatusHandlers\[0\]\.GotoStep" must name a step of this chain/,
  );
  rejects(
    'JobChain',
    {
      ...chainKey,
      Steps: [{ Name: 'A', Calls: [call('X')] }],
      StatusHandlers: [{ Status: 'Error', Action: 'GotoStep' }],
    },
    /^Field "StatusHandlers\[0\]\.GotoStep" is required/,
  );
  rejects(
    'JobChain',
    {
      ...chainKey,
      Steps: [
        {
          Name: 'A',
          Calls: [
            call('X', {
              ParameterMappings: [
                { Parameter: 'P', Source: 'CallOutput', FromStep: 'A', FromCall: 1, FromParameter: 'Q' },
              ],
            }),
          ],
        },
      ],
    },
    /^Field "Steps\[0\]\.Calls\[0\]\.ParameterMappings\[0\]\.FromStep" must name an earlier step/,
  );
  rejects(
    'JobChain',
    {
      ...chainKey,
      Steps: [{ Name: 'A', Calls: [call('X', { ParameterMappings: [{ Parameter: 'P', Source: 'ChainParameter' }] })] }],
    },
    /^Field "Steps\[0\]\.Calls\[0\]\.ParameterMappings\[0\]\.ChainParameter" is required/,
  );
  rejects(
    'JobChain',
    { ...chainKey, Steps: [{ Name: 'A', Calls: [{ Description: 'no definition' }] }] },
    /^Field "Steps\[0\]\.Calls\[0\]\.JobDefinition" is required/,
  );
});

test('SubmitFrame needs elements or a cron expression, and each element its own fields', () => {
  const key = { Partition: 'GLOBAL', Name: 'Hourly' };
  assert.equal(create('SubmitFrame', { ...key, Elements: [{ Every: 1, Unit: 'Hours' }] }).SkipWhenClosed, false);
  assert.equal(create('SubmitFrame', { ...key, CronExpression: '0 6 * * 1-5' }).CronExpression, '0 6 * * 1-5');
  rejects('SubmitFrame', key, /^Field "Elements" must hold at least one element/);
  rejects(
    'SubmitFrame',
    { ...key, Elements: [{ Kind: 'Every', Every: 2 }] },
    /^Field "Elements\[0\]\.Unit" is required/,
  );
  rejects(
    'SubmitFrame',
    { ...key, Elements: [{ Kind: 'WindowOpenings' }] },
    /^Field "Elements\[0\]\.TimeWindow" is required/,
  );
  rejects('SubmitFrame', { ...key, CronExpression: 'every hour' }, /^Field "CronExpression" must consist of/);
});

test('objects cannot refer to themselves where that makes a loop', () => {
  rejects('TimeWindow', { Partition: 'GLOBAL', Name: 'W', EnabledDuring: 'W' }, /^Field "EnabledDuring" cannot name/);
  rejects(
    'AlertEscalation',
    { Partition: 'P', Name: 'E', EscalateTo: 'P.E', AcknowledgeWithin: 60 },
    /^Field "EscalateTo" cannot name/,
  );
  assert.equal(
    create('TimeWindow', { Partition: 'GLOBAL', Name: 'W', DisabledDuring: 'Holidays' }).DisabledDuring,
    'GLOBAL.Holidays',
  );
});

test('TimeWindow times are 24-hour, and only an Until may be 24:00', () => {
  const key = { Partition: 'GLOBAL', Name: 'Office' };
  create('TimeWindow', {
    ...key,
    Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday', FromTime: '08:00', UntilTime: '24:00' }],
  });
  rejects(
    'TimeWindow',
    { ...key, Elements: [{ FromTime: '24:00' }] },
    /^Field "Elements\[0\]\.FromTime" must consist of/,
  );
  rejects(
    'TimeWindow',
    { ...key, Elements: [{ UntilTime: '8:00' }] },
    /^Field "Elements\[0\]\.UntilTime" must consist of/,
  );
});

test('a JobDefinitionAlertSource needs a name pattern and at least one status', () => {
  const key = { Partition: 'GLOBAL', Name: 'Failures' };
  const v = create('JobDefinitionAlertSource', { ...key, NamePattern: 'Load_*', Statuses: [{ Status: 'Error' }] });
  assert.deepEqual(v.Statuses, [
    { Status: 'Error', DelayAmount: 0, DelayUnits: 'Minutes', Message: null, Cause: null },
  ]);
  const killed = [{ Status: 'Killed' }, { Status: 'Killed', Cause: 'maxruntime' }];
  const both = create('JobDefinitionAlertSource', { ...key, NamePattern: '*', Statuses: killed });
  assert.deepEqual(
    (both.Statuses as Array<{ Cause: string | null }>).map((s) => s.Cause),
    [null, 'maxruntime'],
  );
  rejects(
    'JobDefinitionAlertSource',
    { ...key, NamePattern: '*', Statuses: [...killed, { Status: 'Killed', Cause: 'maxruntime' }] },
    /^Field "Statuses\[2\].Status": Killed with Cause maxruntime is listed twice/,
  );
  rejects(
    'JobDefinitionAlertSource',
    { ...key, NamePattern: 'Load_*' },
    /^Field "Statuses" must hold at least one status/,
  );
  rejects('JobDefinitionAlertSource', { ...key, Statuses: [{ Status: 'Error' }] }, /^Field "NamePattern" is required/);
  rejects(
    'JobDefinitionAlertSource',
    { ...key, NamePattern: 'Load_*', Enabled: false },
    /^Field "Enabled" is read-only/,
  );
});

test('a Credential requires its real user; its password is accepted but never rendered', () => {
  const v = create('Credential', {
    Partition: 'GLOBAL',
    Name: 'Db',
    RealUser: 'etl',
    Password: 's3cret',
    Endpoint: 'db1.example.com',
  });
  assert.equal(v.Protocol, 'login');
  assert.equal(v.Password, 's3cret');
  const out = renderObject(requireType('Credential'), { uniqueId: 7, businessKey: 'Credential:GLOBAL.Db' }, v);
  assert.equal('Password' in out, false);
  assert.equal(out.RealUser, 'etl');
  rejects('Credential', { Partition: 'GLOBAL', Name: 'Db' }, /^Field "RealUser" is required/);
});

test('runtime types refuse every field on input', () => {
  rejects('Job', { Status: 'Completed' }, /^Field "Status" is read-only/);
  rejects('Event', { RaiserComment: 'hi' }, /^Field "RaiserComment" is read-only/);
});

test("an HTTP definition's Headers are an object of header names and one-line texts", () => {
  const http = (Headers: unknown) => ({
    Partition: 'GLOBAL',
    Name: 'Call',
    JobDefinitionType: 'HTTP',
    Http: { Url: 'http://x/', Headers },
  });
  const headersOf = (v: Record<string, unknown>): unknown => {
    const h = v.Http;
    return typeof h === 'object' && h !== null && 'Headers' in h ? h.Headers : undefined;
  };
  assert.deepEqual(headersOf(create('JobDefinition', http({ Accept: 'application/json', 'X-Order': '${ORDER}' }))), {
    Accept: 'application/json',
    'X-Order': '${ORDER}',
  });
  assert.deepEqual(headersOf(create('JobDefinition', { ...http(undefined), Http: { Url: 'http://x/' } })), {});
  // Names that are also names of Object.prototype are stored as own names; the prototype is untouched.
  const odd = headersOf(create('JobDefinition', http(JSON.parse('{"__proto__": "x", "constructor": "y"}'))));
  assert.ok(typeof odd === 'object' && odd !== null);
  assert.equal(Object.getPrototypeOf(odd), Object.prototype);
  assert.deepEqual(Object.entries(odd), [
    ['__proto__', 'x'],
    ['constructor', 'y'],
  ]);
  rejects('JobDefinition', http([{ Name: 'Accept', Value: 'x' }]), /"Http.Headers" must be an object/);
  rejects('JobDefinition', http({ 'Bad Name': 'x' }), /"Http.Headers.Bad Name" is not a valid name/);
  rejects('JobDefinition', http({ 'X:Y': 'x' }), /"Http.Headers.X:Y" is not a valid name/);
  rejects('JobDefinition', http({ '': 'x' }), /is not a valid name/);
  rejects('JobDefinition', http({ Accept: 'a', accept: 'b' }), /"Http.Headers.accept" is given twice/);
  rejects('JobDefinition', http({ Accept: 1 }), /"Http.Headers.Accept" must be a string/);
  rejects('JobDefinition', http({ Accept: null }), /"Http.Headers.Accept" must be a string/);
  rejects('JobDefinition', http({ Accept: 'a\r\nX-Evil: 1' }), /"Http.Headers.Accept" must be a single line/);
  rejects('JobDefinition', http({ Accept: 'a'.repeat(4001) }), /at most 4000 characters/);
  const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`X-${i}`, 'v']));
  rejects('JobDefinition', http(many), /"Http.Headers" must hold at most 50 entries/);
  assert.equal(
    Object.keys(headersOf(create('JobDefinition', http(Object.fromEntries(Object.entries(many).slice(1))))) ?? {})
      .length,
    50,
  );
});

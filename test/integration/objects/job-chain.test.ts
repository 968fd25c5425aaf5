import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/** Every value of `expected` appears in `actual` (stored records also hold their defaults). */
function assertContains(actual: unknown, expected: unknown, path: string): void {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path} is a list`);
    assert.equal(actual.length, expected.length, `${path} length`);
    for (const [i, e] of expected.entries()) assertContains(actual[i], e, `${path}[${i}]`);
  } else if (typeof expected === 'object' && expected !== null) {
    for (const [k, v] of Object.entries(expected))
      assertContains((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
  } else assert.deepEqual(actual, expected, path);
}

const call = (JobDefinition: string, ParameterMappings: unknown[] = []) => ({ JobDefinition, ParameterMappings });

/** Two steps: Extract gets Source from the chain's Day; Load gets Rows from Extract's output. */
const NIGHTLY = {
  Steps: [
    {
      Name: 'Extract',
      Calls: [
        call('GLOBAL.Extract', [
          { Parameter: 'Source', Source: 'ChainParameter', ChainParameter: 'Day' },
          { Parameter: 'Mode', Value: 'full' },
        ]),
      ],
      StatusHandlers: [{ Status: 'Error', Action: 'GotoStep', GotoStep: 'Load' }],
    },
    {
      Name: 'Load',
      Precondition: { Expression: "Day != null and (Mode == 'full' or Rows > 0)" },
      Calls: [
        call('GLOBAL.Load', [
          { Parameter: 'Rows', Source: 'CallOutput', FromStep: 'Extract', FromCall: 1, FromParameter: 'Rows' },
          { Parameter: 'Target', Value: 'dw' },
        ]),
        call('GLOBAL.Extract', [
          { Parameter: 'Mode', Source: 'CallOutput', FromStep: 'Extract', FromCall: 1, FromParameter: 'Mode' },
        ]),
      ],
    },
  ],
  StatusHandlers: [{ Status: 'Otherwise', Action: 'MarkError' }],
};

for (const backend of backends()) {
  describe(`job chain structure (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      const defs: Array<[string, unknown]> = [
        [
          'Extract',
          {
            Parameters: [
              { Name: 'Source' },
              { Name: 'Rows', Direction: 'Out', DataType: 'Number' },
              { Name: 'Mode', Direction: 'InOut' },
            ],
          },
        ],
        ['Load', { Parameters: [{ Name: 'Rows', DataType: 'Number' }, { Name: 'Target' }] }],
        // A chain's definition may be created first, to declare the chain's parameters.
        ['Nightly', { JobDefinitionType: 'JobChain', Parameters: [{ Name: 'Day' }] }],
      ];
      for (const [name, body] of defs) {
        const res = await t.req('POST', `/JobDefinition/${name}`, { body });
        assert.equal(res.status, 201, res.body);
      }
    });
    after(() => t.close());

    /** Every stored chain and definition: a refused request must leave it as it was. */
    const state = async () =>
      JSON.stringify([
        await t.server.store.listObjects('JobChain', { limit: 1000 }),
        await t.server.store.listObjects('JobDefinition', { limit: 1000 }),
      ]);

    const expectRejected = async (method: string, path: string, body: unknown, message: RegExp) => {
      const snapshot = await state();
      const res = await t.req(method, path, { body });
      assert.equal(res.status, 400, `${method} ${path}: ${res.body}`);
      assert.equal(res.json?.code, '400');
      assert.match(res.json?.message, message);
      assert.equal(await state(), snapshot, 'stored state unchanged');
      if (method === 'POST') {
        assert.equal((await t.req('GET', path)).status, 404, `${path} not created`);
        const defPath = path.replace('/JobChain/', '/JobDefinition/');
        assert.equal((await t.req('GET', defPath)).status, 404, `${defPath} not auto-created`);
      }
    };

    test('POST a chain with steps, calls and mappings; GET returns its structure', async () => {
      const res = await t.req('POST', '/JobChain/Nightly', { body: NIGHTLY });
      assert.equal(res.status, 201, res.body);
      const got = await t.req('GET', '/JobChain/Nightly');
      assert.equal(got.status, 200);
      assertContains(got.json, { ...NIGHTLY, Name: 'Nightly', Partition: 'GLOBAL' }, 'JobChain');
      assert.equal(got.json.Steps[0].Calls[0].ParameterMappings[1].Source, 'Value', 'the default source');
      const def = (await t.req('GET', '/JobDefinition/Nightly')).json;
      assert.equal(def.JobDefinitionType, 'JobChain');
      assert.deepEqual(
        def.Parameters.map((p: { Name: string }) => p.Name),
        ['Day'],
        'the existing definition is kept',
      );
    });

    test('PUT edits the steps', async () => {
      const Steps = [
        ...NIGHTLY.Steps,
        { Name: 'Report', Calls: [call('Load', [{ Parameter: 'Target', Value: 'report' }])], MaxRestarts: 3 },
      ];
      const res = await t.req('PUT', '/JobChain/Nightly', { body: { Steps } });
      assert.equal(res.status, 200, res.body);
      const got = (await t.req('GET', '/JobChain/Nightly')).json;
      assert.deepEqual(
        got.Steps.map((s: { Name: string }) => s.Name),
        ['Extract', 'Load', 'Report'],
      );
      assert.equal(got.Steps[2].MaxRestarts, 3);
      assert.equal(got.Steps[2].Calls[0].ParameterMappings[0].Value, 'report');
      assertContains(got.StatusHandlers, NIGHTLY.StatusHandlers, 'StatusHandlers, not sent, are kept');
    });

    test('creating a chain auto-creates its JobDefinition on the System queue', async () => {
      const res = await t.req('POST', '/JobChain/Weekly', {
        body: { Steps: [{ Name: 'One', Calls: [call('Load')] }] },
      });
      assert.equal(res.status, 201, res.body);
      const def = await t.req('GET', '/JobDefinition/Weekly');
      assert.equal(def.status, 200);
      assert.equal(def.json.JobDefinitionType, 'JobChain');
      assert.equal(def.json.DefaultQueue, 'GLOBAL.System');
      assert.deepEqual(def.json.Parameters, []);
      const chain = (await t.req('GET', '/JobChain/Weekly')).json;
      assert.equal(chain.Steps[0].Calls[0].JobDefinition, 'GLOBAL.Load', 'a bare name means partition GLOBAL');
    });

    test('a chain that calls itself → 400', async () => {
      const Steps = [{ Name: 'Again', Calls: [call('Nightly')] }];
      await expectRejected(
        'PUT',
        '/JobChain/Nightly',
        { Steps },
        /^Field "Steps\[0\]\.Calls\[0\]\.JobDefinition": a chain cannot call itself \(GLOBAL\.Nightly\)$/,
      );
    });

    test('a cycle through nested chains → 400 naming the path', async () => {
      const chains: Array<[string, string]> = [
        ['CycA', 'Load'],
        ['CycB', 'CycA'],
        ['CycC', 'CycB'],
      ];
      for (const [name, target] of chains) {
        const res = await t.req('POST', `/JobChain/${name}`, {
          body: { Steps: [{ Name: 'S', Calls: [call(target)] }] },
        });
        assert.equal(res.status, 201, res.body);
      }
      const via = (target: string) => ({
        Steps: [
          { Name: 'S', Calls: [call('Load')] },
          { Name: 'T', Calls: [call(target)] },
        ],
      });
      await expectRejected(
        'PUT',
        '/JobChain/CycA',
        via('CycB'),
        /^Field "Steps\[1\]\.Calls\[0\]\.JobDefinition": .*GLOBAL\.CycA → GLOBAL\.CycB → GLOBAL\.CycA$/,
      );
      await expectRejected(
        'PUT',
        '/JobChain/CycA',
        via('CycC'),
        /GLOBAL\.CycA → GLOBAL\.CycC → GLOBAL\.CycB → GLOBAL\.CycA$/,
      );
      // Calling a nested chain that does not lead back is fine.
      const ok = await t.req('PUT', '/JobChain/Weekly', { body: via('CycC') });
      assert.equal(ok.status, 200, ok.body);
    });

    test('a mapping to a parameter the called definition has not as input → 400', async () => {
      const body = (mapping: unknown) => ({ Steps: [{ Name: 'S', Calls: [call('Load', [mapping])] }] });
      await expectRejected(
        'POST',
        '/JobChain/BadMap',
        body({ Parameter: 'Nope', Value: '1' }),
        /^Field "Steps\[0\]\.Calls\[0\]\.ParameterMappings\[0\]\.Parameter": GLOBAL\.Load has no In or InOut parameter Nope$/,
      );
      await expectRejected(
        'POST',
        '/JobChain/BadMap',
        { Steps: [{ Name: 'S', Calls: [call('Extract', [{ Parameter: 'Rows', Value: '1' }])] }] },
        /GLOBAL\.Extract has no In or InOut parameter Rows/,
      );
    });

    test('a ChainParameter the chain does not have → 400', async () => {
      const mapping = { Parameter: 'Source', Source: 'ChainParameter', ChainParameter: 'Day' };
      const body = { Steps: [{ Name: 'S', Calls: [call('Extract', [mapping])] }] };
      await expectRejected(
        'POST',
        '/JobChain/Fresh',
        body,
        /^Field "Steps\[0\]\.Calls\[0\]\.ParameterMappings\[0\]\.ChainParameter": JobDefinition GLOBAL\.Fresh does not exist yet.*create the JobDefinition GLOBAL\.Fresh .*with its Parameters first$/,
      );
      await expectRejected(
        'PUT',
        '/JobChain/Nightly',
        { Steps: [{ Name: 'S', Calls: [call('Extract', [{ ...mapping, ChainParameter: 'Month' }])] }] },
        /"Steps\[0\]\.Calls\[0\]\.ParameterMappings\[0\]\.ChainParameter": JobDefinition GLOBAL\.Nightly has no parameter Month$/,
      );
    });

    test('a FromParameter that is not an Out parameter of the earlier call → 400', async () => {
      const from = (FromParameter: string) => ({
        Steps: [
          { Name: 'First', Calls: [call('Load'), call('Extract')] },
          {
            Name: 'Second',
            Calls: [
              call('Load', [
                { Parameter: 'Rows', Source: 'CallOutput', FromStep: 'First', FromCall: 2, FromParameter },
              ]),
            ],
          },
        ],
      });
      await expectRejected(
        'POST',
        '/JobChain/BadFrom',
        from('Source'),
        /^Field "Steps\[1\]\.Calls\[0\]\.ParameterMappings\[0\]\.FromParameter": GLOBAL\.Extract \(call 2 of step First\) has no Out or InOut parameter Source$/,
      );
      await expectRejected('POST', '/JobChain/BadFrom', from('Missing'), /no Out or InOut parameter Missing$/);
      const ok = await t.req('POST', '/JobChain/BadFrom', { body: from('Rows') });
      assert.equal(ok.status, 201, ok.body);
    });

    test('a step with no calls → 400', async () => {
      await expectRejected(
        'POST',
        '/JobChain/Empty',
        { Steps: [{ Name: 'S', Calls: [] }] },
        /^Field "Steps\[0\]\.Calls" must hold at least one call/,
      );
    });

    test('a precondition expression that does not parse → 400 saying where', async () => {
      const Steps = [{ Name: 'S', Calls: [call('Load')], Precondition: { Expression: 'Day = 1' } }];
      await expectRejected(
        'POST',
        '/JobChain/BadExpr',
        { Steps },
        /^Field "Steps\[0\]\.Precondition\.Expression": unexpected "=" at position 5; equality is written ==$/,
      );
      const callExpr = [{ Name: 'S', Calls: [{ JobDefinition: 'Load', Precondition: { Expression: 'Day ==' } }] }];
      await expectRejected(
        'PUT',
        '/JobChain/Nightly',
        { Steps: callExpr },
        /^Field "Steps\[0\]\.Calls\[0\]\.Precondition\.Expression": expected a parameter name.* after "==" at position 7/,
      );
    });

    test('a GotoStep to a step the chain does not have → 400', async () => {
      const Steps = [
        {
          Name: 'S',
          Calls: [call('Load')],
          StatusHandlers: [{ Status: 'Error', Action: 'GotoStep', GotoStep: 'Nowhere' }],
        },
      ];
      await expectRejected(
        'POST',
        '/JobChain/BadGoto',
        { Steps },
        /"Steps\[0\]\.StatusHandlers\[0\]\.GotoStep".*Nowhere/,
      );
    });

    test("the chain's definition must be of type JobChain, and stays so", async () => {
      const snapshot = await state();
      const res = await t.req('POST', '/JobChain/Extract', { body: { Steps: [{ Name: 'S', Calls: [call('Load')] }] } });
      assert.equal(res.status, 400, res.body);
      assert.match(res.json.message, /JobDefinition GLOBAL\.Extract has JobDefinitionType BASH/);
      assert.equal(await state(), snapshot);
      await expectRejected(
        'PUT',
        '/JobDefinition/Nightly',
        { JobDefinitionType: 'BASH' },
        /^Field "JobDefinitionType": JobChain GLOBAL\.Nightly uses this definition/,
      );
    });
  });
}

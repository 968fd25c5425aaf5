import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  type Candidate,
  candidateLanes,
  type DispatchState,
  placeCandidate,
  planDispatch,
  type ProviderState,
  Slots,
  type QueueState,
  type ServerState,
  type SlotCount,
} from '../../../src/domain/dispatch-plan.ts';

const queue = (key: string, o: Partial<QueueState> = {}): QueueState => ({
  key,
  held: false,
  executionSize: null,
  holdLevel: null,
  inclusive: false,
  inclusiveConsole: false,
  ...o,
});
const provider = (processServer: string, q: string, o: Partial<ProviderState> = {}): ProviderState => ({
  queue: q,
  processServer,
  held: false,
  executionSize: null,
  holdLevel: null,
  inclusive: false,
  ...o,
});
const server = (key: string, o: Partial<ServerState> = {}): ServerState => ({
  key,
  available: true,
  definitionTypes: ['BASH'],
  executionSize: null,
  ...o,
});
const state = (queues: QueueState[], providers: ProviderState[], servers: ServerState[]): DispatchState => ({
  queues: new Map(queues.map((q) => [q.key, q])),
  providers,
  servers: new Map(servers.map((s) => [s.key, s])),
});
const job = (jobId: number, q: string, o: Partial<Candidate> = {}): Candidate => ({
  jobId,
  queue: q,
  priority: 50,
  definitionType: 'BASH',
  runNow: false,
  ...o,
});

describe('dispatch planning (docs/architecture.md §8)', () => {
  test('respects the queue, provider and server limits: the most restrictive wins', () => {
    const s = state(
      [queue('Q', { executionSize: 5 })],
      [provider('A', 'Q', { executionSize: 2 }), provider('B', 'Q')],
      [server('A'), server('B', { executionSize: 1 })],
    );
    const plan = planDispatch(
      s,
      [],
      [1, 2, 3, 4, 5, 6].map((i) => job(i, 'Q')),
    );
    assert.equal(plan.length, 3);
    assert.equal(plan.filter((a) => a.processServer === 'A').length, 2);
    assert.equal(plan.filter((a) => a.processServer === 'B').length, 1);
  });

  test('held queues and providers, HoldLevel, unavailable servers and missing definition types start nothing', () => {
    const base = [server('A')];
    assert.equal(
      planDispatch(state([queue('Q', { held: true })], [provider('A', 'Q')], base), [], [job(1, 'Q')]).length,
      0,
    );
    assert.equal(
      planDispatch(state([queue('Q')], [provider('A', 'Q', { held: true })], base), [], [job(1, 'Q')]).length,
      0,
    );
    assert.equal(
      planDispatch(state([queue('Q', { holdLevel: 60 })], [provider('A', 'Q')], base), [], [job(1, 'Q')]).length,
      0,
    );
    assert.equal(
      planDispatch(state([queue('Q')], [provider('A', 'Q')], [server('A', { available: false })]), [], [job(1, 'Q')])
        .length,
      0,
    );
    assert.equal(
      planDispatch(state([queue('Q')], [provider('A', 'Q')], base), [], [job(1, 'Q', { definitionType: 'PYTHON' })])
        .length,
      0,
    );
  });

  test('runnow ignores the queue hold and limits but still needs a server that can run it', () => {
    const s = state(
      [queue('Q', { held: true, executionSize: 0 })],
      [provider('A', 'Q', { held: true })],
      [server('A')],
    );
    assert.deepEqual(planDispatch(s, [], [job(1, 'Q', { runNow: true })]), [{ jobId: 1, processServer: 'A' }]);
    assert.deepEqual(candidateLanes(s, []), [], 'found through the engine, not through a lane');
  });

  test('Waiting and Console jobs count against a queue only when it says so', () => {
    const s = state([queue('Q', { executionSize: 1 })], [provider('A', 'Q')], [server('A')]);
    const waiting: SlotCount[] = [{ queue: 'Q', processServer: 'A', status: 'Waiting', count: 1 }];
    assert.equal(planDispatch(s, waiting, [job(1, 'Q')]).length, 1);
    const inclusive = state([queue('Q', { executionSize: 1, inclusive: true })], [provider('A', 'Q')], [server('A')]);
    assert.equal(planDispatch(inclusive, waiting, [job(1, 'Q')]).length, 0);
  });

  test('property: whatever the state, no limit is exceeded and no job is assigned twice', () => {
    const limit = fc.option(fc.integer({ min: 0, max: 4 }), { nil: null });
    fc.assert(
      fc.property(
        fc.array(fc.record({ size: limit, held: fc.boolean() }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.record({ size: limit, available: fc.boolean() }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.record({ q: fc.nat(2), s: fc.nat(2), size: limit, held: fc.boolean() }), { maxLength: 6 }),
        fc.array(fc.record({ q: fc.nat(2), s: fc.nat(2), n: fc.integer({ min: 1, max: 3 }) }), { maxLength: 4 }),
        fc.array(fc.record({ q: fc.nat(2), priority: fc.integer({ min: 1, max: 100 }) }), { maxLength: 30 }),
        (qs, ss, ps, running, jobs) => {
          const queues = qs.map((q, i) => queue(`Q${i}`, { executionSize: q.size, held: q.held }));
          const servers = ss.map((s, i) => server(`S${i}`, { executionSize: s.size, available: s.available }));
          const seen = new Set<string>();
          const providers = ps
            .filter(
              (p) =>
                p.q < queues.length && p.s < servers.length && !seen.has(`${p.s}|${p.q}`) && seen.add(`${p.s}|${p.q}`),
            )
            .map((p) => provider(`S${p.s}`, `Q${p.q}`, { executionSize: p.size, held: p.held }));
          const active: SlotCount[] = running
            .filter((r) => r.q < queues.length && r.s < servers.length)
            .map((r) => ({ queue: `Q${r.q}`, processServer: `S${r.s}`, status: 'Running', count: r.n }));
          const candidates = jobs
            .filter((j) => j.q < queues.length)
            .map((j, i) => job(i + 1, `Q${j.q}`, { priority: j.priority }));
          const plan = planDispatch(state(queues, providers, servers), active, candidates);
          assert.equal(new Set(plan.map((a) => a.jobId)).size, plan.length);
          const used = (pred: (q: string, s: string) => boolean) =>
            active.filter((a) => pred(a.queue, a.processServer as string)).reduce((n, a) => n + a.count, 0) +
            plan.filter((a) => pred((candidates.find((c) => c.jobId === a.jobId) as Candidate).queue, a.processServer))
              .length;
          for (const q of queues) {
            const assigned = plan.filter(
              (a) => (candidates.find((c) => c.jobId === a.jobId) as Candidate).queue === q.key,
            );
            if (q.held) assert.equal(assigned.length, 0);
            if (q.executionSize !== null && assigned.length > 0) assert.ok(used((x) => x === q.key) <= q.executionSize);
          }
          for (const s of servers) {
            const assigned = plan.filter((a) => a.processServer === s.key);
            if (!s.available) assert.equal(assigned.length, 0);
            if (s.executionSize !== null && assigned.length > 0)
              assert.ok(used((_, x) => x === s.key) <= s.executionSize);
          }
          for (const p of providers) {
            const assigned = plan.filter(
              (a) =>
                a.processServer === p.processServer &&
                (candidates.find((c) => c.jobId === a.jobId) as Candidate).queue === p.queue,
            );
            if (p.held) assert.equal(assigned.length, 0);
            if (p.executionSize !== null && assigned.length > 0)
              assert.ok(used((q, s) => q === p.queue && s === p.processServer) <= p.executionSize);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  test('lanes: a queue and a type with the room its free servers give, none for a full or held queue', () => {
    const s = state(
      [queue('Q', { executionSize: 10 }), queue('Full', { executionSize: 1 }), queue('H', { held: true })],
      [
        provider('A', 'Q', { executionSize: 2 }),
        provider('B', 'Q'),
        provider('Sys', 'Q'),
        provider('A', 'Full'),
        provider('A', 'H'),
      ],
      [
        server('A', { executionSize: 5 }),
        server('B', { executionSize: 3 }),
        server('Sys', { definitionTypes: ['System'] }),
      ],
    );
    const active: SlotCount[] = [
      { queue: 'Q', processServer: 'B', status: 'Running', count: 3 },
      { queue: 'Full', processServer: 'A', status: 'Running', count: 1 },
    ];
    assert.deepEqual(candidateLanes(s, active), [
      { queue: 'Q', definitionType: 'BASH', room: 2 }, // A: provider 2 of 2 free; B full
      { queue: 'Q', definitionType: 'System', room: 7 }, // Sys unlimited; the queue has 7 of 10 left
    ]);
  });

  test('property: planning only the first `room` jobs of every lane starts exactly what planning them all starts', () => {
    const limit = fc.option(fc.integer({ min: 0, max: 4 }), { nil: null });
    const level = fc.option(fc.integer({ min: 1, max: 100 }), { nil: null });
    const types = fc.subarray(['BASH', 'System'], { minLength: 1 });
    fc.assert(
      fc.property(
        fc.array(fc.record({ size: limit, held: fc.boolean(), level }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.record({ size: limit, available: fc.boolean(), types }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.record({ q: fc.nat(2), s: fc.nat(2), size: limit, held: fc.boolean(), level }), { maxLength: 6 }),
        fc.array(fc.record({ q: fc.nat(2), s: fc.nat(2), n: fc.integer({ min: 1, max: 3 }) }), { maxLength: 4 }),
        fc.array(
          fc.record({
            q: fc.nat(2),
            priority: fc.integer({ min: 1, max: 100 }),
            type: fc.constantFrom('BASH', 'System'),
            runNow: fc.boolean(),
          }),
          { maxLength: 30 },
        ),
        (qs, ss, ps, running, jobs) => {
          const queues = qs.map((q, i) => queue(`Q${i}`, { executionSize: q.size, held: q.held, holdLevel: q.level }));
          const servers = ss.map((s, i) =>
            server(`S${i}`, { executionSize: s.size, available: s.available, definitionTypes: s.types }),
          );
          const seen = new Set<string>();
          const providers = ps
            .filter(
              (p) =>
                p.q < queues.length && p.s < servers.length && !seen.has(`${p.s}|${p.q}`) && seen.add(`${p.s}|${p.q}`),
            )
            .map((p) => provider(`S${p.s}`, `Q${p.q}`, { executionSize: p.size, held: p.held, holdLevel: p.level }));
          const active: SlotCount[] = running
            .filter((r) => r.q < queues.length && r.s < servers.length)
            .map((r) => ({ queue: `Q${r.q}`, processServer: `S${r.s}`, status: 'Running', count: r.n }));
          // The engine's order: runnow jobs first, then dispatch order (priority, then age).
          const all = jobs
            .filter((j) => j.q < queues.length)
            .map((j, i) => job(i + 1, `Q${j.q}`, { priority: j.priority, definitionType: j.type, runNow: j.runNow }))
            .sort((a, b) => Number(b.runNow) - Number(a.runNow) || b.priority - a.priority || a.jobId - b.jobId);
          const st = state(queues, providers, servers);
          const lanes = candidateLanes(st, active);
          const read = all.filter((c) => c.runNow);
          for (const lane of lanes)
            read.push(
              ...all
                .filter((c) => !c.runNow && c.queue === lane.queue && c.definitionType === lane.definitionType)
                .slice(0, lane.room),
            );
          const ordered = all.filter((c) => read.includes(c));
          assert.deepEqual(planDispatch(st, active, ordered), planDispatch(st, active, all));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('placeCandidate: the reasons a candidate does not start, with their figures (docs/architecture.md §8)', () => {
  const place = (s: DispatchState, active: SlotCount[], c: Candidate) => placeCandidate(s, new Slots(s, active), c);
  const running = (queue: string, processServer: string, count: number): SlotCount => ({
    queue,
    processServer,
    status: 'Running',
    count,
  });

  test("the queue's checks: held, its window closed (until it opens), full (n of n) and HoldLevel, each listed", () => {
    const s = state(
      [queue('Q', { held: true, closed: { window: 'W', opens: 1234 }, executionSize: 2, holdLevel: 60 })],
      [provider('A', 'Q')],
      [server('A')],
    );
    assert.deepEqual(place(s, [running('Q', 'A', 2)], job(1, 'Q')).blockers, [
      { code: 'QueueHeld', queue: 'Q' },
      { code: 'TimeWindowClosed', queue: 'Q', window: 'W', opens: 1234 },
      { code: 'QueueFull', queue: 'Q', running: 2, size: 2 },
      { code: 'HoldLevel', queue: 'Q', priority: 50, holdLevel: 60 },
    ]);
    assert.deepEqual(candidateLanes(s, []), [], 'a closed window gives its queue no lane');
  });

  test('every server behind the queue that runs the type says why it cannot take the job', () => {
    const s = state(
      [queue('Q')],
      [
        provider('Stopped', 'Q'),
        provider('Away', 'Q'),
        provider('Busy', 'Q'),
        provider('Narrow', 'Q', { executionSize: 1 }),
        provider('Picky', 'Q', { holdLevel: 70 }),
        provider('Paused', 'Q', { held: true }),
        provider('Python', 'Q'),
      ],
      [
        server('Stopped', { available: false, down: 'ProcessServerStopped' }),
        server('Away', { available: false, down: 'AgentDisconnected' }),
        server('Busy', { executionSize: 3 }),
        server('Narrow'),
        server('Picky'),
        server('Paused'),
        server('Python', { definitionTypes: ['PYTHON'] }),
      ],
    );
    const active = [running('Q', 'Busy', 3), running('Q', 'Narrow', 1)];
    assert.deepEqual(place(s, active, job(1, 'Q')).blockers, [
      { code: 'ProcessServerStopped', processServer: 'Stopped' },
      { code: 'AgentDisconnected', processServer: 'Away' },
      { code: 'ProcessServerFull', processServer: 'Busy', running: 3, size: 3 },
      { code: 'QueueFull', queue: 'Q', processServer: 'Narrow', running: 1, size: 1 },
      { code: 'HoldLevel', queue: 'Q', processServer: 'Picky', priority: 50, holdLevel: 70 },
      { code: 'QueueHeld', queue: 'Q', processServer: 'Paused' },
    ]);
    assert.deepEqual(planDispatch(s, active, [job(1, 'Q')]), [], 'the planner starts nothing either');
    assert.deepEqual(
      place(s, active, job(2, 'Q', { priority: 80 })),
      { server: 'Picky', used: 0 },
      'above its HoldLevel',
    );
  });

  test('NoProcessServer: no provider at all, or none whose server runs the type', () => {
    assert.deepEqual(place(state([queue('Q')], [], [server('A')]), [], job(1, 'Q')).blockers, [
      { code: 'NoProcessServer', queue: 'Q', definitionType: 'BASH', providers: 0 },
    ]);
    const s = state([queue('Q')], [provider('A', 'Q')], [server('A', { definitionTypes: ['System'] })]);
    assert.deepEqual(place(s, [], job(1, 'Q', { definitionType: 'UserMessage' })).blockers, [
      { code: 'NoProcessServer', queue: 'Q', definitionType: 'UserMessage', providers: 1 },
    ]);
  });

  test('a free server answers the least busy one and no reason; runnow leaves only the servers’ own checks', () => {
    const s = state(
      [queue('Q', { held: true, executionSize: 0 })],
      [provider('A', 'Q', { held: true }), provider('B', 'Q')],
      [server('A', { executionSize: 1 }), server('B')],
    );
    assert.deepEqual(place(s, [running('Q', 'A', 1)], job(1, 'Q', { runNow: true })), { server: 'B', used: 0 });
    assert.deepEqual(place(s, [running('Q', 'A', 1)], job(1, 'Q', { runNow: true, definitionType: 'SH' })).blockers, [
      { code: 'NoProcessServer', queue: 'Q', definitionType: 'SH', providers: 2 },
    ]);
    const open = state([queue('Q')], [provider('A', 'Q'), provider('B', 'Q')], [server('A'), server('B')]);
    assert.deepEqual(place(open, [running('Q', 'A', 2)], job(1, 'Q')), { server: 'B', used: 0 });
  });
});

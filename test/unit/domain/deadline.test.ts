import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  type DeadlineAlertKind,
  type DeadlineRule,
  judgeRun,
  runDeadline,
  runState,
  todaysDeadline,
} from '../../../src/domain/deadline.ts';
import type { JobStatus } from '../../../src/domain/job-status.ts';

const AMS = 'Europe/Amsterdam';
const MIN = 60_000;
/** Monday 23 November 2026, 05:00 in Amsterdam (CET, UTC+1). */
const MON_0500 = Date.UTC(2026, 10, 23, 4, 0);
const DAY = 86_400_000;

const rule = (over: Partial<DeadlineRule> = {}): DeadlineRule => ({
  endBy: '06:00',
  zone: AMS,
  leadMs: 30 * MIN,
  ...over,
});
const weekdays: DeadlineRule['window'] = {
  zone: AMS,
  elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday' }],
};

test("a run's deadline is the first EndBy after its requested start, in the deadline's zone", () => {
  assert.equal(runDeadline(rule(), MON_0500), MON_0500 + 60 * MIN, '05:00 → 06:00 the same morning');
  assert.equal(runDeadline(rule(), MON_0500 + 90 * MIN), MON_0500 + DAY + 60 * MIN, '06:30 → 06:00 the next day');
  assert.equal(runDeadline(rule(), MON_0500 + 60 * MIN), MON_0500 + DAY + 60 * MIN, 'at 06:00 exactly: the next');
  assert.equal(runDeadline(rule(), MON_0500 - 6 * 60 * MIN), MON_0500 + 60 * MIN, '23:00 the evening before → 06:00');
  assert.equal(runDeadline(rule({ zone: 'UTC' }), MON_0500), MON_0500 + 2 * 60 * MIN, 'UTC: 04:00 → 06:00 UTC');
});

test('EndBy in the spring-forward gap is the first valid instant (docs/architecture.md §5)', () => {
  const sat = Date.UTC(2026, 2, 28, 12, 0); // Saturday 28 March 2026; DST starts the next night at 02:00
  assert.equal(runDeadline(rule({ endBy: '02:30' }), sat), Date.UTC(2026, 2, 29, 1, 0), '03:00 CEST');
});

test('a deadline applies on the days its window opens; a run whose EndBy falls on another day has none', () => {
  const r = rule({ window: weekdays });
  assert.equal(runDeadline(r, MON_0500), MON_0500 + 60 * MIN);
  const sat0500 = MON_0500 + 5 * DAY;
  assert.equal(runDeadline(r, sat0500), undefined, 'Saturday');
  assert.equal(runDeadline(r, sat0500 - DAY + 2 * 60 * MIN), undefined, "Friday 07:00 → Saturday's EndBy");
  assert.deepEqual(todaysDeadline(r, sat0500), { due: sat0500 + 60 * MIN, applies: false });
  assert.deepEqual(todaysDeadline(r, MON_0500), { due: MON_0500 + 60 * MIN, applies: true });
});

const due = MON_0500 + 60 * MIN;
const lead = 30 * MIN;
const run = (status: JobStatus, marks: DeadlineAlertKind[] = [], runEnd: number | null = null) => ({
  status,
  marks,
  runEnd,
});

test('judging a run: on time, at risk past the lead line, missed at EndBy, met after a risk', () => {
  const at = MON_0500 + 3 * MIN;
  assert.deepEqual(judgeRun(run('Running'), due, lead, MON_0500 + 10 * MIN, at), {
    nextCheckAt: at + 20 * MIN + 1,
  });
  assert.deepEqual(judgeRun(run('Running'), due, lead, due - lead, at), { nextCheckAt: at + 1000 }, 'on the line');
  assert.deepEqual(judgeRun(run('Running'), due, lead, due - lead + 1, at), {
    raise: 'DeadlineAtRisk',
    nextCheckAt: due,
  });
  assert.deepEqual(judgeRun(run('Running'), due, lead, null, at), { nextCheckAt: due }, 'no estimate: EndBy only');
  assert.deepEqual(judgeRun(run('Running', ['DeadlineAtRisk']), due, lead, null, at), { nextCheckAt: due });
  assert.deepEqual(judgeRun(run('Queued'), due, lead, null, due), { raise: 'DeadlineMissed' });
  assert.deepEqual(judgeRun(run('Running', ['DeadlineAtRisk', 'DeadlineMissed']), due, lead, null, due + 1), {});
  assert.deepEqual(judgeRun(run('Completed', ['DeadlineAtRisk'], due - 1), due, lead, null, due - 1), {
    raise: 'DeadlineMet',
  });
  assert.deepEqual(judgeRun(run('Completed', [], due - 1), due, lead, null, due), {}, 'no risk: nothing to lift');
  assert.deepEqual(judgeRun(run('Error', ['DeadlineAtRisk'], due - 1), due, lead, null, due), {}, 'not met');
  assert.deepEqual(judgeRun(run('Completed', ['DeadlineAtRisk'], due + 1), due, lead, null, due + 5), {
    raise: 'DeadlineMissed',
  });
  assert.deepEqual(judgeRun(run('Canceled'), due, lead, null, due + 5), {}, 'canceled before EndBy');
  assert.deepEqual(judgeRun(run('Completed', ['DeadlineAtRisk', 'DeadlineMet'], due - 1), due, lead, null, due), {});
});

test("the page's state follows the same line", () => {
  assert.equal(runState(run('Running'), due, lead, due - lead, MON_0500), 'OnTime');
  assert.equal(runState(run('Running'), due, lead, due - lead + 1, MON_0500), 'AtRisk');
  assert.equal(runState(run('Running', ['DeadlineAtRisk']), due, lead, null, MON_0500), 'AtRisk');
  assert.equal(runState(run('Queued'), due, lead, null, due), 'Missed');
  assert.equal(runState(run('Completed', [], due), due, lead, null, due + 1), 'Met');
  assert.equal(runState(run('Completed', [], due + 1), due, lead, null, due + 1), 'Missed');
  assert.equal(runState(run('Error', [], due - 1), due, lead, null, due + 1), 'Ended');
});

/**
 * A run looked at only when its judgement asks (nextCheckAt): the estimate of a step that overruns grows with the
 * clock (`max(planned end, now + rest)`). Whatever the figures, each kind comes at most once, DeadlineAtRisk comes
 * no later than a second after the estimate first crosses the line and never before, DeadlineMissed exactly at
 * EndBy when the run has not ended, and DeadlineMet only after DeadlineAtRisk for a run ended in time.
 */
test('looking only when asked, every alert comes once and in time', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 90 * MIN }), // the planned end, after 05:00
      fc.integer({ min: 0, max: 20 * MIN }), // what is left after the running step
      fc.integer({ min: 0, max: 60 * MIN }), // lead
      fc.option(fc.integer({ min: 1, max: 120 * MIN }), { nil: undefined }), // when it ends, after 05:00
      (planned, rest, leadMs, endsAfter) => {
        const start = MON_0500;
        const estimate = (t: number) => Math.max(start + planned, t + rest);
        const line = due - leadMs;
        const crossing = Math.max(start, estimate(start) > line ? start : line - rest + 1);
        const endAt = endsAfter === undefined ? Number.POSITIVE_INFINITY : start + endsAfter;
        const marks: DeadlineAlertKind[] = [];
        const times: Partial<Record<DeadlineAlertKind, number>> = {};
        // Looks at the moments judgeRun asks for, and when the run ends (a status change is looked at).
        for (let t: number | undefined = start, steps = 0; t !== undefined; steps++) {
          assert.ok(steps < 10_000, 'a bounded number of looks');
          const ended = t >= endAt;
          const j = judgeRun(
            run(ended ? 'Completed' : 'Running', marks, ended ? endAt : null),
            due,
            leadMs,
            ended ? null : estimate(t),
            t,
          );
          if (j.raise) {
            assert.ok(!marks.includes(j.raise), `${j.raise} twice`);
            marks.push(j.raise);
            times[j.raise] = t;
          }
          const next = Math.min(j.nextCheckAt ?? Number.POSITIVE_INFINITY, ended ? Number.POSITIVE_INFINITY : endAt);
          t = Number.isFinite(next) ? next : undefined;
        }
        assert.equal(times.DeadlineMissed, endAt > due ? due : undefined, 'missed exactly at EndBy, if not ended');
        const atRisk = times.DeadlineAtRisk;
        if (atRisk !== undefined) {
          assert.ok(estimate(atRisk) > line, 'at risk only past the line');
          assert.ok(atRisk <= crossing + 1000, 'at most a second after the estimate crossed the line');
        } else assert.ok(crossing + 1000 >= Math.min(endAt, due), 'no risk: it ended, or was missed, first');
        assert.equal(
          times.DeadlineMet !== undefined,
          atRisk !== undefined && endAt <= due,
          'met: a risk lifted in time',
        );
      },
    ),
    { numRuns: 300 },
  );
});

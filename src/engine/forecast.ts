import type { JobRecord } from '../domain/job.ts';
import { MinHeap } from '../domain/min-heap.ts';
import { type FrameSpec, nextOccurrence } from '../domain/recurrence.ts';
import { firstOpenInstant, lastOpenEnd } from '../domain/start-gate.ts';
import type { WindowSpec } from '../domain/time-window.ts';
import { loopYielder } from '../loop-yield.ts';
import type { JobStatus } from '../model/fields.ts';
import type { Store } from '../store/store.ts';
import { loadFrame } from './submit-frames.ts';
import { MISFIRE_GRACE_MS } from './recurrences.ts';
import { loadWindow } from './windows.ts';

/**
 * The forecast (docs/architecture.md §8a): every start the engine will make in a range, computed by the functions the
 * engine decides with, never a copy of their rules. A recurrence's next occurrence is nextOccurrence from the
 * previous one with the frame, anchor and job window loadFrame / loadWindow give, as submitNextOccurrence does; a
 * start is the first instant at which the job's own window and its queue's are both open (firstOpenInstant of the
 * same WindowSpecs the gates load), assuming room in queues and servers.
 *
 * Paging is a k-way merge: each waiting job is one entry, each recurrence a lazy series of entries; every source is
 * sought past the cursor on its own (a series jumps there with nextOccurrence, it never walks from its start), and
 * a heap hands out the smallest. A page costs (sources + page) × log(sources), whatever its place in the range.
 */

/** Where a page starts after: entries are ordered by start, then job id, then occurrence. */
export interface ForecastKey {
  start: number;
  job: number;
  occurrence: number;
}

export interface ForecastEntry extends ForecastKey {
  source: 'Recurrence' | 'Scheduled';
  of: PlannedJob;
}

/**
 * What an entry shows of its job. Only this is kept of a job past the reading of its page: a page's sources live
 * for the whole request, and whole job records kept that long would leave garbage for major collections.
 */
export interface PlannedJob {
  jobId: number;
  definition: string;
  jobGroup: number | null;
  queue: string;
  /** The zone the job's dates are written in. */
  zone: string;
  timeWindow: string | null;
}

export interface ForecastQuery {
  /** The range [from, until) of starts. */
  from: number;
  until: number;
  /** The time the forecast is made at: nothing starts before it. */
  now: number;
  definition?: string;
  queue?: string;
  /** Only jobs of these partitions; undefined: every partition. */
  partitions?: readonly string[];
  after?: ForecastKey;
  limit: number;
}

/** Jobs that may wait for a future start: Scheduled ones, Held ones with a start time, Queued ones behind a window. */
const WAITING: readonly JobStatus[] = ['Scheduled', 'Held', 'Queued'];
const BATCH = 200;

const less = (a: ForecastKey, b: ForecastKey): boolean =>
  a.start !== b.start ? a.start < b.start : a.job !== b.job ? a.job < b.job : a.occurrence < b.occurrence;

/** The page after `q.after` (or from `q.from`), and whether more follow. */
export async function forecastPage(
  store: Store,
  q: ForecastQuery,
): Promise<{ entries: ForecastEntry[]; more: boolean }> {
  const pause = loopYielder();
  const objects = new Objects(store);
  const floor: ForecastKey = q.after ?? { start: q.from, job: -1, occurrence: Number.NEGATIVE_INFINITY };
  const heap = new MinHeap<Source>((a, b) => less(a.head as ForecastEntry, b.head as ForecastEntry));
  const add = (s: Source) => {
    if (s.head && s.head.start < q.until) heap.push(s);
  };
  // First the sources, then their seeks: a batch of job records is dropped before the seeks' garbage (the calendar
  // arithmetic of wall-clock series) could make the collector promote it.
  const sources: Source[] = [];
  for (let afterJobId = 0; ; ) {
    const jobs = await store.jobs.listByStatus(WAITING, {
      limit: BATCH,
      afterJobId,
      ...(q.definition !== undefined ? { definition: q.definition } : {}),
      ...(q.queue !== undefined ? { queue: q.queue } : {}),
    });
    for (const job of jobs)
      if (!q.partitions || q.partitions.includes(job.partition))
        sources.push(...(await sourcesOf(objects, job, q.now)));
    const last = jobs[jobs.length - 1];
    if (!last || jobs.length < BATCH) break;
    afterJobId = last.jobId;
    await pause();
  }
  for (const s of sources) {
    await pause();
    s.seek(floor);
    add(s);
  }
  const entries: ForecastEntry[] = [];
  while (entries.length <= q.limit) {
    await pause();
    const s = heap.pop();
    if (!s?.head) break;
    entries.push(s.head);
    s.advance();
    add(s);
  }
  return { entries: entries.slice(0, q.limit), more: entries.length > q.limit };
}

/** Entries in order; `head` the next one, undefined when none is left. */
interface Source {
  head: ForecastEntry | undefined;
  /** Moves head to the first entry after `key`. */
  seek(key: ForecastKey): void;
  advance(): void;
}

/** The entries one waiting job makes: its own start, and when it is a recurrence's waiting job the later ones too. */
async function sourcesOf(objects: Objects, job: JobRecord, now: number): Promise<Source[]> {
  const gates = await objects.gatesOf(job);
  const at = Math.max(job.requestedStart, now);
  const start = objects.calc.firstOpenInstant(gates, at);
  if (job.status === 'Queued' && start === at) return []; // open now: it waits for room, not for a time
  if (job.status === 'Held' && job.requestedStart <= now) return []; // it waits for a release, not for a time
  const r = job.data.recurrence;
  const source = r ? 'Recurrence' : 'Scheduled';
  const of: PlannedJob = {
    jobId: job.jobId,
    definition: job.definition,
    jobGroup: job.jobGroup,
    queue: job.queue,
    zone: job.data.zone,
    timeWindow: job.data.spec.timeWindow ?? null,
  };
  const own: ForecastEntry | undefined =
    start === undefined ? undefined : { start, job: job.jobId, occurrence: job.requestedStart, source, of };
  const out: Source[] = [];
  // submitNextOccurrence's misfire rule: promoted too late, Skip drops it and the series goes on from then.
  const late = r !== undefined && at - r.occurrence > MISFIRE_GRACE_MS;
  if (own && !(late && job.data.spec.misfire === 'Skip')) out.push(single(own));
  // A recurrence's waiting job submits its successor when its occurrence comes (Held: once released, unknown when).
  if (r && !r.next && job.jobGroup !== null && job.status === 'Scheduled') {
    const frame = await objects.frame(r.frame, job.data.zone);
    const key = job.data.spec.timeWindow;
    const jobWindow = key ? await objects.window(key, job.data.spec.windowZone ?? job.data.zone) : undefined;
    if (frame) out.push(new Series(objects.calc, of, r.anchor, frame, jobWindow, gates, late ? at : r.occurrence));
  }
  return out;
}

function single(entry: ForecastEntry): Source {
  const s: Source = {
    head: entry,
    seek(key) {
      if (!less(key, entry)) s.head = undefined;
    },
    advance() {
      s.head = undefined;
    },
  };
  return s;
}

/** The later occurrences of a recurrence, each at the start its windows let it make. */
class Series implements Source {
  head: ForecastEntry | undefined;
  private readonly calc: Calc;
  private readonly job: PlannedJob;
  private readonly anchor: number;
  private readonly frame: FrameSpec;
  private readonly jobWindow: WindowSpec | undefined;
  private readonly gates: readonly WindowSpec[];
  /** The series' occurrences are those after this one (its waiting job's, or when that comes late, its promotion). */
  private readonly base: number;

  constructor(
    calc: Calc,
    job: PlannedJob,
    anchor: number,
    frame: FrameSpec,
    jobWindow: WindowSpec | undefined,
    gates: WindowSpec[],
    base: number,
  ) {
    this.calc = calc;
    this.job = job;
    this.anchor = anchor;
    this.frame = frame;
    this.jobWindow = jobWindow;
    this.gates = gates;
    this.base = base;
    this.head = undefined;
  }

  seek(key: ForecastKey): void {
    // Starts never decrease along a series, so its entries from `key.start` on are those whose occurrence comes after
    // the windows were last open together before it.
    const end = this.calc.lastOpenEnd(this.gates, key.start, this.base);
    this.from(Math.max(this.base, (end ?? this.base + 1) - 1));
    while (this.head && !less(key, this.head)) this.advance();
  }

  advance(): void {
    if (this.head) this.from(this.head.occurrence);
  }

  /** The head becomes the occurrence after `after`, as submitNextOccurrence computes it. */
  private from(after: number): void {
    const occurrence = this.calc.nextOccurrence(this.frame, this.anchor, after, this.jobWindow);
    const start = occurrence === undefined ? undefined : this.calc.firstOpenInstant(this.gates, occurrence);
    this.head =
      occurrence === undefined || start === undefined
        ? undefined
        : { start, job: this.job.jobId, occurrence, source: 'Recurrence', of: this.job };
  }
}

/**
 * The domain functions a page calls, remembered for the page: they are pure, and the sources of one page ask the same
 * questions many times (recurrences of one SubmitFrame submitted the same day share their anchor, and every source
 * seeks to the same cursor). Objects are told apart by identity: Objects hands out one per key.
 */
class Calc {
  private readonly ids = new Map<object, number>();
  private readonly answers = new Map<string, number | undefined>();

  nextOccurrence(
    frame: FrameSpec,
    anchor: number,
    after: number,
    jobWindow: WindowSpec | undefined,
  ): number | undefined {
    // A cron expression has no anchor: its occurrences are the same whatever the series.
    const key = `n${this.id(frame)}|${jobWindow ? this.id(jobWindow) : 0}|${frame.cron === null ? anchor : 0}|${after}`;
    return this.remember(key, () => nextOccurrence(frame, anchor, after, jobWindow));
  }

  firstOpenInstant(gates: readonly WindowSpec[], t: number): number | undefined {
    if (gates.length === 0) return t;
    return this.remember(`f${this.id(gates)}|${t}`, () => firstOpenInstant(gates, t));
  }

  lastOpenEnd(gates: readonly WindowSpec[], t: number, floor: number): number | undefined {
    return this.remember(`l${this.id(gates)}|${t}|${floor}`, () => lastOpenEnd(gates, t, floor));
  }

  private remember(key: string, compute: () => number | undefined): number | undefined {
    if (this.answers.has(key)) return this.answers.get(key);
    const answer = compute();
    if (this.answers.size >= MAX_ANSWERS) this.answers.clear();
    this.answers.set(key, answer);
    return answer;
  }

  private id(o: object): number {
    const known = this.ids.get(o);
    if (known !== undefined) return known;
    const id = this.ids.size + 1;
    this.ids.set(o, id);
    return id;
  }
}

const MAX_ANSWERS = 100_000;

/** Frames, windows and queues read once per page, in the zones the engine reads them in. */
class Objects {
  readonly calc = new Calc();
  private readonly store: Store;
  private readonly gates = new Map<string, Promise<WindowSpec[]>>();
  private readonly windows = new Map<string, Promise<WindowSpec | undefined>>();
  private readonly frames = new Map<string, Promise<FrameSpec | undefined>>();
  private readonly queues = new Map<string, Promise<WindowSpec | null | undefined>>();

  constructor(store: Store) {
    this.store = store;
  }

  window(key: string, zone: string): Promise<WindowSpec | undefined> {
    return cached(this.windows, `${key}|${zone}`, () => loadWindow(this.store, key, zone));
  }

  frame(key: string, zone: string): Promise<FrameSpec | undefined> {
    return cached(this.frames, `${key}|${zone}`, () => loadFrame(this.store, key, zone));
  }

  /** The windows a job waits for: its own (window-and-lock-gates.ts) and its queue's (dispatcher.ts); one array per combination. */
  gatesOf(job: JobRecord): Promise<WindowSpec[]> {
    const key = job.data.spec.timeWindow ?? '';
    const zone = job.data.spec.windowZone ?? job.data.zone;
    return cached(this.gates, `${key}|${zone}|${job.queue}`, () => this.loadGates(job));
  }

  private async loadGates(job: JobRecord): Promise<WindowSpec[]> {
    const out: WindowSpec[] = [];
    const key = job.data.spec.timeWindow;
    const own = key ? await this.window(key, job.data.spec.windowZone ?? job.data.zone) : undefined;
    if (own) out.push(own);
    const queue = await cached(this.queues, job.queue, async () => {
      const q = await this.store.getObject('Queue', job.queue);
      if (!q) return null;
      const windowKey = q.data.TimeWindow;
      return windowKey ? this.window(windowKey, q.data.QueueTimeZone ?? 'UTC') : null;
    });
    if (queue) out.push(queue);
    return out;
  }
}

function cached<T>(map: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let hit = map.get(key);
  if (!hit) {
    hit = load();
    map.set(key, hit);
  }
  return hit;
}

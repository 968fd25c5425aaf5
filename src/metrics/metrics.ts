import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DEADLINE_ALERT_KINDS } from '../domain/deadline.ts';
import { FINAL } from '../domain/job-status.ts';
import type { AgentHub } from '../engine/agent-hub.ts';
import type { StatusChange } from '../store/job-store.ts';
import type { Store } from '../store/store.ts';

const FINAL_SET = new Set<string>(FINAL);
/** Alert statuses that still want someone's attention (engine/alerts.ts). */
const OPEN_ALERT_STATUSES = new Set(['NotAcknowledged', 'Escalated']);
/** Queue depth counts jobs waiting in a queue for a slot; running counts those holding one on a process server. */
const WAITING_STATUSES = new Set(['Queued', 'QueueHeld']);
const RUNNING_STATUSES = new Set(['Running', 'Killing', 'Canceling']);

export interface MetricsDeps {
  store: Store;
  hub: AgentHub;
  /** Archive requests holding an import slot now (services/import-gate.ts). */
  importRequests?: () => number;
}

/**
 * The server's Prometheus metrics (`GET /metrics`), in a registry of its own (several servers may share a test
 * process). Counters and histograms are fed by events (committed job status changes, HTTP responses, store
 * transactions); the gauges of jobs, queues, agents and alerts are computed when scraped, from two grouped queries
 * and the agent hub, so no history is ever held here.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly deps: MetricsDeps;
  private readonly jobs: Gauge<'status'>;
  private readonly queueDepth: Gauge<'queue'>;
  private readonly queueRunning: Gauge<'queue'>;
  private readonly agentsConnected: Gauge;
  private readonly agentSlots: Gauge<'process_server'>;
  private readonly alertsOpen: Gauge;
  private readonly pool: Gauge<'state'>;
  private readonly importRequests: Gauge;
  private readonly roundTrips: Counter;
  private roundTripsSeen = 0;
  private readonly started: Counter<'definition_type'>;
  private readonly finished: Counter<'definition_type' | 'status'>;
  private readonly deadlineAlerts: Counter<'kind'>;
  private readonly startLatency: Histogram;
  private readonly http: Histogram<'method' | 'route' | 'status'>;
  private readonly transactions: Histogram<'outcome'>;

  constructor(deps: MetricsDeps) {
    this.deps = deps;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    this.jobs = new Gauge({ name: 'millrace_jobs', help: 'Jobs stored, by status', labelNames: ['status'], registers });
    this.queueDepth = new Gauge({
      name: 'millrace_queue_depth',
      help: 'Jobs waiting in a queue (status Queued or QueueHeld)',
      labelNames: ['queue'],
      registers,
    });
    this.queueRunning = new Gauge({
      name: 'millrace_queue_running',
      help: 'Jobs of a queue running on a process server',
      labelNames: ['queue'],
      registers,
    });
    this.agentsConnected = new Gauge({ name: 'millrace_agents_connected', help: 'Agents connected', registers });
    this.agentSlots = new Gauge({
      name: 'millrace_agent_slots',
      help: 'Job slots a connected agent offers',
      labelNames: ['process_server'],
      registers,
    });
    this.alertsOpen = new Gauge({
      name: 'millrace_alerts_open',
      help: 'Alerts not yet acknowledged (NotAcknowledged or Escalated)',
      registers,
    });
    this.pool = new Gauge({
      name: 'millrace_db_pool_connections',
      help: 'Database pool clients (PostgreSQL): total, idle, and queries waiting for one',
      labelNames: ['state'],
      registers,
    });
    this.importRequests = new Gauge({
      name: 'millrace_import_requests',
      help: 'Archive requests (CAR imports) holding one of the slots of the import gate',
      registers,
    });
    this.roundTrips = new Counter({
      name: 'millrace_db_round_trips_total',
      help: 'Statements sent to the database (PostgreSQL), each a round trip',
      registers,
    });
    this.started = new Counter({
      name: 'millrace_jobs_started_total',
      help: 'Jobs that started running, by definition type',
      labelNames: ['definition_type'],
      registers,
    });
    this.finished = new Counter({
      name: 'millrace_jobs_finished_total',
      help: 'Jobs that reached a final status, by definition type and status',
      labelNames: ['definition_type', 'status'],
      registers,
    });
    this.deadlineAlerts = new Counter({
      name: 'millrace_deadline_alerts_total',
      help: 'Deadline alerts this node raised, by kind (DeadlineAtRisk, DeadlineMissed, DeadlineMet)',
      labelNames: ['kind'],
      registers,
    });
    // Every kind from the start, so a rate over it is defined before the first alert.
    for (const kind of DEADLINE_ALERT_KINDS) this.deadlineAlerts.inc({ kind }, 0);
    this.startLatency = new Histogram({
      name: 'millrace_job_start_latency_seconds',
      help: 'From submit (or the requested start, if later) to the start of the run',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
      registers,
    });
    this.http = new Histogram({
      name: 'millrace_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status code',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers,
    });
    this.transactions = new Histogram({
      name: 'millrace_db_transaction_duration_seconds',
      help: 'Database transactions, by outcome (commit or rollback)',
      labelNames: ['outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
      registers,
    });
    deps.store.onCommittedStatusChanges((changes) => this.statusChanged(changes));
    deps.store.onTransactionEnd((ms, committed) =>
      this.transactions.observe({ outcome: committed ? 'commit' : 'rollback' }, ms / 1000),
    );
  }

  /** An HTTP response went out; `route` is the matched pattern (never the raw URL: bounded label values). */
  request(method: string, route: string | undefined, status: number, ms: number): void {
    this.http.observe({ method, route: route ?? '(no route)', status: String(status) }, ms / 1000);
  }

  /** A deadline alert was raised (engine/deadlines.ts), once per alert on the node that raised it. */
  deadlineAlert(kind: string): void {
    this.deadlineAlerts.inc({ kind });
  }

  /** The scrape: refreshes the gauges, then renders the registry in the Prometheus text format. */
  async render(): Promise<string> {
    const [jobs, alerts] = await Promise.all([
      this.deps.store.jobs.countByStatusAndQueue(),
      this.deps.store.countObjectsByField('Alert', 'Status'),
    ]);
    this.jobs.reset();
    this.queueDepth.reset();
    this.queueRunning.reset();
    for (const { status, queue, count } of jobs) {
      this.jobs.inc({ status }, count);
      if (WAITING_STATUSES.has(status)) this.queueDepth.inc({ queue }, count);
      else if (RUNNING_STATUSES.has(status)) this.queueRunning.inc({ queue }, count);
    }
    this.alertsOpen.set(alerts.reduce((n, a) => n + (OPEN_ALERT_STATUSES.has(a.value ?? '') ? a.count : 0), 0));
    const agents = this.deps.hub.connected();
    this.agentsConnected.set(agents.length);
    this.agentSlots.reset();
    for (const a of agents)
      if (a.slots !== undefined) this.agentSlots.set({ process_server: a.processServer }, a.slots);
    if (this.deps.importRequests) this.importRequests.set(this.deps.importRequests());
    const pool = this.deps.store.poolStats();
    if (pool) {
      this.pool.set({ state: 'total' }, pool.total);
      this.pool.set({ state: 'idle' }, pool.idle);
      this.pool.set({ state: 'waiting' }, pool.waiting);
      this.roundTrips.inc(pool.roundTrips - this.roundTripsSeen);
      this.roundTripsSeen = pool.roundTrips;
    }
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  close(): void {
    this.deps.store.onCommittedStatusChanges(undefined);
    this.deps.store.onTransactionEnd(undefined);
    this.registry.clear();
  }

  private statusChanged(changes: readonly StatusChange[]): void {
    for (const { job, from, to } of changes) {
      if (from === to) continue;
      const type = job.data.spec.type;
      if (to === 'Running' && from !== 'Killing' && from !== 'Canceling') {
        this.started.inc({ definition_type: type });
        const since = Math.max(job.creationTime, job.requestedStart);
        const start = job.runStart ?? job.modificationTime;
        this.startLatency.observe(Math.max(0, start - since) / 1000);
      } else if (FINAL_SET.has(to) && (from === null || !FINAL_SET.has(from))) {
        this.finished.inc({ definition_type: type, status: to });
      }
    }
  }
}

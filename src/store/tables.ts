/**
 * Row shapes of every table the migrations make, in one file with no imports of the stores, so the Kysely stores
 * (kysely-store.ts and the per-area stores it composes) all read it without importing each other.
 */
import type { Generated } from 'kysely';
import type { JobFileRecord } from '../domain/job.ts';
import type { JobStatus } from '../domain/job-status.ts';
import type { TypeName } from '../model/fields.ts';
import type { AlertWorkItem, AlertWorkKind } from './alert-work-store.ts';
import type { EventStatus } from './event-store.ts';
import type { Protection } from './store.ts';

/** Every table: those of migrations 0001 (objects, security) here, the others in their areas' interfaces below. */
export interface Database
  extends JobTables,
    EventTables,
    AlertWorkTables,
    BlobTables,
    ClusterTables,
    AuthFailureTables,
    SessionTables,
    RuntimeStatsTables,
    FileWatchTables,
    AuditTables {
  sequences: { name: string; value: number };
  objects: {
    unique_id: number;
    type: TypeName;
    key: string;
    partition: string;
    data: string;
    protection: Protection | null;
    creation_time: number;
    modification_time: number;
  };
  object_refs: { from_id: number; path: string; to_id: number };
  users: { name: string; password_hash: string | null; roles: string; disabled: number; creation_time: number };
  roles: { name: string; description: string; grants: string; builtin: number };
  api_keys: {
    id: string;
    user_name: string;
    key_hash: string;
    description: string;
    creation_time: number;
    expiry_time: number;
    last_used_time: number | null;
    revoked_time: number | null;
  };
  meta: { name: string; value: string };
  /** PostgreSQL only (migration 0020): one row, moved by every committed transaction that wrote objects. */
  objects_version: { id: number; version: number };
}

/** Row shapes of migration 0002. */
export interface JobTables {
  jobs: {
    job_id: number;
    unique_id: number;
    definition: string;
    partition: string;
    status: JobStatus;
    priority: number;
    queue: string;
    process_server: string | null;
    requested_start: number;
    scheduled_start: number | null;
    run_start: number | null;
    run_end: number | null;
    return_code: number | null;
    parent_job: number | null;
    job_group: number | null;
    top_start: number;
    attempt: number;
    starts: number;
    submitted_by: string;
    description: string | null;
    data: string;
    creation_time: number;
    modification_time: number;
    /**
     * Migration 0011: the type of the job's definition (`data.spec.type`, which never changes after the submit),
     * kept as a column so that the dispatcher reads queued jobs by queue and type from the index (benchmark B2 in bench/README.md).
     */
    definition_type: string;
    /**
     * Migration 0015: when an active job's MaxRunTime falls due (epoch ms), derived from the job at every write
     * (domain/max-run-time.ts); null without a limit. Index jobs_max_run_due holds only the non-null ones.
     */
    max_run_due: number | null;
  };
  /** Migration 0009: a chain job's steps and handlers as JSON, written once at its submit. */
  chain_structures: {
    job_id: number;
    structure: string;
  };
  /** Migration 0007: one row per status change; `id` orders them (a sequence on PostgreSQL, the rowid on SQLite). */
  job_history: {
    id: Generated<number>;
    job_id: number;
    time: number;
    from_status: JobStatus | null;
    to_status: JobStatus;
    user_name: string | null;
    cause: string;
    detail: string | null;
  };
  job_files: {
    unique_id: number;
    job_id: number;
    name: string;
    file_order: number;
    type: JobFileRecord['type'];
    format: string;
    size: number;
  };
}

/** Row shape of migration 0004. */
export interface EventTables {
  events: {
    unique_id: number;
    event_id: string;
    definition: string;
    partition: string;
    raise_sequence: number;
    status: EventStatus;
    raise_time: number;
    clear_time: number | null;
    data: string;
  };
  /** Migration 0017: the highest RaiseSequence of a definition's deleted events. */
  event_sequences: { definition: string; last_sequence: number };
}

/** Row shape of migration 0005. */
export interface AlertWorkTables {
  alert_work: {
    id: number;
    kind: AlertWorkKind;
    due_at: number;
    alert_id: number | null;
    attempts: number;
    state: AlertWorkItem['state'];
    last_error: string | null;
    data: string;
  };
}

/** Row shape of migration 0006. */
export interface BlobTables {
  blobs: {
    kind: string;
    owner: string;
    name: string;
    data: Buffer;
    size: number;
    sha256: string;
    created_at: number;
  };
}

/** Row shapes of migration 0010: the server nodes sharing one database, their leases and their agents. */
export interface ClusterTables {
  cluster_nodes: { id: string; version: string; started_at: number; seen_at: number; address: string };
  cluster_leases: { name: string; holder: string; token: number; expires_at: number };
  /** `instance`: the agent process's X-Millrace-Agent-Instance (migration 0013; '' before it). */
  agent_presence: { process_server: string; node_id: string; seen_at: number; ready: number; instance: string };
  /** `end_at` is offset + the data's length, kept so size and range reads need no length function per dialect. */
  job_file_chunks: { job_id: number; name: string; offset: number; end_at: number; data: Buffer };
}

/** Row shape of migration 0012: failed sign-ins per address or user name, in one-minute windows. */
export interface AuthFailureTables {
  auth_failures: { name: string; failures: number; window_start: number };
}

/** Row shape of migration 0018: the dashboard's sessions, keyed by the SHA-256 of the cookie value. */
export interface SessionTables {
  sessions: {
    token_hash: string;
    user_name: string;
    creation_time: number;
    last_seen_time: number;
    expiry_time: number;
  };
}

/**
 * Row shapes of migration 0014: runtime statistics per definition and chain step (`step` '' for the definition's
 * own jobs), added to as jobs finish: the totals, and a histogram of durations in logarithmic buckets.
 */
export interface RuntimeStatsTables {
  runtime_stats: {
    definition: string;
    step: string;
    runs: number;
    completed: number;
    error: number;
    killed: number;
    unknown: number;
    total_ms: number;
    max_ms: number;
  };
  runtime_buckets: { definition: string; step: string; bucket: number; runs: number; min_ms: number; max_ms: number };
}

/** Row shapes of migration 0016: the files raised by file events, and each process server's watch status. */
export interface FileWatchTables {
  file_raises: {
    definition: string;
    process_server: string;
    path: string;
    size: number;
    mtime: number;
    inode: string;
    raise_time: number;
  };
  file_watch_status: { process_server: string; data: string; updated_at: number };
}

/** Row shapes of migration 0019 (the audit log, docs/architecture.md §18). */
export interface AuditTables {
  audit_entries: {
    id: number;
    time: number;
    actor: string;
    api_key_id: string | null;
    address: string | null;
    interface: string;
    action: string;
    object_type: string | null;
    object_key: string | null;
    object_unique_id: number | null;
    detail: string | null;
    diff: string | null;
    restore: string | null;
    prev_hash: string;
    hash: string;
  };
  audit_head: { id: number; last_id: number; last_hash: string };
}

/**
 * The columns of a row listed in a fixed order, checked at compile time to name every column of `Row`: a read that
 * names its columns (a prepared statement may not use `select *`, pg-prepared.ts) must not leave one out. A column
 * left out makes the list's type the missing name, so the error says which.
 */
export const everyColumn =
  <Row>() =>
  <const C extends ReadonlyArray<keyof Row & string>>(
    columns: C & ([Exclude<keyof Row, C[number]>] extends [never] ? unknown : Exclude<keyof Row, C[number]>),
  ): C =>
    columns;

/** Column names as a statement lists them: each quoted, comma-separated. */
export const columnList = (columns: readonly string[]): string => columns.map((c) => `"${c}"`).join(', ');

import type { Logger } from 'pino';
import { SYSTEM_ACTOR } from '../store/audit-store.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import type { Cluster } from './cluster.ts';
import type { Effects } from './effects.ts';
import type { SerialLoop } from './serial-loop.ts';

export interface JobPurgeOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  cluster: Cluster;
  loop: Pick<SerialLoop, 'mutate'>;
  /** Finished jobs older than this are purged (the system keep clause). */
  historyRetentionMs: number;
  /** Audit entries older than this are purged, oldest first (docs/architecture.md §18); kept when absent. */
  auditRetentionMs?: number;
}

const PURGE_EVERY_MS = 15 * 60_000;
/** Jobs deleted per transaction. */
const PURGE_BATCH = 500;
/** Audit entries deleted per transaction: a slice, so the purge never holds a long lock. */
const AUDIT_SLICE = 5000;

/**
 * Deleting finished jobs with their files: those beyond a definition's KeepJobs, soon after any node's commit
 * finished one, and those older than the retention period (the system keep clause), as timer work every
 * 15 minutes. Deletions go through the serial loop like every change to jobs (docs/architecture.md §6a).
 */
export class JobPurge {
  private readonly options: JobPurgeOptions;
  private timer: NodeJS.Timeout | undefined;
  /** Definitions whose KeepJobs to apply, with the number of finished jobs it keeps. */
  private readonly kept = new Map<string, number>();
  private purging = false;
  private stopped = false;

  constructor(options: JobPurgeOptions) {
    this.options = options;
  }

  start(): void {
    this.timer = setInterval(() => void this.purgeHistory(), PURGE_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** A commit finished jobs of these definitions: their KeepJobs is applied a second later. */
  keep(purge: Effects['purge']): void {
    for (const [definition, keep] of purge) this.kept.set(definition, keep);
    if (purge.size > 0) setTimeout(() => void this.purgeKept(), 1000).unref();
  }

  /**
   * The system keep clause: finished jobs older than the retention period go, a batch at a time. Run at start (as
   * the timer owner) and every 15 minutes; public so that tests on the virtual clock do what the timer would.
   */
  async purgeHistory(): Promise<void> {
    const { cluster, store, clock, historyRetentionMs } = this.options;
    if (!cluster.isOwner) return;
    try {
      for (;;) {
        const ids = await store.jobs.finishedBefore(clock.now() - historyRetentionMs, PURGE_BATCH);
        if (ids.length === 0 || this.stopped) break;
        await this.deleteJobs(ids);
      }
      await this.purgeAudit();
    } catch (err) {
      this.options.logger.warn({ err }, 'history purge failed');
    }
  }

  /**
   * The audit log's retention: the oldest entries go, a slice a transaction, and the log says how many went (an
   * entry of the server's own). Verify then checks from the oldest kept entry.
   */
  private async purgeAudit(): Promise<void> {
    const { cluster, store, clock, auditRetentionMs } = this.options;
    if (auditRetentionMs === undefined) return;
    let total = 0;
    for (;;) {
      const gone = await store.transaction(async (tx) => {
        await cluster.fence(tx);
        return tx.audit.purge(clock.now() - auditRetentionMs, AUDIT_SLICE);
      });
      total += gone;
      if (gone < AUDIT_SLICE || this.stopped) break;
    }
    if (total > 0)
      await store.audit.add({
        time: clock.now(),
        actor: SYSTEM_ACTOR,
        action: 'audit-purge',
        object: null,
        detail: `${total} entries older than ${Math.round(auditRetentionMs / 86_400_000)} days purged`,
        diff: null,
        restore: null,
      });
  }

  /** KeepJobs: the finished jobs of a definition beyond the newest N are deleted, with their files. */
  private async purgeKept(): Promise<void> {
    if (this.purging || this.stopped) return;
    this.purging = true;
    try {
      for (const [definition, keep] of [...this.kept]) {
        this.kept.delete(definition);
        for (;;) {
          const ids = await this.options.store.jobs.finishedBeyond(definition, keep, PURGE_BATCH);
          if (ids.length === 0) break;
          await this.deleteJobs(ids, false);
        }
      }
    } catch (err) {
      this.options.logger.warn({ err }, 'job purge failed');
    } finally {
      this.purging = false;
    }
  }

  /** `fenced`: timer work (the retention purge), done under the timer lease; KeepJobs follows any node's commit. */
  private async deleteJobs(ids: number[], fenced = true): Promise<void> {
    await this.options.loop.mutate(async (tx, effects, kernel) => {
      if (fenced) await this.options.cluster.fence(tx);
      await kernel.remove(tx, ids, effects);
    });
  }
}

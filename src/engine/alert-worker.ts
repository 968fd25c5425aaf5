import type { Logger } from 'pino';
import { MAX_DELIVERY_ATTEMPTS, retryDelayMs } from '../alerts/webhook.ts';
import type { AlertWorkItem } from '../store/alert-work-store.ts';
import type { Store, StoredObject } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { formatInstant } from '../time/date-format.ts';
import { DEFAULT_ALERT_REPLY, runCheck, runEscalation } from './alerts.ts';

/** How alerts leave the server; wired to webhook.ts and mail.ts, or to nothing when not configured. */
export interface AlertSenders {
  /** `body` carries the `deliveryId` a receiver deduplicates by (delivery is at least once). */
  webhook(url: string, body: Record<string, unknown>): Promise<void>;
  mail(to: string, subject: string, text: string): Promise<void>;
}

const BATCH = 50;
/** Checked at least this often, so work added by another node or missed by a kick is found. */
const POLL_MS = 5_000;

/**
 * Carries out alert work when it comes due: delayed checks and escalations in an engine transaction, deliveries
 * outside any (a slow SMTP server must not hold the scheduler), each marked done after it was sent and tried again
 * with backoff when it failed. At least once: a crash between sending and marking sends it again; receivers
 * can tell by the delivery id.
 */
export class AlertWorker {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly senders: AlertSenders;
  private readonly mutate: (fn: (tx: Store) => Promise<void>) => Promise<void>;
  private readonly mayRun: () => boolean;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = false;

  constructor(options: {
    store: Store;
    clock: Clock;
    logger: Logger;
    senders: AlertSenders;
    /** Whether this node does alert work now (the timer owner among several nodes); asked every round. */
    mayRun?: () => boolean;
    mutate: (fn: (tx: Store) => Promise<void>) => Promise<void>;
  }) {
    this.mayRun = options.mayRun ?? (() => true);
    this.store = options.store;
    this.clock = options.clock;
    this.logger = options.logger;
    this.senders = options.senders;
    this.mutate = options.mutate;
  }

  start(): void {
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Something may have come due (a commit added work): look soon. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(), Math.max(0, Math.min(ms, POLL_MS)));
    this.timer.unref();
  }

  /** One round: everything due now, then a timer for the next. */
  async run(): Promise<void> {
    if (this.running || this.stopped) return;
    if (!this.mayRun()) {
      this.schedule(POLL_MS);
      return;
    }
    this.running = true;
    try {
      for (;;) {
        this.again = false;
        const due = await this.store.alertWork.due(this.clock.now(), BATCH);
        for (const item of due) await this.carryOut(item);
        if (due.length < BATCH && !this.again) break;
      }
    } catch (err) {
      this.logger.warn({ err }, 'alert work failed; trying again later');
    } finally {
      this.running = false;
    }
    if (this.stopped) return;
    const next = await this.store.alertWork.nextDue().catch(() => undefined);
    this.schedule(next === undefined ? POLL_MS : next - this.clock.now());
  }

  private async carryOut(item: AlertWorkItem): Promise<void> {
    if (item.kind !== 'deliver') {
      await this.mutate(async (tx) => {
        const now = this.clock.now();
        if (item.kind === 'check') await runCheck(tx, item, now);
        else await runEscalation(tx, item, now);
        await tx.alertWork.update({ ...item, state: 'done', attempts: item.attempts + 1 });
      });
      return;
    }
    const attempts = item.attempts + 1;
    try {
      const alert = item.alertId === null ? undefined : await this.store.getObject('Alert', String(item.alertId));
      if (alert) await this.deliver(item, alert);
      await this.store.alertWork.update({ ...item, attempts, state: 'done', lastError: null });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      const last = attempts >= MAX_DELIVERY_ATTEMPTS;
      this.logger.warn(
        { alert: item.alertId, to: item.data.address, attempts, reason },
        last ? 'alert delivery failed for good' : 'alert delivery failed; will retry',
      );
      await this.store.alertWork.update({
        ...item,
        attempts,
        state: last ? 'failed' : 'pending',
        dueAt: this.clock.now() + retryDelayMs(attempts),
        lastError: reason.slice(0, 1000),
      });
    }
  }

  private async deliver(item: AlertWorkItem, alert: StoredObject<'Alert'>): Promise<void> {
    const d = alert.data;
    const created = d.CreationTime ?? null;
    const body = {
      alertId: alert.uniqueId,
      businessKey: `Alert:${alert.uniqueId}`,
      deliveryId: item.id,
      AlertSource: d.AlertSource,
      AlertEscalation: item.data.escalation ?? d.AlertEscalation,
      Status: d.Status,
      Message: d.Message,
      SourceObject: d.SourceObject,
      ReplyExpression: d.ReplyExpression,
      CreationTime: created ? formatInstant(created.ms, created.zone) : null,
    };
    const address = String(item.data.address);
    if (item.data.kind === 'Webhook') await this.senders.webhook(address, body);
    else
      await this.senders.mail(
        address,
        `Millrace alert ${alert.uniqueId}: ${String(d.Message ?? '')
          .split('\n')[0]
          ?.slice(0, 150)}`,
        [
          String(d.Message ?? ''),
          '',
          `Alert:${alert.uniqueId} from ${String(d.AlertSource)} about ${String(d.SourceObject)}.`,
          `Reply ${String(d.ReplyExpression ?? DEFAULT_ALERT_REPLY)} with PUT /Alert/${alert.uniqueId}/reply to stop its escalation.`,
        ].join('\n'),
      );
  }
}

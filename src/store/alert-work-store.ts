/**
 * Alert work that must happen at a time, kept in the database so a restart loses none of it (migration 0005):
 * the delayed check of a job alert source ("still Queued after 10 minutes?"), the escalation of an alert nobody
 * acknowledged, and each delivery of an alert to a recipient (an outbox: tried again with backoff until sent).
 */

export type AlertWorkKind = 'check' | 'escalate' | 'deliver';

export interface AlertWorkItem {
  id: number;
  kind: AlertWorkKind;
  /** Epoch ms when it is due. */
  dueAt: number;
  /** The alert it belongs to (escalations and deliveries), for canceling them together. */
  alertId: number | null;
  attempts: number;
  state: 'pending' | 'done' | 'failed' | 'canceled';
  lastError: string | null;
  data: Record<string, unknown>;
}

export interface AlertWorkStore {
  add(items: ReadonlyArray<Omit<AlertWorkItem, 'attempts' | 'state' | 'lastError'>>): Promise<void>;
  /** Pending items due at `now`, earliest first. */
  due(now: number, limit: number): Promise<AlertWorkItem[]>;
  /** The earliest due time of a pending item. */
  nextDue(): Promise<number | undefined>;
  /** Writes state, due time, attempts and last error; done and canceled items are removed. */
  update(item: AlertWorkItem): Promise<void>;
  /** Pending items of an alert, optionally of one kind. */
  ofAlert(alertId: number, kind?: AlertWorkKind): Promise<AlertWorkItem[]>;
}

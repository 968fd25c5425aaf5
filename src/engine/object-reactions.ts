import type { TypeName } from '../model/fields.ts';
import { requireType } from '../model/registry.ts';
import type { StoredObject } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { heartbeatMs } from './agent-instances.ts';
import type { AlertSources } from './alerts.ts';
import type { Cluster } from './cluster.ts';
import type { DeadlineWatch } from './deadlines.ts';
import { move } from './kernel.ts';
import type { SerialLoop } from './serial-loop.ts';

export interface ObjectReactionsOptions {
  clock: Clock;
  cluster: Cluster;
  loop: Pick<SerialLoop, 'mutate' | 'requestDispatch'>;
  /** The alert sources this node keeps in memory, read again after a change to them. */
  alertSources: Pick<AlertSources, 'invalidate'>;
  /** The deadlines this node watches, read again after a change to them. */
  deadlines: Pick<DeadlineWatch, 'invalidate'>;
  /** Tells a connected agent its new heartbeat pace, wherever it is connected. */
  tellHeartbeat(processServer: string, every: number): void;
  /** Tells the agents connected to this node their file watches again (docs/architecture.md §7b). */
  sendWatches(): Promise<void>;
}

/**
 * What the engine does when an object changed (docs/architecture.md §3, §16): the type's `onChange` trait says
 * which reactions follow (model/object-type.ts); those kept in memory run on every node, so other nodes are told.
 */
export class ObjectReactions {
  private readonly options: ObjectReactionsOptions;

  constructor(options: ObjectReactionsOptions) {
    this.options = options;
  }

  /**
   * Told after an object changed here. A change to a queue, queue provider, process server, window or lock may let
   * jobs start; holding a queue turns its Queued jobs QueueHeld (and back on release).
   */
  changed(type: TypeName, before: StoredObject | undefined, after: StoredObject | undefined): Promise<void> {
    const { cluster, loop, clock } = this.options;
    const reactions = this.inMemory(type);
    if (reactions.some((r) => r !== 'queue-hold')) cluster.tell({ k: 'object', type });
    if (type === 'ProcessServer' && before && after && before.data.AgentTimeout !== after.data.AgentTimeout)
      this.options.tellHeartbeat(after.key, heartbeatMs(after.data.AgentTimeout));
    const held = after?.data.Held === true;
    if (!reactions.includes('queue-hold') || !after || (before?.data.Held === true) === held) return Promise.resolve();
    // Answered only once the queue's waiting jobs show the hold (or its release).
    return loop.mutate(async (tx, effects) => {
      const now = clock.now();
      const jobs = await tx.jobs.listByStatus([held ? 'Queued' : 'QueueHeld'], { queue: after.key, limit: 1_000_000 });
      const moving = jobs.filter((j) => !(held && j.data.runNow));
      for (const j of moving) move(j, held ? 'QueueHeld' : 'Queued', now);
      await tx.jobs.updateMany(moving);
      effects.dispatch = true;
    });
  }

  /** The reactions to a change of `type` that live in this node's memory (also for other nodes' changes). */
  inMemory(type: TypeName) {
    const reactions = requireType(type).traits.onChange ?? [];
    if (reactions.includes('alert-sources')) this.options.alertSources.invalidate();
    if (reactions.includes('deadlines')) this.options.deadlines.invalidate();
    if (reactions.includes('dispatch')) this.options.loop.requestDispatch();
    if (reactions.includes('file-watches')) void this.options.sendWatches();
    return reactions;
  }
}

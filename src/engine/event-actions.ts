import { conflict, notFound } from '../errors.ts';
import { businessKey } from '../model/keys.ts';
import type { Cause } from '../store/job-store.ts';
import type { Clock } from '../time/clock.ts';
import { type ClearBy, clearAllPending, clearEvent, clearRaised, type RaiseBy, raiseEvent } from './events.ts';
import type { SerialLoop } from './serial-loop.ts';

/**
 * A person's actions on events, each one transaction of the serial loop (docs/architecture.md §6a): the jobs an
 * event releases move on in the same transaction as the event itself.
 */
export class EventActions {
  private readonly loop: Pick<SerialLoop, 'mutate'>;
  private readonly clock: Clock;

  constructor(loop: Pick<SerialLoop, 'mutate'>, clock: Clock) {
    this.loop = loop;
    this.clock = clock;
  }

  /** Raises an event of `definition`. */
  raise(definition: string, by: RaiseBy, cause: Cause) {
    return this.loop.mutate(
      (tx, effects, kernel) => raiseEvent(kernel, tx, definition, by, this.clock.now(), effects),
      cause,
    );
  }

  /** Clears the Raised event of a definition; 404 without the definition, 409 when none is Raised. */
  clearRaised(definition: string, by: ClearBy) {
    return this.loop.mutate(async (tx, effects, kernel) => {
      if (!(await tx.getObject('EventDefinition', definition))) throw notFound('EventDefinition', definition);
      const cleared = await clearRaised(kernel, tx, definition, by, this.clock.now(), effects);
      if (!cleared) throw conflict(`${businessKey('EventDefinition', definition)} has no Raised event to clear`);
      return cleared;
    });
  }

  /** Clears the Pending events of a definition (possibly none); 404 without the definition. */
  clearAllPending(definition: string, by: ClearBy) {
    return this.loop.mutate(async (tx, effects) => {
      if (!(await tx.getObject('EventDefinition', definition))) throw notFound('EventDefinition', definition);
      return clearAllPending(tx, definition, by, this.clock.now(), effects);
    });
  }

  /** Clears one event; 404 when it is gone, 409 when it is Cleared already. */
  clearEvent(eventId: string, by: ClearBy) {
    return this.loop.mutate(async (tx, effects, kernel) => {
      const current = await tx.events.get(eventId);
      if (!current) throw notFound('Event', eventId);
      return clearEvent(kernel, tx, current, by, this.clock.now(), effects);
    });
  }
}

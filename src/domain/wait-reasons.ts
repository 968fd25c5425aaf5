import type { Blocker } from './dispatch-plan.ts';

/**
 * Why a job waits, in words (docs/architecture.md §8): each reason is one check the engine made and the job
 * failed, with the object it concerns (`Type:key`) and, when the wait ends at a known instant, that instant. Pure:
 * the waiting service gathers the checks, this names them.
 */

export type WaitCode =
  | 'ScheduledStart'
  | 'Hold'
  | 'QueueHeld'
  | 'QueueFull'
  | 'HoldLevel'
  | 'TimeWindowClosed'
  | 'NoProcessServer'
  | 'ProcessServerStopped'
  | 'AgentDisconnected'
  | 'ProcessServerFull'
  | 'EventWait'
  | 'LockWait'
  | 'ChainPredecessor';

export interface WaitReason {
  code: WaitCode;
  message: string;
  /** `Type:key` of what it waits on, or null. */
  object: string | null;
  /** When the wait ends by itself (epoch ms), or null when nothing says. */
  until: number | null;
}

/** How a reason shows an instant (the interface's date format, in the job's zone). */
export type FormatDate = (ms: number) => string;

/** `Type:key`, as `businessKey` in model/keys.ts writes it (the domain sits below the model). */
const businessKey = (type: string, key: string): string => `${type}:${key}`;
const provider = (server: string, queue: string) => businessKey('QueueProvider', `${server}.${queue}`);

/** The queue's own limit, or (`processServer` given) that of the queue provider linking the two. */
const limiterOf = (b: { queue: string; processServer?: string }): string =>
  b.processServer === undefined ? businessKey('Queue', b.queue) : provider(b.processServer, b.queue);

/** A planner's blocker as a reason. */
export function plannerReason(b: Blocker, date: FormatDate): WaitReason {
  switch (b.code) {
    case 'QueueHeld': {
      const limiter = limiterOf(b);
      return reason(b.code, `${limiter} is held`, limiter);
    }
    case 'QueueFull': {
      const limiter = limiterOf(b);
      return reason(b.code, `${limiter} is full: ${b.running} of ${b.size} running`, limiter);
    }
    case 'HoldLevel': {
      const limiter = limiterOf(b);
      return reason(b.code, `Its priority ${b.priority} is below the HoldLevel ${b.holdLevel} of ${limiter}`, limiter);
    }
    case 'TimeWindowClosed':
      return windowReason(`The time window of ${businessKey('Queue', b.queue)}`, b.window, b.opens, date);
    case 'NoProcessServer': {
      const queue = businessKey('Queue', b.queue);
      return reason(
        b.code,
        b.providers === 0
          ? `No process server serves ${queue}: a QueueProvider linking one to it is missing`
          : `No process server serving ${queue} runs ${b.definitionType} jobs`,
        queue,
      );
    }
    case 'ProcessServerStopped': {
      const server = businessKey('ProcessServer', b.processServer);
      return reason(b.code, `${server} is shut down`, server);
    }
    case 'AgentDisconnected': {
      const server = businessKey('ProcessServer', b.processServer);
      return reason(b.code, `No agent of ${server} is connected`, server);
    }
    case 'ProcessServerFull': {
      const server = businessKey('ProcessServer', b.processServer);
      return reason(b.code, `${server} is full: ${b.running} of ${b.size} running`, server);
    }
  }
}

/** A closed time window (the job's own, or its queue's: `whose` says), open again at `opens` if ever. */
export function windowReason(whose: string, window: string, opens: number | undefined, date: FormatDate): WaitReason {
  const key = businessKey('TimeWindow', window);
  return opens === undefined
    ? reason('TimeWindowClosed', `${whose}, ${key}, does not open within two years`, key)
    : reason('TimeWindowClosed', `${whose}, ${key}, is closed until ${date(opens)}`, key, opens);
}

export function reason(
  code: WaitCode,
  message: string,
  object: string | null,
  until: number | null = null,
): WaitReason {
  return { code, message, object, until };
}

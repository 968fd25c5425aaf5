import type { RaiseMessage, WatchMessage, WatchState, WatchStatusMessage } from '../agent/protocol.ts';
import { watchesOf } from '../domain/file-watch.ts';
import { listAllObjects } from '../store/all-objects.ts';
import type { Store } from '../store/store.ts';
import { raiseEvent } from './events.ts';
import type { Effects, Kernel } from './kernel.ts';
import { insertOperatorMessage } from './operator-message.ts';

/**
 * File events on the server's side (docs/architecture.md §7b): what each agent watches, the raises its agent
 * reports (each file identity once, recorded in the raise's transaction) and the watch status it reports.
 */

/** The `watch` message for a process server's agent: every enabled FileEvents item naming it. */
export async function watchMessage(store: Store, processServer: string): Promise<WatchMessage> {
  const definitions = await listAllObjects(store, 'EventDefinition');
  return { type: 'watch', watches: watchesOf(processServer, definitions) };
}

/**
 * An agent saw a stable file: the event is raised as a raise through the interface would (Pending behind a Raised
 * one), with the path as comment and the process server as raiser, unless this file identity was raised before.
 * Acknowledged in every case once committed, so that the agent drops it; a raise for a definition that no longer
 * watches on this process server is dropped (the agent learns its new watches from the `watch` message). A file the
 * agent could not move is not raised: an operator message says so, once for its identity.
 */
export async function applyRaise(
  kernel: Kernel,
  tx: Store,
  processServer: string,
  m: RaiseMessage,
  now: number,
  effects: Effects,
): Promise<'raised' | 'duplicate' | 'unwatched' | 'unmoved'> {
  effects.messages.push({ processServer, message: { type: 'raised', id: m.id } });
  const def = await tx.getObject('EventDefinition', m.definition);
  const watches = def ? watchesOf(processServer, [def]) : [];
  if (!def || watches.length === 0) return 'unwatched';
  const identity = { definition: def.key, processServer, path: m.path, size: m.size, mtime: m.mtime, inode: m.inode };
  if (!(await tx.fileWatches.claim(identity, now))) return 'duplicate';
  if (m.moveError !== undefined) {
    const text = `EventDefinition:${def.key}: ${m.moveError.slice(0, 2000)}`;
    const sender = `ProcessServer:${processServer}`;
    // The engine is given no server zone (a job's message takes the job's); UTC, as the server's default.
    await insertOperatorMessage(
      tx,
      { partition: def.partition, sender, text, replyExpression: null, zone: 'UTC' },
      now,
    );
    return 'unmoved';
  }
  await raiseEvent(kernel, tx, def.key, { comment: m.path, raiser: `ProcessServer:${processServer}` }, now, effects);
  return 'raised';
}

/** The watch status an agent reported, kept for every node to show (`GET …/ProcessServer/<key>/filewatches`). */
export async function saveWatchStatus(store: Store, processServer: string, m: WatchStatusMessage, now: number) {
  const watches: WatchState[] = m.watches.slice(0, 1000).map((w) => ({
    definition: String(w.definition),
    directory: String(w.directory),
    pattern: String(w.pattern),
    lastPoll: typeof w.lastPoll === 'number' ? w.lastPoll : null,
    filesSeen: typeof w.filesSeen === 'number' ? w.filesSeen : 0,
    lastError: typeof w.lastError === 'string' ? w.lastError.slice(0, 2000) : null,
  }));
  await store.fileWatches.saveStatus(processServer, JSON.stringify(watches), now);
}

import { INITIAL, PENDING } from '../domain/job-status.ts';
import { buildJobParameters } from '../domain/parameters.ts';
import { fieldDefault } from '../model/data.ts';
import type { Store, StoredObject } from '../store/store.ts';
import type { Effects, Kernel } from './kernel.ts';
import { declaredParameters } from '../model/definition-parameters.ts';

/**
 * What an event's becoming Raised does to jobs: jobs waiting in EventWait for it move on
 * once all their events are raised (a job waits for an event only once), and definitions that wait for it with
 * AutoSubmit Always (or OnlyOne, when none of their jobs has reached Running yet) are submitted.
 */
export async function onEventRaised(
  kernel: Kernel,
  tx: Store,
  definition: string,
  now: number,
  effects: Effects,
): Promise<void> {
  const waiting = await tx.jobs.listByStatus(['EventWait'], { limit: 100_000 });
  const moving = waiting.filter((j) => (j.data.spec.waitEvents ?? []).some((w) => w.event === definition));
  for (const j of moving) await kernel.settle(tx, j, now, effects);
  const moved = moving.filter((j) => j.status !== 'EventWait');
  if (moved.length > 0) await tx.jobs.updateMany(moved);
  for (const d of await autoSubmitters(tx, definition))
    await autoSubmit(kernel, tx, d.object, d.mode, definition, now, effects);
}

/**
 * Definitions that wait for `event` with AutoSubmit other than Never, in key order. Found through the references
 * their WaitEvents keep (object_refs, written with every definition), so a raise reads only the definitions that
 * name the event instead of every JobDefinition.
 */
async function autoSubmitters(
  tx: Store,
  event: string,
): Promise<Array<{ object: StoredObject<'JobDefinition'>; mode: string }>> {
  const target = await tx.getObject('EventDefinition', event);
  if (!target) return [];
  const found: Array<{ object: StoredObject<'JobDefinition'>; mode: string }> = [];
  for (const key of await tx.referrerKeysInList(target.uniqueId, 'JobDefinition', 'WaitEvents', 'EventDefinition')) {
    const o = await tx.getObject('JobDefinition', key);
    const w = (o?.data.WaitEvents ?? []).find((x) => x.EventDefinition === event);
    if (o && w?.AutoSubmit && w.AutoSubmit !== 'Never') found.push({ object: o, mode: w.AutoSubmit });
  }
  return found;
}

async function autoSubmit(
  kernel: Kernel,
  tx: Store,
  definition: StoredObject<'JobDefinition'>,
  mode: string,
  event: string,
  now: number,
  effects: Effects,
): Promise<void> {
  if (mode === 'OnlyOne') {
    const notStarted = await tx.jobs.listByStatus([...INITIAL, ...PENDING], { definition: definition.key, limit: 1 });
    if (notStarted.length > 0) return;
  }
  const d = definition.data;
  const zone = d.TimeZone ?? 'UTC';
  let parameters: ReturnType<typeof buildJobParameters>;
  try {
    parameters = buildJobParameters(declaredParameters(d), undefined, definition.key, zone);
  } catch {
    return; // a mandatory parameter without a default: it cannot be submitted unattended
  }
  const job = await kernel.submit(
    tx,
    {
      definition,
      queue: d.DefaultQueue ?? fieldDefault('JobDefinition', 'DefaultQueue'),
      priority: d.Priority ?? fieldDefault('JobDefinition', 'Priority'),
      zone,
      parameters,
      hold: d.HoldOnSubmit === true,
      description: null,
      submittedBy: 'system',
    },
    now,
    effects,
  );
  job.data.notes.push(`Submitted when event ${event} was raised (AutoSubmit ${mode})`);
  await tx.jobs.updateMany([job]);
}

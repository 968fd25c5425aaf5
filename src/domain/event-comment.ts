import { invalid } from '../errors.ts';

/** The longest comment an event keeps (the registry's string(1000) of RaiserComment and ClearerComment). */
export const MAX_COMMENT = 1000;

/** A job, or an agent raising a file event: never refused for its comment (docs/architecture.md §7b). */
const byJob = (who: string): boolean => who.startsWith('Job:') || who.startsWith('ProcessServer:');

/**
 * The comment an event gets: the one given, else the definition's default. A person must give one when the
 * definition requires it and keep it within MAX_COMMENT; a job never fails for its comment (it is cut instead),
 * since that would undo the job's own transition.
 */
export function commentFor(
  def: { key: string; data: Record<string, unknown> } | undefined,
  given: string | null | undefined,
  who: string,
  act: 'Raise' | 'Clear',
) {
  const field = act === 'Raise' ? 'RaiserComment' : 'ClearerComment';
  const text = typeof given === 'string' && given.trim() !== '' ? given : null;
  if (text !== null && text.length > MAX_COMMENT) {
    if (byJob(who)) return text.slice(0, MAX_COMMENT);
    throw invalid(`Field "${field}" must be at most ${MAX_COMMENT} characters`);
  }
  if (text !== null) return text;
  if (def && !byJob(who) && def.data[`RequiresCommentOn${act}`] === true)
    throw invalid(
      `Field "${field}" is required: EventDefinition:${def.key} needs a comment to ${act.toLowerCase()} an event`,
    );
  const fallback = def?.data[`Default${act}Comment`];
  return typeof fallback === 'string' && fallback !== '' ? fallback : null;
}

/**
 * What a job started by events reads of them (docs/architecture.md §7b): `MILLRACE_EVENT_COMMENT` holds the
 * RaiserComment of its first WaitEvent's event (a file event's path), and
 * `MILLRACE_EVENT_COMMENT_<NAME>` that of each WaitEvent's, by its definition's name in upper case. An event without a
 * comment gives an empty value.
 */
export function eventEnvironment(job: {
  data: { eventComments?: ReadonlyArray<{ definition: string; comment: string | null }> };
}): Record<string, string> {
  const comments = job.data.eventComments ?? [];
  const env: Record<string, string> = {};
  const first = comments[0];
  if (first === undefined) return env;
  env.MILLRACE_EVENT_COMMENT = first.comment ?? '';
  for (const c of comments) {
    const name = c.definition.slice(c.definition.indexOf('.') + 1).toUpperCase();
    env[`MILLRACE_EVENT_COMMENT_${name}`] = c.comment ?? '';
  }
  return env;
}

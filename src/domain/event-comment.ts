import { invalid } from '../errors.ts';

/** The longest comment an event keeps (the registry's string(1000) of RaiserComment and ClearerComment). */
export const MAX_COMMENT = 1000;

const byJob = (who: string): boolean => who.startsWith('Job:');

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

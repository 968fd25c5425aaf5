import { itemAt } from '../domain/item-at.ts';
import { conflict, invalid } from '../errors.ts';
import type { DataOf } from '../model/data.ts';
import { keyShapeOf, requireForm } from '../model/registry.ts';
import { validateForm } from '../model/validate.ts';
import type { Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';

/**
 * Passing a user message on (docs/architecture.md §15): a participant forwards it (the ones named become
 * participants) or delegates it (the ones named may reply in the participant's place, and the reply says for whom).
 * Both are kept in the message's History. Pure but for the lookups of users and roles.
 */

export type HandOver = 'forward' | 'delegate';
type MessageData = DataOf<'UserMessage'>;

const MAX_PARTICIPANTS = 200;
const MAX_DELEGATES = 200;
const MAX_HISTORY = 1000;

/** Whether `who` (a user name, or `role:<name>`) names the caller. */
function names(principal: Principal, who: string): boolean {
  const role = /^role:(.+)$/i.exec(who);
  return role ? principal.roles.includes(itemAt(role, 1)) : who === principal.user;
}

/** Whether the caller is one of the participants: named as a user, or holding a role written `role:<name>`. */
export function isParticipant(principal: Principal, participants: readonly string[]): boolean {
  return participants.some((who) => names(principal, who));
}

/**
 * In whose place the caller may reply: null as a participant, the participant it was delegated by as a delegate,
 * undefined when it may not reply at all.
 */
export function replyingFor(principal: Principal, data: MessageData): string | null | undefined {
  if (isParticipant(principal, data.Participants ?? [])) return null;
  return (data.Delegates ?? []).find((d) => typeof d.Delegate === 'string' && names(principal, d.Delegate))?.For;
}

/** A forward's or delegation's body: the names (trimmed, each once) and the comment; 400 on a bad one. */
export function handOverBody(kind: HandOver, body: unknown): { to: string[]; comment: string | null } {
  const b = validateForm(requireForm('UserMessage', kind), body, { defaultZone: 'UTC', keyShapeOf });
  const to = [...new Set((b.To as string[]).map((s) => s.trim()))];
  if (to.length === 0) throw invalid('Field "To" must name at least one user or role:<name>');
  const blank = to.indexOf('');
  if (blank >= 0) throw invalid(`Field "To[${blank}]" must not be empty`);
  return { to, comment: typeof b.Comment === 'string' && b.Comment.trim() !== '' ? b.Comment.trim() : null };
}

/** 400 naming the first of `to` that is neither a user nor `role:<an existing role>`. */
export async function checkRecipients(tx: Store, to: readonly string[]): Promise<void> {
  for (const [i, who] of to.entries()) {
    const role = /^role:(.+)$/i.exec(who)?.[1];
    if (role !== undefined ? await tx.getRole(role) : await tx.getUser(who)) continue;
    throw invalid(`Field "To[${i}]": there is no ${role !== undefined ? `role ${role}` : `user ${who}`}`);
  }
}

/**
 * The message's data after `principal` forwarded or delegated it to `to` at `now`; 409 once it is answered, 400
 * past the limits of its lists. Names already there are not added twice; the History records what was asked.
 */
export function handedOver(
  data: MessageData,
  id: number,
  principal: Principal,
  kind: HandOver,
  asked: { to: string[]; comment: string | null },
  now: number,
): MessageData {
  if (data.Status !== 'ManualTask') throw conflict(`UserMessage:${id} is answered already (${data.Status})`);
  const entry = {
    Time: { ms: now, zone: data.CreationTime?.zone ?? 'UTC' },
    User: principal.user,
    Action: kind === 'forward' ? ('Forward' as const) : ('Delegate' as const),
    To: asked.to,
    Comment: asked.comment,
  };
  const history = [...(data.History ?? []), entry];
  if (history.length > MAX_HISTORY) throw conflict(`UserMessage:${id} has been passed on ${MAX_HISTORY} times already`);
  if (kind === 'forward') {
    const before = data.Participants ?? [];
    const participants = [...before, ...asked.to.filter((who) => !before.includes(who))];
    if (participants.length > MAX_PARTICIPANTS)
      throw invalid(`Field "To": a message has at most ${MAX_PARTICIPANTS} participants`);
    return { ...data, Participants: participants, History: history };
  }
  const before = data.Delegates ?? [];
  const added = asked.to
    .filter((who) => !before.some((d) => d.Delegate === who && d.For === principal.user))
    .map((who) => ({ Delegate: who, For: principal.user }));
  const delegates = [...before, ...added];
  if (delegates.length > MAX_DELEGATES) throw invalid(`Field "To": a message has at most ${MAX_DELEGATES} delegations`);
  return { ...data, Delegates: delegates, History: history };
}

import { itemAt } from '../domain/item-at.ts';
import { conflict, forbidden, invalid, notFound } from '../errors.ts';
import { fieldDefault } from '../model/data.ts';
import type { Principal } from '../security/privileges.ts';
import { MessageService, replyBody } from './messages.ts';
import { userCause } from './user-cause.ts';

/** Whether the caller is one of the participants: named as a user, or holding a role written `role:<name>`. */
export function isParticipant(principal: Principal, participants: readonly string[]): boolean {
  return participants.some((who) => {
    const role = /^role:(.+)$/i.exec(who);
    return role ? principal.roles.includes(itemAt(role, 1)) : who === principal.user;
  });
}

/**
 * User messages: a participant picks one of the offered responses, with a comment
 * of at most 1,000 characters; the waiting job then ends with that response's status and return code, and a
 * chain waiting on it as a call goes on.
 */
export class UserMessages extends MessageService {
  protected readonly kind = 'UserMessage' as const;

  /** Also only its participants may reply (checked again in the reply's transaction). */
  override async authorizeReply(principal: Principal, idText: string): Promise<number> {
    const id = await super.authorizeReply(principal, idText);
    const m = await this.engine.store.getObject('UserMessage', String(id));
    if (m && !isParticipant(principal, m.data.Participants ?? []))
      throw forbidden(`Only the participants of UserMessage:${id} may reply to it`);
    return id;
  }

  async reply(principal: Principal, idText: string, body: unknown): Promise<Record<string, unknown>> {
    const id = await this.authorizeReply(principal, idText);
    const b = replyBody(this.kind, body);
    const comment = typeof b.ReplyComment === 'string' ? b.ReplyComment : null;
    const asked = String(b.Response).trim();
    await this.engine.mutate(
      async (tx, effects, kernel) => {
        const m = await tx.getObject('UserMessage', String(id));
        if (!m) throw notFound('UserMessage', id);
        if (!isParticipant(principal, m.data.Participants ?? []))
          throw forbidden(`Only the participants of UserMessage:${id} may reply to it`);
        if (m.data.Status !== 'ManualTask') throw conflict(`UserMessage:${id} is answered already (${m.data.Status})`);
        const responses = m.data.Responses ?? [];
        const chosen = responses.find((r) => r.Response?.toLowerCase() === asked.toLowerCase());
        if (!chosen)
          throw invalid(
            `Field "Response": "${asked}" is not one of the responses offered (${responses.map((r) => r.Response).join(', ')})`,
          );
        const now = this.clock.now();
        await tx.patchObjectData(m.uniqueId, {
          ...m.data,
          Status: chosen.Status,
          Response: chosen.Response,
          ReplyComment: comment,
          ReplyUser: principal.user,
          ReplyTime: { ms: now, zone: m.data.CreationTime?.zone ?? 'UTC' },
        });
        const job = await tx.jobs.get(Number(m.data.Job));
        if (job?.status === 'Console' && job.data.userMessage === id)
          await kernel.finish(
            tx,
            job,
            {
              status: chosen.Status ?? fieldDefault('JobDefinition', 'UserMessage', 'Responses', 'Status'),
              returnCode: chosen.ReturnCode,
              notes: [`${principal.user} replied ${chosen.Response}${comment ? `: ${comment}` : ''}`],
            },
            now,
            effects,
          );
      },
      userCause(principal, 'reply', `Reply to UserMessage:${id}`, {
        type: 'UserMessage',
        key: String(id),
        uniqueId: null,
      }),
    );
    return this.get(principal, String(id));
  }
}

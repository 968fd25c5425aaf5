import { conflict, forbidden, invalid, notFound } from '../errors.ts';
import { fieldDefault } from '../model/data.ts';
import type { Principal } from '../security/privileges.ts';
import { MessageService, replyBody } from './messages.ts';
import { userCause } from './user-cause.ts';
import {
  checkRecipients,
  type HandOver,
  handedOver,
  handOverBody,
  isParticipant,
  replyingFor,
} from './user-message-handover.ts';

export { isParticipant };

/**
 * User messages: a participant (or one it delegated to) picks one of the offered responses, with a comment
 * of at most 1,000 characters; the waiting job then ends with that response's status and return code, and a
 * chain waiting on it as a call goes on. A participant may also forward or delegate it (user-message-handover.ts).
 */
export class UserMessages extends MessageService {
  protected readonly kind = 'UserMessage' as const;

  /** Also only its participants and their delegates may reply (checked again in the reply's transaction). */
  override async authorizeReply(principal: Principal, idText: string): Promise<number> {
    const id = await super.authorizeReply(principal, idText);
    const m = await this.engine.store.getObject('UserMessage', String(id));
    if (m && replyingFor(principal, m.data) === undefined)
      throw forbidden(`Only the participants of UserMessage:${id} may reply to it`);
    return id;
  }

  /**
   * The checks of a forward or delegation that need no body: visible (404), Reply (403), and only a participant
   * (403; a delegate may reply but not pass the message on). Run before the body is read, and again.
   */
  async authorizeHandOver(principal: Principal, idText: string, kind: HandOver): Promise<number> {
    const id = await super.authorizeReply(principal, idText);
    const m = await this.engine.store.getObject('UserMessage', String(id));
    if (m && !isParticipant(principal, m.data.Participants ?? []))
      throw forbidden(`Only the participants of UserMessage:${id} may ${kind} it`);
    return id;
  }

  /** `PUT /UserMessage/<id>/forward` and `/delegate`: the message after it was passed on. */
  async handOver(
    principal: Principal,
    idText: string,
    kind: HandOver,
    body: unknown,
  ): Promise<Record<string, unknown>> {
    const id = await this.authorizeHandOver(principal, idText, kind);
    const asked = handOverBody(kind, body);
    await this.engine.mutate(
      async (tx) => {
        const m = await tx.getObject('UserMessage', String(id));
        if (!m) throw notFound('UserMessage', id);
        if (!isParticipant(principal, m.data.Participants ?? []))
          throw forbidden(`Only the participants of UserMessage:${id} may ${kind} it`);
        await checkRecipients(tx, asked.to);
        await tx.patchObjectData(m.uniqueId, handedOver(m.data, id, principal, kind, asked, this.clock.now()));
      },
      userCause(principal, kind, `${kind === 'forward' ? 'Forwarded' : 'Delegated'} UserMessage:${id}`, {
        type: 'UserMessage',
        key: String(id),
        uniqueId: null,
      }),
    );
    return this.get(principal, String(id));
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
        const inPlaceOf = replyingFor(principal, m.data);
        if (inPlaceOf === undefined) throw forbidden(`Only the participants of UserMessage:${id} may reply to it`);
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
          ReplyFor: inPlaceOf,
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
              notes: [
                `${principal.user}${inPlaceOf ? ` for ${inPlaceOf}` : ''} replied ${chosen.Response}${comment ? `: ${comment}` : ''}`,
              ],
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

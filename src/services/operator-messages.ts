import { normalizeReply, replyMatches } from '../domain/reply-match.ts';
import { conflict, forbidden, invalid, notFound } from '../errors.ts';
import { can, type Principal } from '../security/privileges.ts';
import { parseJobId } from './jobs.ts';
import { MessageService, replyBody } from './messages.ts';
import { userCause } from './user-cause.ts';

/**
 * Operator messages: read one, and reply to it. A reply must match the message's ReplyExpression
 * as a whole (bounded in time, reply-match.ts); a message is answered once. The reply then reaches what sent the
 * message: a restart request ends the waiting job (and, for Restart, submits it again), a System_OperatorMessage
 * job completes with the reply as its Out parameter, an alert is acknowledged.
 */
export class OperatorMessages extends MessageService {
  protected readonly kind = 'OperatorMessage' as const;

  async reply(principal: Principal, idText: string, body: unknown): Promise<Record<string, unknown>> {
    const id = await this.authorizeReply(principal, idText);
    const reply = normalizeReply(String(replyBody(this.kind, body).Reply));
    if (reply === '') throw invalid('Field "Reply" must not be empty');
    await this.engine.mutate(
      async (tx, effects, kernel) => {
        const m = await tx.getObject('OperatorMessage', String(id));
        if (!m) throw notFound('OperatorMessage', id);
        if (m.data.ReplyStatus !== 'Required')
          throw conflict(
            `OperatorMessage:${id} is ${m.data.ReplyStatus === 'Replied' ? 'answered already' : 'not waiting for a reply'}`,
          );
        const expression = m.data.ReplyExpression ?? '.+';
        const matches = replyMatches(expression, reply);
        if (matches === 'timeout')
          throw invalid(`Field "Reply": the reply expression ${expression} took too long to match`);
        if (!matches) throw invalid(`Field "Reply": "${reply}" does not match the reply expression ${expression}`);
        const now = this.clock.now();
        await tx.patchObjectData(m.uniqueId, {
          ...m.data,
          ReplyStatus: 'Replied',
          Reply: reply,
          ReplyTime: { ms: now, zone: m.data.CreationTime?.zone ?? 'UTC' },
          ReplyUser: principal.user,
        });
        // The reply reaches what sent the message: a waiting job, a chain step, an alert (kernel reactions).
        await kernel.answer(
          tx,
          { sender: String(m.data.SenderObject ?? ''), message: id, reply, user: principal.user },
          now,
          effects,
        );
      },
      userCause(principal, 'reply', `Reply to OperatorMessage:${id}`, {
        type: 'OperatorMessage',
        key: String(id),
        uniqueId: null,
      }),
    );
    return this.get(principal, String(id));
  }

  /**
   * The checks of a delete that need no body: the message exists and is visible (else 404), the Delete privilege
   * on its partition (else 403). Run before anything else, and again by `delete`.
   */
  async authorizeDelete(principal: Principal, idText: string): Promise<number> {
    const id = parseJobId(idText, this.kind);
    const m = await this.engine.store.getObject('OperatorMessage', String(id));
    if (!m || !can(principal, this.kind, m.partition, 'View')) throw notFound(this.kind, id);
    if (!can(principal, this.kind, m.partition, 'Delete'))
      throw forbidden(`You need the Delete privilege to delete OperatorMessage:${id}`);
    return id;
  }

  /** `DELETE /OperatorMessage/<id>`: a Replied or NotRequired message goes; one still waiting for a reply is 409. */
  async delete(principal: Principal, idText: string): Promise<void> {
    const id = await this.authorizeDelete(principal, idText);
    await this.engine.mutate(
      async (tx) => {
        const m = await tx.getObject('OperatorMessage', String(id));
        if (!m) throw notFound('OperatorMessage', id);
        if (m.data.ReplyStatus === 'Required')
          throw conflict(`OperatorMessage:${id} still waits for a reply; reply to it before deleting it`);
        await tx.deleteObject(m.uniqueId);
      },
      userCause(principal, 'delete', `Deleted OperatorMessage:${id}`, {
        type: 'OperatorMessage',
        key: String(id),
        uniqueId: null,
      }),
    );
  }
}

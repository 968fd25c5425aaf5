import { normalizeReply, replyMatches } from '../domain/reply-match.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { fieldDefault } from '../model/data.ts';
import type { Principal } from '../security/privileges.ts';
import { MessageService, replyBody } from './messages.ts';

/** Alerts: read one, reply to it (`Acknowledge` stops its escalation). */
export class Alerts extends MessageService {
  protected readonly kind = 'Alert' as const;

  async reply(principal: Principal, idText: string, body: unknown): Promise<Record<string, unknown>> {
    const id = await this.authorizeReply(principal, idText);
    const response = normalizeReply(String(replyBody(this.kind, body).Response));
    if (response === '') throw invalid('Field "Response" must not be empty');
    await this.engine.mutate(async (tx, effects, kernel) => {
      const alert = await tx.getObject('Alert', String(id));
      if (!alert) throw notFound('Alert', id);
      const expression = alert.data.ReplyExpression ?? fieldDefault('ProcessServerAlertSource', 'ReplyExpression');
      const matches = replyMatches(expression, response);
      if (matches === 'timeout')
        throw invalid(`Field "Response": the reply expression ${expression} took too long to match`);
      if (!matches) throw invalid(`Field "Response": "${response}" does not match the reply expression ${expression}`);
      const answer = { sender: `Alert:${id}`, reply: response, user: principal.user };
      if (!(await kernel.answer(tx, answer, this.clock.now(), effects)))
        throw conflict(`Alert:${id} is ${String(alert.data.Status)} already`);
    });
    return this.get(principal, String(id));
  }
}

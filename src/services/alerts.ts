import { answerAlert } from '../engine/alerts.ts';
import { normalizeReply, replyMatches } from '../domain/reply-match.ts';
import { conflict, forbidden, invalid, notFound } from '../errors.ts';
import { can, type Principal } from '../security/privileges.ts';
import { MessageService, replyBody, visibleForReply } from './messages.ts';

type SourceType = 'ProcessServerAlertSource' | 'JobDefinitionAlertSource';

/**
 * Alerts (spec §4 rows 16, 18, 19): read one, reply to it (`Acknowledge` stops its escalation), and switch alert
 * sources on and off with the Control privilege.
 */
export class Alerts extends MessageService {
  protected readonly kind = 'Alert' as const;

  async reply(p: Principal, idText: string, body: unknown): Promise<Record<string, unknown>> {
    const id = await visibleForReply(this.engine.store, p, 'Alert', idText);
    const raw = replyBody(body, ['Response'], 'Response').Response;
    if (typeof raw !== 'string') throw invalid('Field "Response" must be a string');
    const response = normalizeReply(raw);
    if (response === '') throw invalid('Field "Response" must not be empty');
    await this.engine.mutate(async (tx) => {
      const alert = await tx.getObject('Alert', String(id));
      if (!alert) throw notFound('Alert', id);
      const expression = (alert.data.ReplyExpression as string | null) ?? 'Acknowledge';
      const matches = replyMatches(expression, response);
      if (matches === 'timeout') throw invalid(`Field "Response": the reply expression ${expression} took too long to match`);
      if (!matches) throw invalid(`Field "Response": "${response}" does not match the reply expression ${expression}`);
      if (!(await answerAlert(tx, alert, response, p.user, this.clock.now())))
        throw conflict(`Alert:${id} is ${String(alert.data.Status)} already`);
    });
    return this.get(p, String(id));
  }

  /** `PUT …AlertSource/<key>/enable|disable`: answers the source as it is now. */
  async setEnabled(p: Principal, type: SourceType, key: string, enabled: boolean): Promise<Record<string, unknown>> {
    await this.engine.mutate(async (tx) => {
      const source = await tx.getObject(type, key);
      if (!source || !can(p, type, source.partition, 'View')) throw notFound(type, key);
      if (!can(p, type, source.partition, 'Control'))
        throw forbidden(`You need the Control privilege to ${enabled ? 'enable' : 'disable'} ${type}:${key}`);
      if (source.data.Enabled !== enabled) await tx.patchObjectData(source.uniqueId, { ...source.data, Enabled: enabled });
    });
    this.engine.alertSources.invalidate();
    return { businessKey: `${type}:${key}`, Enabled: enabled };
  }
}

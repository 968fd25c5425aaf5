import type { Engine } from '../engine/engine.ts';
import { settleStepRequest } from '../engine/chains.ts';
import { settleRestartRequest } from '../engine/transitions.ts';
import { conflict, forbidden, invalid, notFound } from '../errors.ts';
import { requireType } from '../model/registry.ts';
import { renderObject } from '../model/render.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { Clock } from '../time/clock.ts';
import { parseJobId } from './jobs.ts';

const TYPE = requireType('OperatorMessage');
const MAX_REPLY = 1000;

/** A reply as stored and matched: trimmed, every run of white space one space (product §2.7). */
export const normalizeReply = (text: string): string => text.trim().replace(/\s+/g, ' ');

/**
 * Operator messages (spec §4 row 14): read one, and reply to it. A reply must match the message's ReplyExpression
 * as a whole; a message is answered once. A reply to a restart request ends the waiting job and, for Restart,
 * submits it again.
 */
export class OperatorMessages {
  private readonly engine: Engine;
  private readonly clock: Clock;

  constructor(engine: Engine, clock: Clock) {
    this.engine = engine;
    this.clock = clock;
  }

  async get(p: Principal, idText: string): Promise<Record<string, unknown>> {
    const id = parseJobId(idText, 'OperatorMessage');
    const m = await this.engine.store.getObject('OperatorMessage', String(id));
    if (!m || !can(p, 'OperatorMessage', m.partition, 'View')) throw notFound('OperatorMessage', id);
    return renderObject(TYPE, { uniqueId: m.uniqueId, businessKey: `OperatorMessage:${id}` }, m.data);
  }

  async reply(p: Principal, idText: string, body: unknown): Promise<Record<string, unknown>> {
    const id = parseJobId(idText, 'OperatorMessage');
    const seen = await this.engine.store.getObject('OperatorMessage', String(id));
    if (!seen || !can(p, 'OperatorMessage', seen.partition, 'View')) throw notFound('OperatorMessage', id);
    if (!can(p, 'OperatorMessage', seen.partition, 'Reply'))
      throw forbidden(`You need the Reply privilege to reply to OperatorMessage:${id}`);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('The body must be {"Reply": "…"}');
    for (const k of Object.keys(body)) if (k !== 'Reply') throw invalid(`Unknown field "${k}"; the body is {"Reply": "…"}`);
    const raw = (body as { Reply?: unknown }).Reply;
    if (typeof raw !== 'string') throw invalid('Field "Reply" must be a string');
    const reply = normalizeReply(raw);
    if (reply === '') throw invalid('Field "Reply" must not be empty');
    if (reply.length > MAX_REPLY) throw invalid(`Field "Reply" must be at most ${MAX_REPLY} characters`);
    await this.engine.mutate(async (tx, fx) => {
      const m = await tx.getObject('OperatorMessage', String(id));
      if (!m) throw notFound('OperatorMessage', id);
      if (m.data.ReplyStatus !== 'Required')
        throw conflict(`OperatorMessage:${id} is ${m.data.ReplyStatus === 'Replied' ? 'answered already' : 'not waiting for a reply'}`);
      const expression = (m.data.ReplyExpression as string | null) ?? '.*';
      if (!new RegExp(`^(?:${expression})$`).test(reply))
        throw invalid(`Field "Reply": "${reply}" does not match the reply expression ${expression}`);
      const now = this.clock.now();
      await tx.patchObjectData(m.uniqueId, {
        ...m.data,
        ReplyStatus: 'Replied',
        Reply: reply,
        ReplyTime: { ms: now, zone: (m.data.CreationTime as { zone?: string } | null)?.zone ?? 'UTC' },
        ReplyUser: p.user,
      });
      const sender = /^Job:(\d+)$/.exec(String(m.data.SenderObject ?? ''));
      const job = sender ? await tx.jobs.get(Number(sender[1])) : undefined;
      if (job?.status === 'ConsoleRestart' && job.data.operatorMessage === id)
        await settleRestartRequest(tx, job, reply === 'Restart', p.user, now, fx);
      else if (job?.status === 'Console' && job.data.chain?.step && job.data.operatorMessage === id)
        await settleStepRequest(tx, job, reply === 'Restart', p.user, now, fx);
    });
    return this.get(p, String(id));
  }
}

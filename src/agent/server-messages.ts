import { type FileWatch, folderProblem } from '../domain/file-watch.ts';
import type { ServerMessage } from './protocol.ts';

/**
 * Checks the shape of a parsed line from the server. Returns the message, or a reason to log when the line is
 * not a message the agent understands (the agent ignores it and goes on).
 */
export function toServerMessage(value: unknown): ServerMessage | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const m = value as Record<string, unknown>;
  switch (m.type) {
    case 'welcome':
      if (!isCount(m.killGraceMs) || !isCount(m.heartbeatMs)) return 'welcome without killGraceMs or heartbeatMs';
      return { type: 'welcome', killGraceMs: m.killGraceMs, heartbeatMs: m.heartbeatMs };
    case 'run': {
      if (!isAttemptOf(m)) return 'run without jobId or attempt';
      if (m.scriptType !== 'BASH' && m.scriptType !== 'SH' && m.scriptType !== 'PYTHON' && m.scriptType !== 'NODE')
        return `run ${m.jobId}.${m.attempt} with an unknown scriptType`;
      if (typeof m.script !== 'string') return `run ${m.jobId}.${m.attempt} without script`;
      const env = m.env ?? {};
      if (typeof env !== 'object' || env === null || Array.isArray(env)) return `run ${m.jobId}.${m.attempt}: bad env`;
      for (const v of Object.values(env)) if (typeof v !== 'string') return `run ${m.jobId}.${m.attempt}: bad env`;
      const outNames = m.outNames ?? [];
      if (!Array.isArray(outNames) || outNames.some((n) => typeof n !== 'string'))
        return `run ${m.jobId}.${m.attempt}: bad outNames`;
      const mask = m.mask ?? [];
      if (!Array.isArray(mask) || mask.some((v) => typeof v !== 'string'))
        return `run ${m.jobId}.${m.attempt}: bad mask`;
      return {
        type: 'run',
        jobId: m.jobId,
        attempt: m.attempt,
        scriptType: m.scriptType,
        script: m.script,
        env: { ...(env as Record<string, string>) },
        outNames: [...(outNames as string[])],
        ...(mask.length > 0 ? { mask: [...(mask as string[])] } : {}),
      };
    }
    case 'kill':
    case 'abandon':
    case 'ack':
      if (!isAttemptOf(m)) return `${m.type} without jobId or attempt`;
      return { type: m.type, jobId: m.jobId, attempt: m.attempt };
    case 'pong':
      return { type: 'pong' };
    case 'raised':
      if (typeof m.id !== 'string') return 'raised without id';
      return { type: 'raised', id: m.id };
    case 'watch':
      return watchOf(m.watches);
    case 'heartbeat':
      if (!isCount(m.heartbeatMs)) return 'heartbeat without heartbeatMs';
      return { type: 'heartbeat', heartbeatMs: m.heartbeatMs };
    default:
      return `unknown message type ${JSON.stringify(m.type)?.slice(0, 40)}`;
  }
}

/** A `watch` message: every item well formed, or the whole message is ignored (the agent keeps its watches). */
function watchOf(watches: unknown): ServerMessage | string {
  if (!Array.isArray(watches)) return 'watch without watches';
  const out: FileWatch[] = [];
  for (const w of watches as Array<Record<string, unknown>>) {
    if (typeof w !== 'object' || w === null) return 'watch with a bad item';
    const { definition, directory, pattern, pollSeconds, stableSeconds, moveDirectory } = w;
    if (typeof definition !== 'string' || typeof directory !== 'string' || typeof pattern !== 'string')
      return 'watch with a bad item';
    if (!isCount(pollSeconds) || pollSeconds < 1 || !isCount(stableSeconds)) return 'watch with a bad item';
    if (moveDirectory !== null && typeof moveDirectory !== 'string') return 'watch with a bad item';
    if (folderProblem(directory) || (moveDirectory !== null && folderProblem(moveDirectory)))
      return `watch of a folder that is not absolute or holds ".." (${directory.slice(0, 200)})`;
    out.push({ definition, directory, pattern, pollSeconds, stableSeconds, moveDirectory });
  }
  return { type: 'watch', watches: out };
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isAttemptOf(m: Record<string, unknown>): m is Record<string, unknown> & { jobId: number; attempt: number } {
  return isCount(m.jobId) && isCount(m.attempt);
}

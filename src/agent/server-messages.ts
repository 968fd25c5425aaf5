import { type FileWatch, folderProblem } from '../domain/file-watch.ts';
import type { RunMessage, ServerMessage } from './protocol.ts';

const RUN_TYPES: ReadonlySet<unknown> = new Set<RunMessage['scriptType']>([
  'BASH',
  'SH',
  'PYTHON',
  'NODE',
  'HTTP',
  'SQL',
]);
const isRunType = (v: unknown): v is RunMessage['scriptType'] => RUN_TYPES.has(v);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An HTTP or SQL run's request, credential and JSON paths, checked; none for a script. */
function requestParts(m: Record<string, unknown>): Pick<RunMessage, 'request' | 'auth' | 'jsonPaths'> | string {
  if (m.scriptType !== 'HTTP' && m.scriptType !== 'SQL') return {};
  if (!isObject(m.request)) return 'no request';
  const jsonPaths = m.jsonPaths ?? {};
  if (!isTextRecord(jsonPaths)) return 'bad jsonPaths';
  const parts: Pick<RunMessage, 'request' | 'auth' | 'jsonPaths'> = {
    request: m.request,
    jsonPaths: { ...jsonPaths },
  };
  if (m.auth !== undefined) {
    const a = m.auth;
    if (!isObject(a) || typeof a.user !== 'string' || typeof a.password !== 'string' || typeof a.protocol !== 'string')
      return 'bad auth';
    parts.auth = { user: a.user, password: a.password, protocol: a.protocol };
  }
  return parts;
}

/**
 * Checks the shape of a parsed line from the server. Returns the message, or a reason to log when the line is
 * not a message the agent understands (the agent ignores it and goes on).
 */
const isTextList = (v: unknown): v is string[] => Array.isArray(v) && v.every((item) => typeof item === 'string');
const isTextRecord = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  Object.values(v).every((item) => typeof item === 'string');

export function toServerMessage(value: unknown): ServerMessage | string {
  if (!isObject(value)) return 'not an object';
  const m = value;
  switch (m.type) {
    case 'welcome':
      if (!isCount(m.killGraceMs) || !isCount(m.heartbeatMs)) return 'welcome without killGraceMs or heartbeatMs';
      return { type: 'welcome', killGraceMs: m.killGraceMs, heartbeatMs: m.heartbeatMs };
    case 'run': {
      if (!isAttemptOf(m)) return 'run without jobId or attempt';
      if (!isRunType(m.scriptType)) return `run ${m.jobId}.${m.attempt} with an unknown scriptType`;
      if (typeof m.script !== 'string') return `run ${m.jobId}.${m.attempt} without script`;
      const env = m.env ?? {};
      if (!isTextRecord(env)) return `run ${m.jobId}.${m.attempt}: bad env`;
      const outNames = m.outNames ?? [];
      if (!isTextList(outNames)) return `run ${m.jobId}.${m.attempt}: bad outNames`;
      const mask = m.mask ?? [];
      if (!isTextList(mask)) return `run ${m.jobId}.${m.attempt}: bad mask`;
      const request = requestParts(m);
      if (typeof request === 'string') return `run ${m.jobId}.${m.attempt}: ${request}`;
      return {
        ...request,
        type: 'run',
        jobId: m.jobId,
        attempt: m.attempt,
        scriptType: m.scriptType,
        script: m.script,
        env: { ...env },
        outNames: [...outNames],
        ...(mask.length > 0 ? { mask: [...mask] } : {}),
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
  const items: unknown[] = watches;
  for (const w of items) {
    if (!isObject(w)) return 'watch with a bad item';
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

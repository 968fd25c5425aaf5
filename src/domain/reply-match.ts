import vm from 'node:vm';
import { errorCode } from '../errors.ts';

/**
 * Reply expressions are regular expressions written by users, and a regular expression can take
 * exponential time on a crafted reply (`(a+)+$`). Matching runs in a separate V8 context with a time limit, so a
 * hostile expression costs at most MATCH_TIMEOUT_MS of one reply and never hangs the server.
 */
export const MATCH_TIMEOUT_MS = 100;

const context = vm.createContext(Object.create(null));
const MATCH = new vm.Script('new RegExp("^(?:" + expression + ")$").test(reply)');

/** A reply as stored and matched: trimmed, every run of white space one space. */
export const normalizeReply = (text: string): string => text.trim().replace(/\s+/g, ' ');

/** Why `expression` is not a usable regular expression, or undefined. */
export function expressionProblem(expression: string): string | undefined {
  try {
    new RegExp(`^(?:${expression})$`);
    return undefined;
  } catch {
    return `${JSON.stringify(expression)} is not a valid regular expression`;
  }
}

/** Whether `reply` matches `expression` as a whole; 'timeout' when the expression took too long. */
export function replyMatches(expression: string, reply: string): boolean | 'timeout' {
  if (expressionProblem(expression) !== undefined) return false;
  // The vm's limit is wall time: on a busy machine even a quick match can be descheduled past it. A match is cut off
  // only when it spent at least half the limit computing (a catastrophic expression spends all of it); otherwise it
  // is run again, a few times at most.
  for (let attempt = 1; ; attempt++) {
    const before = process.cpuUsage();
    const result = matchOnce(expression, reply);
    if (result !== 'timeout') return result;
    const spent = process.cpuUsage(before);
    if ((spent.user + spent.system) / 1000 >= MATCH_TIMEOUT_MS / 2 || attempt === 5) return 'timeout';
  }
}

function matchOnce(expression: string, reply: string): boolean | 'timeout' {
  context.expression = expression;
  context.reply = reply;
  try {
    return MATCH.runInContext(context, { timeout: MATCH_TIMEOUT_MS }) === true;
  } catch (e) {
    if (errorCode(e) === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return 'timeout';
    return false;
  } finally {
    context.expression = undefined;
    context.reply = undefined;
  }
}

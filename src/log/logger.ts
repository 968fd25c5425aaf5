import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { requestContext } from './request-context.ts';

export type LogFormat = 'json' | 'pretty';

/** The server's logger: JSON lines (or pino-pretty's coloured lines for a terminal), each with the request's id. */
export function createLogger(level: string, format: LogFormat = 'json'): Logger {
  const options = {
    level,
    mixin: () => {
      const request = requestContext.getStore();
      return request ? { reqId: request.id } : {};
    },
  };
  if (format === 'pretty')
    return pino(options, pretty({ colorize: process.stdout.isTTY === true, sync: true, ignore: 'pid,hostname' }));
  return pino(options);
}

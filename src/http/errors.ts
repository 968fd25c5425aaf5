import { diskFull, MillraceError, unavailable } from '../errors.ts';
import { isDatabaseUnavailable, isDiskFull } from '../store/store.ts';

/** An error as both interfaces render it: HTTP status, headers, and the record `{code, message}`. */
export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  code: string;
  message: string;
}

// Fastify's own errors carry a code; their messages are rewritten so no internal wording reaches clients.
const FASTIFY_MESSAGES: Record<string, (limit: number) => string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (limit) => `The body is larger than the limit of ${limit} bytes`,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => 'Unsupported content type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => 'The Content-Length header does not match the body',
  FST_ERR_CTP_EMPTY_JSON_BODY: () => 'The body is empty',
  FST_ERR_CTP_INVALID_JSON_BODY: () => 'The body is not valid JSON',
};

/** What the JSON parser says of a body it refuses (onProtoPoisoning, onConstructorPoisoning): valid JSON. */
const FORBIDDEN_NAME = /forbidden prototype property/;

/**
 * Maps anything thrown while handling a request to what the client sees. Never a stack trace or SQL text:
 * unexpected errors become a bare 500 and are logged by the caller.
 */
export function renderError(err: unknown, bodyLimit: number): RenderedError & { unexpected: boolean } {
  const e = isDatabaseUnavailable(err) ? unavailable() : isDiskFull(err) ? diskFull() : err;
  if (e instanceof MillraceError)
    return { status: e.status, headers: e.headers, code: String(e.status), message: e.message, unexpected: false };
  const fe = e as { statusCode?: unknown; code?: unknown; message?: unknown; validation?: unknown };
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    const rewrite = typeof fe.code === 'string' ? FASTIFY_MESSAGES[fe.code] : undefined;
    // A JSON syntax error from the parser is a SyntaxError with statusCode 400.
    const message = rewrite
      ? rewrite(bodyLimit)
      : e instanceof SyntaxError
        ? FORBIDDEN_NAME.test(String(fe.message))
          ? 'The body names "__proto__" (or "constructor" holding "prototype"), which is not accepted in any object'
          : 'The body is not valid JSON'
        : typeof fe.message === 'string' && fe.message.length < 300
          ? fe.message
          : 'Bad request';
    return { status, headers: {}, code: String(status), message, unexpected: false };
  }
  return { status: 500, headers: {}, code: '500', message: 'Internal server error', unexpected: true };
}

/**
 * Every error the services throw, in one place. Each interface renders a MillraceError in its own format
 * (JSON error record, XML <error>), so services never know which interface called them.
 */

export class MillraceError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'MillraceError';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/** 400: the input is invalid; the message names the field. */
export const invalid = (message: string): MillraceError => new MillraceError(400, 'INVALID_INPUT', message);

/** 401: missing, unknown, revoked or expired credentials. The body never says which. */
export const unauthenticated = (challenge: string): MillraceError =>
  new MillraceError(401, 'UNAUTHENTICATED', 'Authentication required', { 'WWW-Authenticate': challenge });

/** 403: the caller can see the object but lacks the privilege for this operation. */
export const forbidden = (message: string): MillraceError => new MillraceError(403, 'FORBIDDEN', message);

/** 404: missing, or not visible to the caller: both answer the same so existence does not leak. */
export const notFound = (type: string, key: string | number): MillraceError =>
  new MillraceError(404, 'NOT_FOUND', `Unable to find object ${type}:${key}`);

/** 409: the object exists already, is referenced, is built in, or the action does not apply in its status. */
export const conflict = (message: string): MillraceError => new MillraceError(409, 'CONFLICT', message);

/** 413: the body is larger than the interface accepts. */
export const tooLarge = (message: string): MillraceError => new MillraceError(413, 'TOO_LARGE', message);

/** 415: the body has a content type the route does not take. */
export const unsupportedMediaType = (message: string): MillraceError =>
  new MillraceError(415, 'UNSUPPORTED_MEDIA_TYPE', message);

/** 422: the body is well formed but its content cannot be processed (e.g. an unsafe or malformed CAR archive). */
export const unprocessable = (message: string): MillraceError => new MillraceError(422, 'UNPROCESSABLE', message);

/** 429: too many failed authentications from one address. */
export const tooManyRequests = (retryAfterSeconds: number): MillraceError =>
  new MillraceError(429, 'TOO_MANY_REQUESTS', 'Too many failed attempts; try again later', {
    'Retry-After': String(retryAfterSeconds),
  });

/** 503: the database cannot be reached; the client may retry. */
export const unavailable = (): MillraceError =>
  new MillraceError(503, 'UNAVAILABLE', 'The database is unavailable; try again later', { 'Retry-After': '5' });

/**
 * 503: a write was refused because the disk (or the database's size limit) is full; the client may retry once an
 * operator has freed space. Nothing of the request was stored (docs/architecture.md §9).
 */
export const diskFull = (): MillraceError =>
  new MillraceError(503, 'DISK_FULL', 'The disk is full: the server cannot store this change; try again later', {
    'Retry-After': '30',
  });

/** The `code` a thrown value carries (Node's system errors, the database drivers), or undefined. */
export function errorCode(e: unknown): unknown {
  return typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined;
}

/** A thrown value's message: an Error's own, else the value written as text. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

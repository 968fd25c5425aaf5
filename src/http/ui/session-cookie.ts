import type { FastifyReply, FastifyRequest } from 'fastify';
import { forbidden } from '../../errors.ts';
import { csrfMatches, type Session, Sessions } from '../../services/sessions.ts';

/**
 * The dashboard's session cookie. Written by hand: two headers' worth of parsing does not merit @fastify/cookie.
 * HttpOnly (scripts never see it), SameSite=Strict (no other site's page sends it), Path = the context, so
 * servers under other contexts on the same host never receive it.
 */
export const SESSION_COOKIE = 'millrace_session';
export const CSRF_HEADER = 'x-millrace-csrf';

/** The value of the session cookie in the request's Cookie header, if any. */
export function sessionCookie(req: FastifyRequest): string | undefined {
  return readCookie(req, SESSION_COOKIE);
}

/** The value of the cookie `name` in the request's Cookie header, if any. */
export function readCookie(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** `Path` of the cookie: the context root with a trailing slash (`/` without a context). */
export const cookiePath = (root: string): string => `${root}/`;

export function setSessionCookie(req: FastifyRequest, reply: FastifyReply, root: string, id: string): void {
  const secure = req.protocol === 'https' ? '; Secure' : '';
  const maxAge = Math.floor(Sessions.LIFETIME_MS / 1000);
  reply.header(
    'Set-Cookie',
    `${SESSION_COOKIE}=${id}; Path=${cookiePath(root)}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure}`,
  );
}

export function clearSessionCookie(reply: FastifyReply, root: string): void {
  reply.header('Set-Cookie', `${SESSION_COOKIE}=; Path=${cookiePath(root)}; Max-Age=0; HttpOnly; SameSite=Strict`);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A state-changing request made with the cookie must carry the session's CSRF token (403 otherwise). */
export function requireCsrf(req: FastifyRequest, session: Session): void {
  if (SAFE_METHODS.has(req.method)) return;
  if (!csrfMatches(session, req.headers[CSRF_HEADER]))
    throw forbidden('A request signed in with the session cookie must carry its X-Millrace-CSRF token');
}

import { openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readJsonPath } from './json-path.ts';
import { maskText } from './mask.ts';
import { copyMasked } from './masked-output.ts';
import type { RequestContext } from './request-context.ts';

/** Redirects followed at most; a longer chain ends the job in Error. */
const MAX_REDIRECTS = 10;
/** A response body larger than this is not parsed for JSON-path Out parameters (it would be held in memory). */
const JSON_PATH_LIMIT = 16 * 1024 * 1024;

interface HttpSpec {
  Method: string;
  Url: string;
  Headers: Record<string, string> | null;
  Body: string | null;
  ExpectStatus: string;
  TimeoutSeconds: number;
  FollowRedirects: boolean;
}

/** `${NAME}` replaced by the parameter's value (`encode` for a URL); an unknown name is left as it is. */
export function substitute(text: string, env: Record<string, string>, encode = (v: string) => v): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) =>
    Object.hasOwn(env, name) ? encode(env[name] as string) : whole,
  );
}

/** Whether `status` is in `ranges` (`200-299,304`). */
export function statusExpected(status: number, ranges: string): boolean {
  return ranges.split(',').some((r) => {
    const [lo, hi] = r.split('-').map(Number) as [number, number | undefined];
    return status >= lo && status <= (hi ?? lo);
  });
}

/**
 * Sends the definition's request (following redirects up to MAX_REDIRECTS, the credential never sent to another
 * origin), streams the response body into stdout.log, writes every response's status line and headers to
 * headers.log, sets HTTP_STATUS and the JSON-path Out values. 0 when the final status is in ExpectStatus.
 */
export async function runHttp(ctx: RequestContext): Promise<number> {
  const spec = ctx.run.request as unknown as HttpSpec;
  const env = ctx.run.env;
  let url = new URL(substitute(spec.Url, env, encodeURIComponent));
  const origin = url.origin;
  let method = spec.Method;
  let body: string | null = spec.Body == null ? null : substitute(spec.Body, env);
  // Object.fromEntries defines each name as an own property: a header named `__proto__` is sent as a header.
  const headers: Record<string, string> = Object.fromEntries(
    Object.entries(spec.Headers ?? {}).map(([name, value]) => [name, substitute(value, env)]),
  );
  const auth = ctx.run.auth;
  const hasAuthorization = Object.keys(headers).some((n) => n.toLowerCase() === 'authorization');
  if (auth && !hasAuthorization)
    headers.Authorization =
      auth.protocol.toLowerCase() === 'bearer'
        ? `Bearer ${auth.password}`
        : `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`;
  const timeout = AbortSignal.timeout(spec.TimeoutSeconds * 1000);
  const signal = AbortSignal.any([ctx.signal, timeout]);
  const headerLog: string[] = [];
  try {
    for (let hop = 0; ; hop++) {
      const res = await send(url, method, headers, body, signal);
      headerLog.push(`HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage}`);
      for (let i = 0; i < res.rawHeaders.length; i += 2)
        headerLog.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
      headerLog.push('');
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (spec.FollowRedirects && status >= 300 && status < 400 && location) {
        res.resume();
        if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
        url = new URL(location, url);
        if (url.origin !== origin)
          for (const n of Object.keys(headers)) if (n.toLowerCase() === 'authorization') delete headers[n];
        if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
          method = 'GET';
          body = null;
        }
        continue;
      }
      await streamBody(res, ctx);
      ctx.out('HTTP_STATUS', String(status));
      readJsonOut(ctx);
      if (statusExpected(status, spec.ExpectStatus)) return 0;
      ctx.error(`HTTP status ${status} ${res.statusMessage ?? ''} is not in ExpectStatus ${spec.ExpectStatus}`);
      return 1;
    }
  } catch (err) {
    if (ctx.signal.aborted) return 1;
    if (timeout.aborted) ctx.error(`no complete response within TimeoutSeconds ${spec.TimeoutSeconds}`);
    else ctx.error(`${method} ${url.origin}${url.pathname}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    writeFileSync(ctx.file('headers.log'), maskText(headerLog.join('\n'), ctx.mask), { mode: 0o644 });
  }
}

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | null,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, signal }, resolve);
    req.once('error', reject);
    req.end(body ?? undefined);
  });
}

/** The body into stdout.log, at the pace the file is written (never held whole in memory). */
async function streamBody(res: IncomingMessage, ctx: RequestContext): Promise<void> {
  const fd = openSync(ctx.paths.stdout, 'w', 0o644);
  // The copy ends on the body's end, error or close (an abort destroys the response).
  await copyMasked(res, fd, ctx.mask).done;
  if (!res.complete) throw new Error('the response was cut off');
}

/** Out parameters with a JsonPath, read from stdout.log when the body is JSON of a sensible size. */
function readJsonOut(ctx: RequestContext): void {
  const paths = Object.entries(ctx.run.jsonPaths ?? {});
  if (paths.length === 0) return;
  if (statSync(ctx.paths.stdout).size > JSON_PATH_LIMIT) {
    ctx.error(`the response is larger than ${JSON_PATH_LIMIT} bytes: JSON-path Out parameters are not read`);
    return;
  }
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(ctx.paths.stdout, 'utf8'));
  } catch {
    ctx.error('the response is not JSON: JSON-path Out parameters are not read');
    return;
  }
  for (const [name, path] of paths) {
    const value = readJsonPath(document, path);
    if (value !== undefined) ctx.out(name, value);
  }
}

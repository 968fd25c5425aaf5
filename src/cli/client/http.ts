import { readFileSync } from 'node:fs';
import * as tls from 'node:tls';
import { errorMessage } from '../../errors.ts';
import { connectFailure } from '../../agent/connection.ts';
import type { Connection } from './profiles.ts';

/**
 * The client's one way to the server: the JSON interface with `X-API-Key`, over Node's fetch. Every failure becomes
 * one line naming the request and carrying the server's own message (`{"code","message"}`), so a user sees what
 * failed and why without a stack trace.
 */

export class ApiError extends Error {
  readonly status: number;
  readonly serverMessage: string;
  constructor(status: number, serverMessage: string, what: string) {
    super(`${what}: ${status} ${serverMessage}`);
    this.status = status;
    this.serverMessage = serverMessage;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: the client reads fields of whatever JSON the server answers
export type Json = any;

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

export interface ListPage {
  items: Json[];
  next: string | null;
}

export class ApiClient {
  readonly connection: Connection;
  constructor(connection: Connection) {
    this.connection = connection;
    if (connection.caFile) trustCa(connection.caFile);
  }

  /** fetch against the JSON base; `path` starts with `/`. A network failure is named by its cause. */
  async send(method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { 'X-API-Key': this.connection.apiKey, ...init.headers };
    let body: string | undefined;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['Content-Type'] = 'application/json';
    }
    const url = `${this.connection.base}${path}`;
    try {
      return await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
    } catch (err) {
      const cause = err instanceof Error ? err.cause : undefined;
      const reason = cause instanceof Error ? connectFailure(cause) : errorMessage(err);
      throw new Error(`${method} ${path}: cannot reach ${this.connection.server}: ${oneLine(reason)}`);
    }
  }

  /** The error of a non-2xx answer: the server's message when it sent an error record, else the status text. */
  async failure(method: string, path: string, res: Response): Promise<ApiError> {
    const text = await res.text().catch(() => '');
    let message = res.statusText || 'error';
    try {
      const parsed = JSON.parse(text) as { message?: unknown };
      if (typeof parsed.message === 'string') message = parsed.message;
    } catch {
      if (text.trim() !== '' && text.length < 300) message = text;
    }
    if (res.status === 401) message = `${message} (check the API key: --api-key, MILLRACE_API_KEY or the profile)`;
    return new ApiError(res.status, oneLine(message), `${method} ${path}`);
  }

  async json(method: string, path: string, body?: unknown): Promise<Json> {
    const res = await this.send(method, path, body !== undefined ? { body } : {});
    if (!res.ok) throw await this.failure(method, path, res);
    const text = await res.text();
    return text === '' ? undefined : JSON.parse(text);
  }

  get(path: string): Promise<Json> {
    return this.json('GET', path);
  }

  /** GET of an object that may be missing: undefined on 404. */
  async find(path: string): Promise<Json | undefined> {
    const res = await this.send('GET', path);
    if (res.status === 404) {
      await res.body?.cancel();
      return undefined;
    }
    if (!res.ok) throw await this.failure('GET', path, res);
    return res.json();
  }

  /** Every item of a list (`{items, next}`), page by page, up to `limit` items (all when undefined). */
  async *list(path: string, query: Record<string, string | undefined> = {}, limit?: number): AsyncGenerator<Json> {
    let after: string | null = null;
    let seen = 0;
    for (;;) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
      const pageSize = limit === undefined ? 500 : Math.min(500, limit - seen);
      params.set('Limit', String(pageSize));
      if (after !== null) params.set('After', after);
      const page = (await this.get(`${path}?${params}`)) as ListPage;
      for (const item of page.items) {
        yield item;
        seen += 1;
        if (limit !== undefined && seen >= limit) return;
      }
      if (!page.next || page.items.length === 0) return;
      after = page.next;
    }
  }

  async listAll(path: string, query: Record<string, string | undefined> = {}, limit?: number): Promise<Json[]> {
    const out: Json[] = [];
    for await (const item of this.list(path, query, limit)) out.push(item);
    return out;
  }
}

/**
 * Adds a private CA to those this process trusts (Node's fetch takes no CA of its own, but uses the process's
 * default set), so `--ca-file` works for every request of the command.
 */
function trustCa(file: string): void {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read --ca-file ${file}: ${errorMessage(err)}`);
  }
  const certs = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!certs) throw new Error(`--ca-file ${file} holds no PEM certificate`);
  // Node 24's functions, newer than the type definitions in use.
  const withDefaults = tls as typeof tls & {
    getCACertificates(which: 'default'): string[];
    setDefaultCACertificates(certs: string[]): void;
  };
  withDefaults.setDefaultCACertificates([...withDefaults.getCACertificates('default'), ...certs]);
}

/** A business key or id as one path segment. */
export const seg = (key: string | number): string => encodeURIComponent(String(key));

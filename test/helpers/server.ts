import pino, { type Logger } from 'pino';
import { type Config, DEFAULTS, interfacePaths } from '../../src/config/config.ts';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { createServer, listen, type MillraceServer } from '../../src/main.ts';
import type { Clock } from '../../src/time/clock.ts';
import type { Backend } from './backends.ts';
import { killAll, processesOf } from './processes.ts';

export const ADMIN_KEY = 'admin-test-key-0123456789abcdef';
export const ADMIN_PASSWORD = 'admin-test-password-0123';

/** `Authorization: Basic …` of a user and password. */
export const basicAuth = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export interface XmlRequestOptions {
  /** [user, password] for basic auth; `null` sends none. Defaults to the admin. */
  auth?: [string, string] | null;
  payload?: string | Buffer;
  headers?: Record<string, string>;
}

export interface Response {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read response fields directly, as a client would
  json: any;
  /** The body's bytes (XML interface: zips). */
  raw?: Buffer;
}

export interface RequestOptions {
  /** API key to send; `null` sends none. Defaults to the admin key. */
  key?: string | null;
  /** A value sent as JSON (with Content-Type application/json). */
  body?: unknown;
  /** A raw payload sent as is (set the content type in `headers`). */
  payload?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestServer {
  server: MillraceServer;
  config: Config;
  /** Path of the JSON interface's base, e.g. `/millrace/api-extension/External/Vendor/Vendor_RestService/rest/v1`. */
  base: string;
  /** Sends a request through the real HTTP app (over a socket with `socket`); `path` is relative to the JSON base unless it starts with `//`. */
  req(method: string, path: string, options?: RequestOptions): Promise<Response>;
  /** Path of the XML interface's base, e.g. `/millrace/api-rest`. */
  xmlBase: string;
  /** Sends a request to the XML interface (`path` relative to its base) with basic auth. */
  xml(method: string, path: string, options?: XmlRequestOptions): Promise<Response>;
  /** Creates a user with a password holding a custom role with these grants (`Type:Partition:Priv,…`). */
  loginWithGrants(user: string, password: string, grants: string[]): Promise<void>;
  /** Stops the server (as a crash-free shutdown) and starts a new one on the same database and data folder. */
  restart(): Promise<void>;
  /** Creates a user holding a custom role with these grants (`Type:Partition:Priv,…`) and returns an API key. */
  keyWithGrants(user: string, grants: string[]): Promise<string>;
  /** Creates a user with built-in roles and returns an API key. */
  keyWithRoles(user: string, roles: string[]): Promise<string>;
  close(): Promise<void>;
}

/** What `req` and `xml` send, and how: through Fastify's `inject`, or over a socket to the listening server. */
interface Exchange {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}
type Answer = { status: number; headers: Response['headers']; raw: Buffer };

/**
 * One HTTP exchange over a real socket (node:http, so headers and bytes are what the server sent, nothing decoded
 * or added by a fetch layer). The bound only catches a hang.
 */
function overSocket(port: number, x: Exchange): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...x.headers };
    if (x.payload !== undefined) headers['content-length'] = Buffer.byteLength(x.payload);
    const req = httpRequest(
      { host: '127.0.0.1', port, method: x.method, path: x.url, headers, timeout: 300_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, raw: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${x.method} ${x.url}: no answer within 300 s`)));
    req.on('error', reject);
    req.end(x.payload);
  });
}

/**
 * Starts a server on a fresh database of `backend`, as `millrace serve` would, without listening; `listen` makes it
 * listen (with its local agent), and `socket` also sends `req` and `xml` over a real socket to it instead of through
 * `inject` — what end-to-end tests use (startE2eServer).
 */
export async function startTestServer(
  backend: Backend,
  overrides: Partial<Config> = {},
  options: { clock?: Clock; listen?: boolean; socket?: boolean; logger?: Logger } = {},
): Promise<TestServer> {
  if (options.socket) options = { ...options, listen: true };
  const db = await backend.create();
  const config: Config = {
    ...DEFAULTS,
    authFailuresPerMinute: 10_000,
    // A shared test machine lags for seconds at times; shedding by lag is measured by bench:overload instead.
    limits: { ...DEFAULTS.limits, maxEventLoopDelayMs: 60_000 },
    // Listening servers run the real local agent, as `millrace serve` does; inject-only ones have none.
    localAgent: options.listen === true,
    // The suite's processes share one session, hence one scheduling group: a local agent at nice 10 would wait
    // behind every busy test process of a loaded machine. test/integration/agent/priority.test.ts runs the default.
    localAgentNice: 0,
    port: 0,
    ...overrides,
    dataDir: db.dataDir,
    ...(db.databaseUrl ? { databaseUrl: db.databaseUrl } : {}),
  };
  let server: MillraceServer;
  const start = async () => {
    server = await createServer(config, {
      logger: options.logger ?? pino({ level: 'silent' }),
      env: { MILLRACE_ADMIN_API_KEY: ADMIN_KEY, MILLRACE_ADMIN_PASSWORD: ADMIN_PASSWORD },
      ...(options.clock ? { clock: options.clock } : {}),
    });
    if (options.listen) await listen(server, config);
  };
  try {
    await start();
  } catch (err) {
    await db.cleanup();
    throw err;
  }
  const base = interfacePaths(config).jsonBase;
  const xmlBase = interfacePaths(config).xmlBase;

  const exchange = async (x: Exchange): Promise<Answer> => {
    // The port is read each time: a restarted server listens on a new one.
    if (options.socket) return overSocket((server.app.server.address() as { port: number }).port, x);
    const res = await server.app.inject({
      method: x.method as 'GET',
      url: x.url,
      headers: x.headers,
      ...(x.payload !== undefined ? { payload: x.payload } : {}),
    });
    return { status: res.statusCode, headers: res.headers, raw: res.rawPayload };
  };

  const req = async (method: string, path: string, o: RequestOptions = {}): Promise<Response> => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    const key = o.key === undefined ? ADMIN_KEY : o.key;
    if (key !== null) headers['X-API-Key'] = key;
    let payload: string | Buffer | undefined = o.payload;
    if (o.body !== undefined) {
      payload = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const url = path.startsWith('//') ? path.slice(1) : `${base}${path}`;
    const res = await exchange({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
    const body = res.raw.toString('utf8');
    let json: unknown;
    try {
      json = body ? JSON.parse(body) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, body, json };
  };

  const xml = async (method: string, path: string, o: XmlRequestOptions = {}): Promise<Response> => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    const auth = o.auth === undefined ? (['admin', ADMIN_PASSWORD] as [string, string]) : o.auth;
    if (auth !== null) headers.authorization = basicAuth(auth[0], auth[1]);
    const res = await exchange({
      method,
      url: `${xmlBase}${path}`,
      headers,
      ...(o.payload !== undefined ? { payload: o.payload } : {}),
    });
    return { status: res.status, headers: res.headers, body: res.raw.toString('utf8'), json: undefined, raw: res.raw };
  };

  /** `final`: the test is over, so the jobs it left running on the local agent are killed too. */
  const stop = async (final: boolean) => {
    const agent = server.localAgent?.current();
    const running = agent !== undefined && agent.exitCode === null && agent.signalCode === null;
    const exited = running ? once(agent, 'exit') : undefined;
    const jobs = final && running && agent.pid !== undefined ? processesOf(agent.pid) : [];
    await server.close();
    // The local agent leaves once told to stop and nothing runs; make sure before its folder goes.
    if (exited) {
      const timer = setTimeout(() => agent?.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    // Nothing writes into the data folder the cleanup removes next.
    await killAll(jobs);
  };

  let roleCount = 0;
  return {
    get server() {
      return server;
    },
    config,
    base,
    req,
    xmlBase,
    xml,
    async loginWithGrants(user, password, grants) {
      roleCount += 1;
      const role = `TestRole${roleCount}`;
      await server.accounts.putRole(role, grants);
      await server.accounts.addUser(user, { password, roles: [role] });
    },
    async keyWithGrants(user, grants) {
      roleCount += 1;
      const role = `TestRole${roleCount}`;
      await server.accounts.putRole(role, grants);
      await server.accounts.addUser(user, { roles: [role] });
      return (await server.accounts.createApiKey(user, {})).key;
    },
    async keyWithRoles(user, roles) {
      await server.accounts.addUser(user, { roles });
      return (await server.accounts.createApiKey(user, {})).key;
    },
    async restart() {
      await stop(false);
      await start();
    },
    async close() {
      try {
        await stop(true);
      } finally {
        await db.cleanup();
      }
    },
  };
}

/**
 * A server for end-to-end tests: listening on a port with its real local agent, and every `req` and `xml` of the
 * test sent over a socket to it, as a client on the network would.
 */
export function startE2eServer(
  backend: Backend,
  overrides: Partial<Config> = {},
  options: { clock?: Clock; logger?: Logger } = {},
): Promise<TestServer> {
  return startTestServer(backend, overrides, { ...options, socket: true });
}

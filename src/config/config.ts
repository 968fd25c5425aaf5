import { resolve } from 'node:path';
import type { SmtpSettings } from '../alerts/mail.ts';
import { allowEntryProblem } from '../alerts/ssrf.ts';
import { normalizeTimeZone } from '../time/zone.ts';

/** Everything `millrace serve` can be told. Flags win over environment variables, which win over defaults. */
export interface Config {
  dataDir: string;
  host: string;
  port: number;
  /** Context path without surrounding slashes; may be empty or hold `/` (`acme/prod`). */
  context: string;
  /** A `postgres://` URL selects PostgreSQL; otherwise SQLite in the data folder. */
  databaseUrl?: string;
  /** Sets `<Vendor>_RestService` in the JSON path and the header prefix `X-<Vendor>-`. */
  vendor: string;
  /**
   * The folder segment of `External/<folder>/<Vendor>_RestService`; the vendor name when unset. The product's
   * own clients call `External/REDWOOD/Redwood_RestService`: folder and component are named apart.
   */
  vendorFolder?: string;
  /** Origins a browser page may call the interfaces from (CORS); none by default. */
  corsOrigins: string[];
  /** Zone of dates the server writes itself (creation times) and of inputs given without one. */
  defaultTimeZone: string;
  logLevel: string;
  /** API keys may live at most this long (ISO-8601 p6m in the product). */
  apiKeyMaxLifetimeMs: number;
  /** A key unused for this long lapses. */
  apiKeyIdleLapseMs: number;
  /** Failed authentications tolerated per client address per minute before 429. */
  authFailuresPerMinute: number;
  /** `serve` starts the agent of GLOBAL.Local as a separate process once it listens. */
  localAgent: boolean;
  /** A kill sends TERM to the job's process group, then KILL after this long. */
  killGraceMs: number;
  /** Finished jobs older than this many days are purged (the system keep clause). */
  historyRetentionDays: number;
  /** The live feed keeps this many recent events for clients resuming with Last-Event-ID. */
  feedRetainEvents: number;
  /** Unsent bytes a feed client may have before it is dropped (it reconnects and resumes). */
  feedClientBufferBytes: number;
  /** Webhook targets allowed although internal: host names, IP addresses or CIDR ranges (SSRF protection). */
  webhookAllow: string[];
  /** Key of the webhook signatures; when unset, `<data>/webhook.key` (generated on first use). */
  webhookSecret?: string;
  /** Alert e-mail goes out through this server; without it, e-mail recipients get nothing. */
  smtp?: SmtpSettings;
  /** Public keys (files, or folders of `*.pem`/`*.pub`) trusted for signed CARs, besides `<data>/trusted-keys`. */
  trustedKeys: string[];
  /** Bounds that keep hostile or overwhelming clients from taking the server down (README "Limits"). */
  limits: HttpLimits;
}

export interface HttpLimits {
  /** A request's headers must arrive within this long… */
  headersTimeoutMs: number;
  /** …and the whole request, body included, within this long (408). */
  requestTimeoutMs: number;
  /** After the first 5 s, a body must arrive at least this fast on average (408). */
  minBodyBytesPerSecond: number;
  /** Open connections from one client address; more are answered 503 and closed. */
  maxConnectionsPerAddress: number;
  /** Requests being handled at once; beyond it, 503 with Retry-After (health and metrics paths exempt). */
  maxInFlight: number;
  /** While the event loop lags more than this for a second, new requests are shed with 503 (health, metrics exempt). */
  maxEventLoopDelayMs: number;
  /** Import jobs run at once (each inflates and parses its archive, up to the CAR caps); the others wait. */
  importConcurrency: number;
  /** Archive requests waiting for one of the 4 receiving slots; beyond this (or after 60 s) they get 503. */
  importQueue: number;
}

const DAY = 24 * 60 * 60 * 1000;

export const DEFAULTS: Config = {
  dataDir: './data',
  host: '127.0.0.1',
  port: 7070,
  context: 'millrace',
  vendor: 'Vendor',
  defaultTimeZone: 'UTC',
  logLevel: 'info',
  apiKeyMaxLifetimeMs: 183 * DAY,
  apiKeyIdleLapseMs: 92 * DAY,
  authFailuresPerMinute: 20,
  localAgent: true,
  killGraceMs: 5000,
  historyRetentionDays: 30,
  feedRetainEvents: 10_000,
  feedClientBufferBytes: 1024 * 1024,
  webhookAllow: [],
  trustedKeys: [],
  corsOrigins: [],
  limits: {
    headersTimeoutMs: 20_000,
    requestTimeoutMs: 120_000,
    minBodyBytesPerSecond: 1024,
    maxConnectionsPerAddress: 256,
    maxInFlight: 256,
    maxEventLoopDelayMs: 500,
    importConcurrency: 1,
    importQueue: 16,
  },
};

export const DEFAULT_MAIL_FROM = 'millrace@localhost';

/** Strips slashes at both ends and checks each segment, so `/acme/prod/` and `acme/prod` mean the same. */
export function normalizeContext(text: string): string {
  const trimmed = text.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  for (const seg of trimmed.split('/'))
    if (!/^[A-Za-z0-9_.~-]+$/.test(seg) || seg === '.' || seg === '..')
      throw new Error(`invalid context path "${text}": segments hold letters, digits, _ . ~ -`);
  return trimmed;
}

export function normalizeVendor(text: string): string {
  if (!/^[A-Za-z][A-Za-z0-9]{0,39}$/.test(text)) throw new Error(`invalid vendor name "${text}": letters and digits`);
  return text;
}

export interface ConfigInput {
  data?: string;
  host?: string;
  port?: string | number;
  context?: string;
  database?: string;
  vendor?: string;
  vendorFolder?: string;
  timeZone?: string;
  logLevel?: string;
}

/** Builds the configuration from flags and the environment (MILLRACE_DATA, MILLRACE_PORT, …). */
export function loadConfig(flags: ConfigInput, env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(flags.port ?? env.MILLRACE_PORT ?? DEFAULTS.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`invalid port "${flags.port ?? env.MILLRACE_PORT}"`);
  const databaseUrl = flags.database ?? env.MILLRACE_DATABASE_URL;
  return {
    ...DEFAULTS,
    dataDir: resolve(flags.data ?? env.MILLRACE_DATA ?? DEFAULTS.dataDir),
    host: flags.host ?? env.MILLRACE_HOST ?? DEFAULTS.host,
    port,
    context: normalizeContext(flags.context ?? env.MILLRACE_CONTEXT ?? DEFAULTS.context),
    ...(databaseUrl ? { databaseUrl } : {}),
    vendor: normalizeVendor(flags.vendor ?? env.MILLRACE_VENDOR ?? DEFAULTS.vendor),
    ...vendorFolder(flags.vendorFolder ?? env.MILLRACE_VENDOR_FOLDER),
    corsOrigins: corsOrigins(env.MILLRACE_CORS_ORIGINS),
    defaultTimeZone: timeZone(flags.timeZone ?? env.MILLRACE_TIME_ZONE ?? DEFAULTS.defaultTimeZone),
    logLevel: logLevel(flags.logLevel ?? env.MILLRACE_LOG_LEVEL ?? DEFAULTS.logLevel),
    historyRetentionDays: positive(env.MILLRACE_HISTORY_DAYS, 'MILLRACE_HISTORY_DAYS') ?? DEFAULTS.historyRetentionDays,
    feedRetainEvents: positive(env.MILLRACE_FEED_RETAIN, 'MILLRACE_FEED_RETAIN') ?? DEFAULTS.feedRetainEvents,
    webhookAllow: webhookAllow(env.MILLRACE_WEBHOOK_ALLOW),
    ...webhookSecret(env.MILLRACE_WEBHOOK_SECRET),
    ...smtpSettings(env.MILLRACE_SMTP_URL, env.MILLRACE_MAIL_FROM),
    trustedKeys: (env.MILLRACE_TRUSTED_KEYS ?? '')
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '')
      .map((e) => resolve(e)),
    limits: httpLimits(env),
  };
}

/** MILLRACE_REQUEST_TIMEOUT (seconds), MILLRACE_MAX_CONNECTIONS_PER_ADDRESS, MILLRACE_MAX_IN_FLIGHT, … */
function httpLimits(env: NodeJS.ProcessEnv): HttpLimits {
  const d = DEFAULTS.limits;
  const n = (name: string) => positive(env[name], name);
  const seconds = (name: string) => {
    const v = n(name);
    return v === undefined ? undefined : v * 1000;
  };
  return {
    headersTimeoutMs: seconds('MILLRACE_HEADERS_TIMEOUT') ?? d.headersTimeoutMs,
    requestTimeoutMs: seconds('MILLRACE_REQUEST_TIMEOUT') ?? d.requestTimeoutMs,
    minBodyBytesPerSecond: n('MILLRACE_MIN_BODY_RATE') ?? d.minBodyBytesPerSecond,
    maxConnectionsPerAddress: n('MILLRACE_MAX_CONNECTIONS_PER_ADDRESS') ?? d.maxConnectionsPerAddress,
    maxInFlight: n('MILLRACE_MAX_IN_FLIGHT') ?? d.maxInFlight,
    maxEventLoopDelayMs: n('MILLRACE_MAX_EVENT_LOOP_DELAY') ?? d.maxEventLoopDelayMs,
    importConcurrency: n('MILLRACE_IMPORT_CONCURRENCY') ?? d.importConcurrency,
    importQueue: n('MILLRACE_IMPORT_QUEUE') ?? d.importQueue,
  };
}

function timeZone(text: string): string {
  const zone = normalizeTimeZone(text);
  if (zone === undefined) throw new Error(`invalid time zone "${text}": an IANA zone such as Europe/Amsterdam`);
  return zone;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevel(text: string): string {
  if (!LOG_LEVELS.includes(text)) throw new Error(`invalid log level "${text}": one of ${LOG_LEVELS.join(', ')}`);
  return text;
}

function vendorFolder(text: string | undefined): { vendorFolder?: string } {
  if (text === undefined || text === '') return {};
  if (!/^[A-Za-z][A-Za-z0-9_]{0,39}$/.test(text))
    throw new Error(`invalid vendor folder "${text}": letters, digits and _`);
  return { vendorFolder: text };
}

/** `https://a.example.com,http://localhost:8080`: exact origins (scheme, host, port), as browsers send them. */
function corsOrigins(text: string | undefined): string[] {
  const entries = (text ?? '')
    .split(',')
    .map((e) => e.trim().replace(/\/+$/, ''))
    .filter((e) => e !== '');
  for (const e of entries) {
    let origin: string | undefined;
    try {
      origin = new URL(e).origin;
    } catch {
      origin = undefined;
    }
    if (origin === undefined || origin === 'null' || origin !== e)
      throw new Error(`invalid MILLRACE_CORS_ORIGINS entry "${e}": an origin such as https://tools.example.com`);
  }
  return entries;
}

function webhookAllow(text: string | undefined): string[] {
  const entries = (text ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const e of entries) {
    const problem = allowEntryProblem(e);
    if (problem) throw new Error(`invalid MILLRACE_WEBHOOK_ALLOW: ${problem}`);
  }
  return entries;
}

function webhookSecret(text: string | undefined): { webhookSecret?: string } {
  if (text === undefined || text === '') return {};
  // Receivers hold the same key; a short one could be guessed from a captured signature offline.
  if (text.length < 16) throw new Error('invalid MILLRACE_WEBHOOK_SECRET: at least 16 characters');
  return { webhookSecret: text };
}

/** `smtp://[user[:password]@]host[:port]` (STARTTLS when offered, port 25) or `smtps://…` (TLS, port 465). */
function smtpSettings(url: string | undefined, from: string | undefined): { smtp?: SmtpSettings } {
  if (url === undefined || url === '') return {};
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  // Never echo the URL: it may hold the password.
  if (!u || (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') || u.hostname === '')
    throw new Error('invalid MILLRACE_SMTP_URL: smtp://[user[:password]@]host[:port] or smtps://…');
  const sender = from ?? DEFAULT_MAIL_FROM;
  if (!/^[^\r\n\0@]+@[^\r\n\0@]+$/.test(sender) || sender.length > 320)
    throw new Error(`invalid MILLRACE_MAIL_FROM "${sender.replace(/[\r\n]/g, ' ')}": one e-mail address`);
  const secure = u.protocol === 'smtps:';
  return {
    smtp: {
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port: u.port ? Number(u.port) : secure ? 465 : 25,
      secure,
      ...(u.username ? { user: decodeURIComponent(u.username) } : {}),
      ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
      from: sender,
    },
  };
}

function positive(text: string | undefined, what: string): number | undefined {
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`invalid ${what} "${text}": a positive number`);
  return n;
}

/** The paths of both interfaces, derived once from the context and vendor. */
export function interfacePaths(config: Pick<Config, 'context' | 'vendor' | 'vendorFolder'>) {
  const root = config.context ? `/${config.context}` : '';
  const folder = config.vendorFolder ?? config.vendor;
  const rest = `${root}/api-extension/External/${folder}/${config.vendor}_RestService/rest`;
  return { root, jsonBase: `${rest}/v1`, swagger: `${rest}/swagger.yml`, xmlBase: `${root}/api-rest` };
}

import { resolve } from 'node:path';
import type { SmtpSettings } from '../alerts/mail.ts';
import { allowEntryProblem } from '../alerts/ssrf.ts';
import { readConfigFile } from './file.ts';
import { CONFIG_ENV, type ConfigFile, parseSwitch, parseWhole, type Resolved, resolveOptions } from './options.ts';
import { normalizeTimeZone } from '../time/zone.ts';
import { type OidcSettings, oidcSettings } from './oidc.ts';
import { type TlsFiles, transportOptions } from './tls.ts';

/** Everything `millrace serve` can be told (src/config/options.ts: flag > environment > file > default). */
export interface Config {
  dataDir: string;
  host: string;
  port: number;
  /** HTTPS for both interfaces, the dashboard and the agents; plain HTTP without (docs/architecture.md §10). */
  tls?: TlsFiles;
  /** Proxies (addresses, CIDR ranges) whose `X-Forwarded-For` names the client (docs/architecture.md §10). */
  trustProxy: string[];
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
  /** The nice value the local agent runs at (`--nice` of `millrace agent`); its job processes inherit it. */
  localAgentNice: number;
  /** A kill sends TERM to the job's process group, then KILL after this long. */
  killGraceMs: number;
  /** Finished jobs older than this many days are purged (the system keep clause). */
  historyRetentionDays: number;
  /** Audit entries older than this are purged (docs/architecture.md §18). */
  auditRetentionDays: number;
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
  /** Folders the local agent may watch for file events (docs/architecture.md §7b); none: no folder. */
  watchRoots: string[];
  /** `GET /metrics` serves Prometheus metrics (and the server counts what they need). */
  metrics: boolean;
  /** Finished jobs are added to their definitions' runtime statistics (docs/architecture.md §8b). */
  runtimeStatistics: boolean;
  /** False: job actions, submits and replies write no audit entries (benchmarks only; docs/architecture.md §18). */
  auditJobActions: boolean;
  /** When set, `GET /metrics` requires it as `Authorization: Bearer <token>`. */
  metricsToken?: string;
  /** `json` lines, or `pretty` (pino-pretty) for a terminal. */
  logFormat: 'json' | 'pretty';
  /** On SIGTERM, requests in flight get this long to finish before the server closes anyway. */
  shutdownGraceMs: number;
  /** The first start writes the administrator's generated secrets to this file (mode 0600) instead of stdout. */
  initialSecretsFile?: string;
  /** Where job files are kept: a folder (by default `<data>/jobfiles`), or `database`. */
  jobFilesDir?: string;
  /** This node's id among several sharing one PostgreSQL database; by default kept in the data folder. */
  nodeId?: string;
  /** Beside other nodes: how long the timer lease lasts (a dead owner is replaced within about this). */
  timerLeaseMs: number;
  /** Run migrations although nodes of another version are alive (rolling upgrade, told to). */
  migrateBesideOlderNodes: boolean;
  /** Bounds that keep hostile or overwhelming clients from taking the server down (README "Limits"). */
  limits: HttpLimits;
  /** Single sign-on through an OpenID Connect issuer; none unless `--oidc-issuer` is given. */
  oidc?: OidcSettings;
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
  trustProxy: [],
  context: 'millrace',
  vendor: 'Vendor',
  defaultTimeZone: 'UTC',
  logLevel: 'info',
  apiKeyMaxLifetimeMs: 183 * DAY,
  apiKeyIdleLapseMs: 92 * DAY,
  authFailuresPerMinute: 20,
  localAgent: true,
  localAgentNice: 10,
  killGraceMs: 5000,
  historyRetentionDays: 30,
  auditRetentionDays: 400,
  feedRetainEvents: 10_000,
  feedClientBufferBytes: 1024 * 1024,
  webhookAllow: [],
  trustedKeys: [],
  watchRoots: [],
  metrics: true,
  runtimeStatistics: true,
  auditJobActions: true,
  logFormat: 'json',
  shutdownGraceMs: 10_000,
  timerLeaseMs: 10_000,
  migrateBesideOlderNodes: false,
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

/** Flags by commander's names (`timeZone` for `--time-zone`), plus `config` (`--config FILE`). */
export type ConfigInput = Record<string, unknown>;

/**
 * Builds the configuration of `serve`: flag > environment (MILLRACE_DATA, MILLRACE_PORT, …) > configuration file >
 * default, option by option (src/config/options.ts lists them). `given(name)` tells whether a flag was typed on the
 * command line (by default: whether it has a value). Every value is checked; a bad one throws naming its source.
 */
export function loadConfig(
  flags: ConfigInput,
  env: NodeJS.ProcessEnv = process.env,
  file?: ConfigFile,
  given: (name: string) => boolean = (name) => flags[name] !== undefined,
): Config {
  const r = resolveOptions('serve', flags, given, env, file);
  const text = (key: string): string | undefined => r.get(key)?.text;
  const check = <T>(key: string, parse: (v: string) => T): T | undefined => {
    const v = r.get(key);
    if (!v) return undefined;
    try {
      return parse(v.text);
    } catch (err) {
      // The parsers name the value where it is safe to: secrets (SMTP URL, webhook secret) are never echoed.
      throw new Error(`invalid ${v.source}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const resolvedOf = (key: string): Resolved | undefined => r.get(key);
  const sw = (key: string, dflt: boolean) => {
    const v = resolvedOf(key);
    return v ? parseSwitch(v) : dflt;
  };
  const port = resolvedOf('port');
  const databaseUrl = text('database');
  const metricsToken = text('metrics-token');
  const initialSecrets = text('initial-secrets');
  const jobFiles = text('job-files');
  const level = check('log-level', logLevel);
  const logFormat = check('log-format', (v) => {
    if (v !== 'json' && v !== 'pretty') throw new Error(`"${v}" is not json or pretty`);
    return v;
  });
  const mailFrom = check('mail-from', checkSender);
  const history = resolvedOf('history-days');
  const auditDays = resolvedOf('audit-days');
  const grace = resolvedOf('shutdown-grace');
  const lease = resolvedOf('timer-lease');
  const agentNice = resolvedOf('local-agent-nice');
  return {
    ...DEFAULTS,
    dataDir: resolve(text('data') ?? DEFAULTS.dataDir),
    host: text('host') ?? DEFAULTS.host,
    port: port ? parseWhole(port, 0, 65535) : DEFAULTS.port,
    ...transportOptions(resolvedOf),
    context: check('context', normalizeContext) ?? DEFAULTS.context,
    ...(databaseUrl ? { databaseUrl } : {}),
    vendor: check('vendor', normalizeVendor) ?? DEFAULTS.vendor,
    defaultTimeZone: check('time-zone', timeZone) ?? DEFAULTS.defaultTimeZone,
    logLevel: level ?? DEFAULTS.logLevel,
    logFormat: logFormat ?? DEFAULTS.logFormat,
    historyRetentionDays: history ? parseWhole(history, 1) : DEFAULTS.historyRetentionDays,
    auditRetentionDays: auditDays ? parseWhole(auditDays, 1) : DEFAULTS.auditRetentionDays,
    webhookAllow: check('webhook-allow', webhookAllow) ?? [],
    ...(check('webhook-secret', webhookSecret) ?? {}),
    ...(check('smtp-url', (url) => smtpSettings(url, mailFrom)) ?? {}),
    trustedKeys: check('trusted-keys', (v) => list(v).map((e) => resolve(e))) ?? [],
    watchRoots: check('watch-root', (v) => list(v).map((e) => resolve(e))) ?? [],
    localAgent: sw('local-agent', DEFAULTS.localAgent),
    localAgentNice: agentNice ? parseWhole(agentNice, 0, 19) : DEFAULTS.localAgentNice,
    metrics: sw('metrics', DEFAULTS.metrics),
    runtimeStatistics: sw('runtime-statistics', DEFAULTS.runtimeStatistics),
    auditJobActions: sw('audit-job-actions', DEFAULTS.auditJobActions),
    ...(metricsToken ? { metricsToken } : {}),
    shutdownGraceMs: grace ? parseWhole(grace, 1) * 1000 : DEFAULTS.shutdownGraceMs,
    ...(initialSecrets ? { initialSecretsFile: resolve(initialSecrets) } : {}),
    ...(jobFiles ? { jobFilesDir: jobFilesPlace(jobFiles) } : {}),
    ...(text('node-id') ? { nodeId: check('node-id', nodeIdValue) } : {}),
    timerLeaseMs: lease ? parseWhole(lease, 2, 3600) * 1000 : DEFAULTS.timerLeaseMs,
    migrateBesideOlderNodes: sw('migrate-beside-older-nodes', DEFAULTS.migrateBesideOlderNodes),
    ...(check('vendor-folder', (v) => vendorFolder(v)) ?? {}),
    corsOrigins: corsOrigins(env.MILLRACE_CORS_ORIGINS),
    feedRetainEvents: positive(env.MILLRACE_FEED_RETAIN, 'MILLRACE_FEED_RETAIN') ?? DEFAULTS.feedRetainEvents,
    limits: httpLimits(env),
    ...oidcSettings({ text, switchOn: sw }),
  };
}

/** `--job-files`: `database`, or a folder (made absolute). */
const jobFilesPlace = (v: string): string => (v === 'database' ? v : resolve(v));

/** A node id: 1–100 characters of letters, digits, `.`, `_`, `:` and `-`. */
function nodeIdValue(v: string): string {
  if (!/^[A-Za-z0-9._:-]{1,100}$/.test(v))
    throw new Error(`"${v.slice(0, 100)}" is not 1-100 letters, digits, . _ : -`);
  return v;
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

/** `loadConfig` with the configuration file of `--config FILE` or MILLRACE_CONFIG read first. */
export async function loadServeConfig(
  flags: ConfigInput,
  env: NodeJS.ProcessEnv = process.env,
  given?: (name: string) => boolean,
): Promise<Config> {
  const path = (typeof flags.config === 'string' ? flags.config : undefined) ?? (env[CONFIG_ENV] || undefined);
  const file = path ? await readConfigFile(path, 'serve') : undefined;
  return loadConfig(flags, env, file, given);
}

function checkSender(sender: string): string {
  if (!/^[^\r\n\0@]+@[^\r\n\0@]+$/.test(sender) || sender.length > 320)
    throw new Error(`"${sender.replace(/[\r\n]/g, ' ')}" is not one e-mail address`);
  return sender;
}

/** An environment-only setting (limits, feed): a positive number, or undefined when unset. */
function positive(text: string | undefined, what: string): number | undefined {
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`invalid ${what} "${text}": a positive number`);
  return n;
}

function timeZone(text: string): string {
  const zone = normalizeTimeZone(text);
  if (zone === undefined) throw new Error(`invalid time zone "${text}": an IANA zone such as Europe/Amsterdam`);
  return zone;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

const list = (text: string): string[] =>
  text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');

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

function webhookAllow(text: string): string[] {
  const entries = list(text);
  for (const e of entries) {
    const problem = allowEntryProblem(e);
    if (problem) throw new Error(problem);
  }
  return entries;
}

function webhookSecret(text: string): { webhookSecret?: string } {
  if (text === '') return {};
  // Receivers hold the same key; a short one could be guessed from a captured signature offline.
  if (text.length < 16) throw new Error('at least 16 characters');
  return { webhookSecret: text };
}

/** `smtp://[user[:password]@]host[:port]` (STARTTLS when offered, port 25) or `smtps://…` (TLS, port 465). */
function smtpSettings(url: string, from: string | undefined): { smtp?: SmtpSettings } {
  if (url === '') return {};
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  // Never echo the URL: it may hold the password.
  if (!u || (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') || u.hostname === '')
    throw new Error('smtp://[user[:password]@]host[:port] or smtps://…');
  const sender = from ?? DEFAULT_MAIL_FROM;
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

/** The paths of both interfaces, derived once from the context and vendor. */
export function interfacePaths(config: Pick<Config, 'context' | 'vendor' | 'vendorFolder'>) {
  const root = config.context ? `/${config.context}` : '';
  const folder = config.vendorFolder ?? config.vendor;
  const rest = `${root}/api-extension/External/${folder}/${config.vendor}_RestService/rest`;
  return { root, jsonBase: `${rest}/v1`, swagger: `${rest}/swagger.yml`, xmlBase: `${root}/api-rest` };
}

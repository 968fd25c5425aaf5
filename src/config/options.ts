/**
 * Every option of `millrace serve` and `millrace agent`, in one list: the command-line flags, the environment
 * variables, the configuration file's keys, `--help` and the README's table (test/unit/config/options-table.test.ts
 * compares them) all come from here. Precedence: flag > environment > file > default.
 *
 * Pure data and string handling: the agent loads this too, so nothing of the server is imported.
 */
export type Command = 'serve' | 'agent';

export interface OptionSpec {
  command: Command;
  /** The file's key and the flag's name (`--<key>`). */
  key: string;
  /** The flag's argument (`--port <N>`); absent for a switch (`--metrics`, `--no-metrics`). */
  arg?: string;
  /** Secrets have no flag: a command line is visible to every user of the machine (`ps`). */
  noFlag?: boolean;
  /** A list: comma-separated in a flag or the environment, an array in the file. */
  list?: boolean;
  env: string;
  /** As documented; `–` for none. */
  default: string;
  help: string;
}

export const OPTIONS: readonly OptionSpec[] = [
  {
    command: 'serve',
    key: 'data',
    arg: 'DIR',
    env: 'MILLRACE_DATA',
    default: './data',
    help: 'data folder: SQLite database, secret key, job files',
  },
  { command: 'serve', key: 'port', arg: 'N', env: 'MILLRACE_PORT', default: '7070', help: 'TCP port' },
  {
    command: 'serve',
    key: 'host',
    arg: 'HOST',
    env: 'MILLRACE_HOST',
    default: '127.0.0.1',
    help: 'address to listen on',
  },
  {
    command: 'serve',
    key: 'tls-cert',
    arg: 'FILE',
    env: 'MILLRACE_TLS_CERT',
    default: '–',
    help: 'serve HTTPS with this certificate (PEM, with its chain); re-read on SIGHUP',
  },
  {
    command: 'serve',
    key: 'tls-key',
    arg: 'FILE',
    env: 'MILLRACE_TLS_KEY',
    default: '–',
    help: "the certificate's private key (PEM); re-read on SIGHUP",
  },
  {
    command: 'serve',
    key: 'tls-client-ca',
    arg: 'FILE',
    env: 'MILLRACE_TLS_CLIENT_CA',
    default: '–',
    help: 'agents must present a client certificate of this CA (PEM); interface clients and browsers need none',
  },
  {
    command: 'serve',
    key: 'trust-proxy',
    arg: 'LIST',
    list: true,
    env: 'MILLRACE_TRUST_PROXY',
    default: '–',
    help: 'proxies (addresses, CIDR ranges) whose `X-Forwarded-For` names the client',
  },
  {
    command: 'serve',
    key: 'context',
    arg: 'PATH',
    env: 'MILLRACE_CONTEXT',
    default: 'millrace',
    help: 'context path; may be empty or hold `/` (`acme/prod`)',
  },
  {
    command: 'serve',
    key: 'database',
    arg: 'URL',
    env: 'MILLRACE_DATABASE_URL',
    default: '–',
    help: 'a `postgres://` URL selects PostgreSQL instead of SQLite',
  },
  {
    command: 'serve',
    key: 'vendor',
    arg: 'NAME',
    env: 'MILLRACE_VENDOR',
    default: 'Vendor',
    help: 'sets `External/<NAME>/<NAME>_RestService` and the header prefix `X-<NAME>-`',
  },
  {
    command: 'serve',
    key: 'vendor-folder',
    arg: 'NAME',
    env: 'MILLRACE_VENDOR_FOLDER',
    default: 'the vendor name',
    help: 'folder segment `External/<NAME>/` of the JSON path',
  },
  {
    command: 'serve',
    key: 'time-zone',
    arg: 'ZONE',
    env: 'MILLRACE_TIME_ZONE',
    default: 'UTC',
    help: 'zone of dates the server writes itself and of inputs given without one',
  },
  {
    command: 'serve',
    key: 'log-level',
    arg: 'LEVEL',
    env: 'MILLRACE_LOG_LEVEL',
    default: 'info',
    help: 'fatal, error, warn, info (one access line per request), debug, trace or silent',
  },
  {
    command: 'serve',
    key: 'log-format',
    arg: 'FORMAT',
    env: 'MILLRACE_LOG_FORMAT',
    default: 'json',
    help: '`json` lines, or `pretty` for a terminal',
  },
  {
    command: 'serve',
    key: 'history-days',
    arg: 'N',
    env: 'MILLRACE_HISTORY_DAYS',
    default: '30',
    help: 'finished jobs older than this are purged',
  },
  {
    command: 'serve',
    key: 'audit-days',
    arg: 'N',
    env: 'MILLRACE_AUDIT_DAYS',
    default: '400',
    help: 'audit entries older than this are purged, oldest first',
  },
  {
    command: 'serve',
    key: 'webhook-allow',
    arg: 'LIST',
    list: true,
    env: 'MILLRACE_WEBHOOK_ALLOW',
    default: '–',
    help: 'internal webhook targets allowed: host names, addresses, CIDR ranges',
  },
  {
    command: 'serve',
    key: 'webhook-secret',
    noFlag: true,
    env: 'MILLRACE_WEBHOOK_SECRET',
    default: '`<data>/webhook.key`',
    help: 'key of the webhook signatures (16+ characters)',
  },
  {
    command: 'serve',
    key: 'smtp-url',
    noFlag: true,
    env: 'MILLRACE_SMTP_URL',
    default: '–',
    help: '`smtp://[user[:password]@]host[:port]` or `smtps://…` for alert e-mail',
  },
  {
    command: 'serve',
    key: 'mail-from',
    arg: 'ADDRESS',
    env: 'MILLRACE_MAIL_FROM',
    default: 'millrace@localhost',
    help: 'sender of alert e-mail',
  },
  {
    command: 'serve',
    key: 'trusted-keys',
    arg: 'LIST',
    list: true,
    env: 'MILLRACE_TRUSTED_KEYS',
    default: '–',
    help: 'public keys (files or folders) trusted for signed CARs, besides `<data>/trusted-keys`',
  },
  {
    command: 'serve',
    key: 'local-agent',
    env: 'MILLRACE_LOCAL_AGENT',
    default: 'true',
    help: 'start the agent of `GLOBAL.Local` (`--no-local-agent` when it runs as its own service)',
  },
  {
    command: 'serve',
    key: 'local-agent-nice',
    arg: 'N',
    env: 'MILLRACE_LOCAL_AGENT_NICE',
    default: '10',
    help: "the local agent's CPU priority (nice, 0 to 19; its job processes inherit it): below the server's, so that jobs on the server's own machine never hold up its answers and timers",
  },
  {
    command: 'serve',
    key: 'metrics',
    env: 'MILLRACE_METRICS',
    default: 'true',
    help: 'serve `GET /metrics` (`--no-metrics`: neither served nor counted)',
  },
  {
    command: 'serve',
    key: 'runtime-statistics',
    env: 'MILLRACE_RUNTIME_STATISTICS',
    default: 'true',
    help: "add each finished job to its definition's runtime statistics (`--no-runtime-statistics`: statistics and estimates stay as they are)",
  },
  {
    command: 'serve',
    key: 'audit-job-actions',
    env: 'MILLRACE_AUDIT_JOB_ACTIONS',
    default: 'true',
    help: 'audit job actions, submits and replies (`--no-audit-job-actions`: only to measure what it costs)',
  },
  {
    command: 'serve',
    key: 'metrics-token',
    noFlag: true,
    env: 'MILLRACE_METRICS_TOKEN',
    default: '–',
    help: '`GET /metrics` requires `Authorization: Bearer <token>`',
  },
  {
    command: 'serve',
    key: 'shutdown-grace',
    arg: 'SECONDS',
    env: 'MILLRACE_SHUTDOWN_GRACE',
    default: '10',
    help: 'on SIGTERM, requests in flight get this long before the process exits anyway',
  },
  {
    command: 'serve',
    key: 'initial-secrets',
    arg: 'FILE',
    env: 'MILLRACE_INITIAL_SECRETS',
    default: 'stdout',
    help: "on the first start, write the administrator's generated password and API key to FILE (mode 0600) instead of stdout",
  },
  {
    command: 'serve',
    key: 'job-files',
    arg: 'DIR',
    env: 'MILLRACE_JOB_FILES',
    default: '<data>/jobfiles',
    help: 'where job files (output) are kept: a folder, or `database` (beside other nodes: `database` or a folder every node mounts)',
  },
  {
    command: 'serve',
    key: 'node-id',
    arg: 'ID',
    env: 'MILLRACE_NODE_ID',
    default: '(kept in the data folder)',
    help: 'this node among several sharing one PostgreSQL database; stable across restarts',
  },
  {
    command: 'serve',
    key: 'timer-lease',
    arg: 'SECONDS',
    env: 'MILLRACE_TIMER_LEASE',
    default: '10',
    help: 'beside other nodes: a dead timer owner is replaced within about this long',
  },
  {
    command: 'serve',
    key: 'migrate-beside-older-nodes',
    env: 'MILLRACE_MIGRATE_BESIDE_OLDER_NODES',
    default: 'false',
    help: 'run database migrations although nodes of another version are alive',
  },
  {
    command: 'serve',
    key: 'watch-root',
    arg: 'DIR',
    list: true,
    env: 'MILLRACE_WATCH_ROOTS',
    default: '–',
    help: 'folders the local agent may watch for file events (repeatable or comma-separated); none: no folder',
  },
  {
    command: 'serve',
    key: 'oidc-issuer',
    arg: 'URL',
    env: 'MILLRACE_OIDC_ISSUER',
    default: '–',
    help: 'single sign-on: the OpenID Connect issuer (https; http only on a loopback address)',
  },
  {
    command: 'serve',
    key: 'oidc-client-id',
    arg: 'ID',
    env: 'MILLRACE_OIDC_CLIENT_ID',
    default: '–',
    help: "single sign-on: Millrace's client id at the issuer",
  },
  {
    command: 'serve',
    key: 'oidc-client-secret-file',
    arg: 'FILE',
    env: 'MILLRACE_OIDC_CLIENT_SECRET_FILE',
    default: '–',
    help: "single sign-on: file holding the client's secret",
  },
  {
    command: 'serve',
    key: 'oidc-audience',
    arg: 'AUD',
    env: 'MILLRACE_OIDC_AUDIENCE',
    default: 'the client id',
    help: 'bearer access tokens must name this audience',
  },
  {
    command: 'serve',
    key: 'oidc-roles-claim',
    arg: 'CLAIM',
    env: 'MILLRACE_OIDC_ROLES_CLAIM',
    default: 'groups',
    help: 'claim whose values give Millrace roles (a dotted path reaches into objects: `realm_access.roles`)',
  },
  {
    command: 'serve',
    key: 'oidc-role-map',
    arg: 'LIST',
    list: true,
    env: 'MILLRACE_OIDC_ROLE_MAP',
    default: 'values naming a role',
    help: '`claimValue=Role,…`; when given, only mapped values grant roles',
  },
  {
    command: 'serve',
    key: 'oidc-user-claim',
    arg: 'CLAIM',
    env: 'MILLRACE_OIDC_USER_CLAIM',
    default: 'preferred_username',
    help: 'claim holding the Millrace user name (`sub` when the token has none)',
  },
  {
    command: 'serve',
    key: 'oidc-create-users',
    env: 'MILLRACE_OIDC_CREATE_USERS',
    default: 'true',
    help: 'create a user at its first sign-in (`--no-oidc-create-users`: unknown users are refused)',
  },
  {
    command: 'serve',
    key: 'oidc-only',
    env: 'MILLRACE_OIDC_ONLY',
    default: 'false',
    help: "refuse users' passwords (dashboard and basic auth); API keys keep working",
  },
  {
    command: 'serve',
    key: 'oidc-redirect-uri',
    arg: 'URL',
    env: 'MILLRACE_OIDC_REDIRECT_URI',
    default: 'from the request',
    help: 'the callback registered at the issuer, `<origin>/<context>/ui/oidc/callback` (behind a proxy)',
  },
  {
    command: 'agent',
    key: 'server',
    arg: 'URL',
    env: 'MILLRACE_AGENT_SERVER',
    default: '(required)',
    help: 'the server with its context path, e.g. `http://127.0.0.1:7070/millrace`; a list: nodes tried in turn',
  },
  {
    command: 'agent',
    key: 'process-server',
    arg: 'PARTITION.NAME',
    env: 'MILLRACE_PROCESS_SERVER',
    default: '(required)',
    help: 'the process server this agent is, e.g. `GLOBAL.Local` (a bare name means `GLOBAL`)',
  },
  {
    command: 'agent',
    key: 'secret-file',
    arg: 'FILE',
    env: 'MILLRACE_AGENT_SECRET_FILE',
    default: '(required)',
    help: "file holding the process server's secret",
  },
  {
    command: 'agent',
    key: 'ca-file',
    arg: 'FILE',
    env: 'MILLRACE_AGENT_CA_FILE',
    default: "the system's CAs",
    help: "CA certificates (PEM) an `https://` server's certificate is verified against",
  },
  {
    command: 'agent',
    key: 'tls-cert',
    arg: 'FILE',
    env: 'MILLRACE_AGENT_TLS_CERT',
    default: '–',
    help: "the agent's client certificate (PEM), for a server that requires one",
  },
  {
    command: 'agent',
    key: 'tls-key',
    arg: 'FILE',
    env: 'MILLRACE_AGENT_TLS_KEY',
    default: '–',
    help: "the client certificate's private key (PEM)",
  },
  {
    command: 'agent',
    key: 'data',
    arg: 'DIR',
    env: 'MILLRACE_AGENT_DATA',
    default: '`./agent-data/<process server>`',
    help: "the agent's folder: pid file, spool, work folders",
  },
  {
    command: 'agent',
    key: 'slots',
    arg: 'N',
    env: 'MILLRACE_AGENT_SLOTS',
    default: 'the CPUs',
    help: 'job slots offered (informative)',
  },
  {
    command: 'agent',
    key: 'log-jobs',
    env: 'MILLRACE_AGENT_LOG_JOBS',
    default: 'false',
    help: "log every job's start and end",
  },
  {
    command: 'agent',
    key: 'spawner',
    arg: 'NAME',
    env: 'MILLRACE_AGENT_SPAWNER',
    default: '`python3` when in PATH',
    help: 'what starts the job processes: `python3`, a small Python process (posix_spawn, cheaper than a fork of the agent: src/agent/spawner.ts), or `node`, the agent itself',
  },
  {
    command: 'agent',
    key: 'nice',
    arg: 'N',
    env: 'MILLRACE_AGENT_NICE',
    default: 'as started',
    help: "lower the agent's CPU priority to this nice value (0 to 19) at its start; its job processes inherit it",
  },
  {
    command: 'agent',
    key: 'watch-root',
    arg: 'DIR',
    list: true,
    env: 'MILLRACE_AGENT_WATCH_ROOTS',
    default: '–',
    help: 'folders the server may ask this agent to watch for file events (repeatable or comma-separated); none: no folder',
  },
];

/** `time-zone` → `timeZone`: commander's name for a flag's value. */
export const camel = (key: string): string => key.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

export const optionsOf = (command: Command): OptionSpec[] => OPTIONS.filter((o) => o.command === command);

/** `--config FILE` and `MILLRACE_CONFIG`: the configuration file (TOML or YAML, by its extension). */
export const CONFIG_ENV = 'MILLRACE_CONFIG';

/** A value found in the configuration file, as text, and the line it is on. */
export interface FileValue {
  text: string;
  line: number;
}

/** The configuration file's section for one command. */
export interface ConfigFile {
  path: string;
  values: Map<string, FileValue>;
}

/** An option's value and where it came from, for messages: `--port`, `MILLRACE_PORT`, `FILE line 3`. */
export interface Resolved {
  text: string;
  source: string;
}

/**
 * Resolves each option of `command` to a text value (flag > environment > file); options set nowhere are absent
 * and take their default. `given(name)` tells whether a flag was on the command line.
 */
export function resolveOptions(
  command: Command,
  flags: Record<string, unknown>,
  given: (name: string) => boolean,
  env: NodeJS.ProcessEnv,
  file: ConfigFile | undefined,
): Map<string, Resolved> {
  const out = new Map<string, Resolved>();
  for (const o of optionsOf(command)) {
    const name = camel(o.key);
    const flag = flags[name];
    const fromEnv = env[o.env];
    if (!o.noFlag && flag !== undefined && given(name)) out.set(o.key, { text: String(flag), source: `--${o.key}` });
    else if (fromEnv !== undefined) out.set(o.key, { text: fromEnv, source: o.env });
    else {
      const v = file?.values.get(o.key);
      if (v && file) out.set(o.key, { text: v.text, source: `"${o.key}" in ${file.path} line ${v.line}` });
    }
  }
  return out;
}

/** A switch's value: true/false (also yes/no, on/off, 1/0). */
export function parseSwitch(r: Resolved): boolean {
  const t = r.text.trim().toLowerCase();
  if (['true', 'yes', 'on', '1'].includes(t)) return true;
  if (['false', 'no', 'off', '0'].includes(t)) return false;
  throw new Error(`invalid ${r.source}: "${r.text}" is not true or false`);
}

/** A whole number ≥ `min`. */
export function parseWhole(r: Resolved, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(r.text);
  if (!/^\s*\d+\s*$/.test(r.text) || n < min || n > max)
    throw new Error(
      `invalid ${r.source}: "${r.text}" is not a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}`,
    );
  return n;
}

import { bool, field, HEADER_NAME, HEADER_NAME_TEXT, int, map, oneOf, record, string, text } from '../fields.ts';

/**
 * The request an HTTP definition sends and the script a SQL definition runs: both run inside an agent whose process
 * server lists the type (docs/architecture.md §7). Parameters reach them as `${NAME}` in the HTTP request's text and
 * as bound `:NAME` query parameters in SQL, never spliced into the SQL text.
 */

/** `200-299,304`: the response statuses that mean the request succeeded. */
export const STATUS_RANGES = /^\d{3}(-\d{3})?(,\d{3}(-\d{3})?)*$/;

export const httpField = field(
  'Http',
  record(
    field('Method', oneOf('GET', 'POST', 'PUT', 'PATCH', 'DELETE'), { default: 'GET' }),
    field('Url', string(4000), { required: true, description: 'http:// or https://; ${NAME} is substituted.' }),
    field('Headers', map(50, HEADER_NAME, HEADER_NAME_TEXT, 4000), {
      default: {},
      description:
        'Request headers, an object of header names and values ({"Accept": "application/json"}); at most 50, names distinct ignoring case; ${NAME} in a value is substituted.',
    }),
    field('Body', text(1_000_000), { description: 'Request body; ${NAME} is substituted.' }),
    field('Credential', string(255), {
      description:
        'A credential by key or VirtualUser: RealUser and Password as basic auth, or the Password as a bearer token when its Protocol is bearer.',
    }),
    field('ExpectStatus', string(255, STATUS_RANGES, 'statuses and ranges such as 200-299,304'), {
      default: '200-299',
    }),
    field('TimeoutSeconds', int(1, 86_400), { default: 60 }),
    field('FollowRedirects', bool(), { default: true }),
  ),
  { description: 'For an HTTP definition: the request it sends.' },
);

export const sqlField = field(
  'Sql',
  record(
    field('Credential', string(255), { required: true, description: 'The database user (RealUser and Password).' }),
    field('Database', string(1000), {
      required: true,
      description: 'postgres://host:port/db, without user or password.',
    }),
    field('Script', text(1_000_000), {
      required: true,
      description:
        'Statements separated by ;, run in order; :NAME binds a parameter. The last one’s rows go to result.csv.',
    }),
    field('Transaction', bool(), { default: true }),
  ),
  { description: 'For a SQL definition: the database and the statements.' },
);

/** The definition's Http and Sql agree with its type; a Database names no password. */
export function requestRules(v: {
  JobDefinitionType?: unknown;
  Script?: unknown;
  Http?: { Url: string } | null;
  Sql?: { Database: string } | null;
}): string | undefined {
  const type = v.JobDefinitionType;
  for (const [name, owner] of [
    ['Http', 'HTTP'],
    ['Sql', 'SQL'],
  ] as const) {
    const given = v[name] !== null && v[name] !== undefined;
    if (type === owner && !given) return `Field "${name}" is required for a ${owner} definition`;
    if (type !== owner && given) return `Field "${name}" is only for a ${owner} definition`;
  }
  const http = v.Http;
  if (http && !/^https?:\/\//i.test(http.Url)) return 'Field "Http.Url" must start with http:// or https://';
  const sql = v.Sql;
  if (sql) {
    let url: URL;
    try {
      url = new URL(sql.Database);
    } catch {
      return 'Field "Sql.Database" must be a URL such as postgres://host:5432/db';
    }
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
      return 'Field "Sql.Database" must be a postgres:// URL (PostgreSQL is the database SQL jobs run on)';
    if (url.password !== '' || url.username !== '')
      return 'Field "Sql.Database" must not hold a user or password: they come from Sql.Credential';
  }
  if ((type === 'HTTP' || type === 'SQL') && v.Script != null)
    return `Field "Script" is not used by a ${type} definition`;
  return undefined;
}

import assert from 'node:assert/strict';
import { SAMPLES } from '../integration/objects/samples.ts';
import { postCreated, submit, waitForStatus } from './jobs.ts';
import type { TestServer } from './server.ts';

/**
 * The JSON interface's routes that change something, taken from the served OpenAPI document (a new route is in the
 * list at once), each with a path to an object that exists: one of every definition type (SAMPLES), a held job, an
 * operator message, a user message (participants `participants`), an alert and a raised event. For tests that send
 * every such route what a caller should not get through. Jobs the routes make wait in a held queue (PARKED).
 */

type Doc = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: Array<{ name: string; schema?: { enum?: string[] } }>;
        requestBody?: { content: Record<string, unknown> };
      }
    >
  >;
};

/** A definition whose jobs wait in a held queue of the same key. */
export const PARKED = 'Finance.Parked';

export interface BodyRoute {
  /** `PUT /Job/{key}/{action} (hold)`: the method, the document's path and the action. */
  name: string;
  method: string;
  /** The path under the JSON base, to an object that exists (or, for a create, one that does not). */
  path: string | undefined;
  /** Whether the document declares a JSON body for it. */
  jsonBody: boolean;
}

/** Creates the objects the routes act on; `participants` answer the user message. */
export async function bodyRoutes(t: TestServer, participants: string[]): Promise<BodyRoute[]> {
  for (const s of SAMPLES) await postCreated(t, `/${s.type}/${s.key}`, s.body);
  // Jobs submitted, resubmitted or released through the routes wait in a held queue: nothing runs meanwhile.
  await postCreated(t, `/Queue/${PARKED}`, { Held: true });
  await postCreated(t, `/JobDefinition/${PARKED}`, { JobDefinitionType: 'System', DefaultQueue: PARKED });
  const held = (await submit(t, PARKED, { HoldOnSubmit: true })).jobId as number;
  const question = await submit(t, 'GLOBAL.System_OperatorMessage', {
    JobParameters: [{ Name: 'Message', InValueString: 'Tape loaded?' }],
  });
  const operatorMessage = (await waitForStatus(t, question.jobId, 'Console', 30_000)).OperatorMessage;
  await postCreated(t, '/JobDefinition/GLOBAL.Approve', {
    JobDefinitionType: 'UserMessage',
    DefaultQueue: 'GLOBAL.System',
    UserMessage: {
      Text: 'Go?',
      Responses: [{ Response: 'Approve', Status: 'Completed', ReturnCode: 0 }],
      Participants: participants,
    },
  });
  const userMessage = (await waitForStatus(t, (await submit(t, 'GLOBAL.Approve')).jobId, 'Console', 30_000))
    .UserMessage;
  await postCreated(t, '/AlertEscalation/GLOBAL.Nobody', {});
  await postCreated(t, '/JobDefinition/GLOBAL.FailNow', { JobDefinitionType: 'System', DefaultQueue: 'GLOBAL.System' });
  await postCreated(t, '/JobDefinitionAlertSource/GLOBAL.Failures', {
    NamePattern: 'FailNow',
    Statuses: [{ Status: 'Error' }],
    DefaultAlertEscalation: 'GLOBAL.Nobody',
  });
  await waitForStatus(t, (await submit(t, 'GLOBAL.FailNow')).jobId, 'Error', 30_000);
  const alert = (await t.req('GET', '/Alert')).json.items[0].uniqueId as number;
  const event = await t.req('POST', '/Event/Finance.LedgerClosed', { body: {} });
  assert.equal(event.status, 201, event.body);

  // A user with a key for the routes of users and API keys (`newcomer` is the one a POST creates).
  await t.server.accounts.addUser('keyholder', { roles: ['Viewer'] });
  const keyId = (await t.server.accounts.createApiKey('keyholder', {})).record.id;
  await t.server.app.ready();
  const doc = t.server.app.swagger() as unknown as Doc;
  const fresh: Record<string, string> = { Partition: 'Fresh', QueueProvider: 'Finance.Agent1.GLOBAL.Fresh' };
  const target = (method: string, template: string, action: string | undefined): string | undefined => {
    const [, type = '', key, tail] = /^\/([A-Za-z]+)(\/\{key\})?(?:\/(.+))?$/.exec(template) ?? [];
    const path = (k: string) => `/${type}/${k}${tail ? `/${tail.replace('{action}', action ?? '')}` : ''}`;
    if (template === '/Import') return '/Import';
    if (type === 'User')
      return template
        .replace('{name}', method === 'post' && !template.endsWith('apikeys') ? 'newcomer' : 'keyholder')
        .replace('{id}', keyId);
    if (template === '/Job/bulk/{action}') return `/Job/bulk/${action}`;
    if (template === '/AuditEntry/{id}/restore') return '/AuditEntry/1/restore';
    if (type === 'Job') return path(method === 'post' ? PARKED : String(held));
    if (type === 'ProcessServer' && tail) return path('GLOBAL.Local');
    if (type === 'OperatorMessage') return path(String(operatorMessage));
    if (type === 'UserMessage') return path(String(userMessage));
    if (type === 'Alert') return path(String(alert));
    if (type === 'Event')
      return path(tail === 'clear' || method === 'delete' ? String(event.json.eventId) : 'Finance.LedgerClosed');
    const sample = SAMPLES.find((s) => s.type === type);
    if (key === undefined || !sample) return undefined;
    if (method === 'post' && !tail) return path(fresh[type] ?? 'Finance.Fresh');
    return path(sample.key);
  };
  const routes: BodyRoute[] = [];
  for (const [template, ops] of Object.entries(doc.paths)) {
    if (!template.startsWith(t.base)) continue;
    const relative = template.slice(t.base.length);
    for (const [method, op] of Object.entries(ops)) {
      if (!['post', 'put', 'delete'].includes(method)) continue;
      for (const action of op.parameters?.find((p) => p.name === 'action')?.schema?.enum ?? [undefined])
        routes.push({
          name: `${method.toUpperCase()} ${relative}${action ? ` (${action})` : ''}`,
          method: method.toUpperCase(),
          path: target(method, relative, action),
          jsonBody: op.requestBody?.content['application/json'] !== undefined,
        });
    }
  }
  return routes;
}

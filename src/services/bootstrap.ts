import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { SYSTEM_QUEUE, SYSTEM_SERVER } from '../domain/job.ts';
import type { TypeName } from '../model/fields.ts';
import { keyShapeOf, requireType } from '../model/registry.ts';
import { validateObjectBody } from '../model/validate.ts';
import { SCRIPT_DEFINITION_TYPES, SERVER_DEFINITION_TYPES } from '../model/types/ProcessServer.ts';
import type { Protection, Store } from '../store/store.ts';
import type { AccountService } from './accounts.ts';
import { type ObjectService, SYSTEM_PRINCIPAL } from './objects.ts';

interface Builtin {
  type: TypeName;
  key: string;
  body: Record<string, unknown>;
  protection: Protection;
}

const systemDefinition = (name: string, description: string, parameters: unknown[] = []): Builtin => ({
  type: 'JobDefinition',
  key: `GLOBAL.${name}`,
  body: {
    Description: description,
    JobDefinitionType: 'System',
    DefaultQueue: SYSTEM_QUEUE,
    Parameters: parameters,
  },
  protection: 'locked',
});

/** docs/architecture.md §4: the objects every installation has. Created in order, so references resolve. */
export const BUILTIN_OBJECTS: readonly Builtin[] = [
  {
    type: 'Partition',
    key: 'GLOBAL',
    body: { Description: 'System objects and the default partition' },
    protection: 'undeletable',
  },
  { type: 'Queue', key: SYSTEM_QUEUE, body: { Description: 'Jobs the server runs itself' }, protection: 'locked' },
  { type: 'Queue', key: 'GLOBAL.Default', body: { Description: 'Default queue' }, protection: 'undeletable' },
  {
    type: 'ProcessServer',
    key: SYSTEM_SERVER,
    body: {
      Description: 'Runs System, JobChain and UserMessage jobs inside the server',
      DefinitionTypes: [...SERVER_DEFINITION_TYPES],
      ExecutionSize: 1000,
    },
    protection: 'locked',
  },
  {
    type: 'ProcessServer',
    key: 'GLOBAL.Local',
    body: {
      Description: 'The local agent started by millrace serve',
      DefinitionTypes: [...SCRIPT_DEFINITION_TYPES],
      ExecutionSize: 8,
    },
    protection: 'undeletable',
  },
  { type: 'QueueProvider', key: 'GLOBAL.System.GLOBAL.System', body: {}, protection: 'locked' },
  { type: 'QueueProvider', key: 'GLOBAL.Local.GLOBAL.Default', body: {}, protection: 'undeletable' },
  systemDefinition('System_Sleep', 'Waits for the given number of milliseconds', [
    {
      Name: 'MilliSeconds',
      Direction: 'In',
      DataType: 'Number',
      DefaultValue: '1000',
      Description: 'How long to wait',
    },
  ]),
  systemDefinition('System_OperatorMessage', 'Sends an operator message and waits for the reply', [
    { Name: 'Message', Direction: 'In', DataType: 'String', Description: 'Text of the message' },
    { Name: 'ReplyExpression', Direction: 'In', DataType: 'String', Optional: true, Description: 'Allowed replies' },
    { Name: 'Reply', Direction: 'Out', DataType: 'String', Description: 'The reply given' },
  ]),
  systemDefinition('System_Import_Archive', 'Imports a CAR archive', [
    { Name: 'FileName', Direction: 'In', DataType: 'String', Optional: true, Description: 'Name of the CAR file' },
    {
      Name: 'TargetPartition',
      Direction: 'In',
      DataType: 'String',
      Optional: true,
      Description: 'Partition to import into',
    },
    {
      Name: 'ImportRuleSet',
      Direction: 'In',
      DataType: 'String',
      Optional: true,
      Description: 'Import rule set to apply',
    },
    {
      Name: 'RuleSetProperties',
      Direction: 'In',
      DataType: 'String',
      Optional: true,
      Description: 'Rule-set parameters, p1=v1,p2=v2',
    },
  ]),
  systemDefinition('System_Backup', "Backs up the server's data folder (millrace backup) and keeps the last copies", [
    {
      Name: 'TargetFolder',
      Direction: 'In',
      DataType: 'String',
      Description: 'Absolute path of the folder on the server that receives the archives',
    },
    {
      Name: 'Keep',
      Direction: 'In',
      DataType: 'Number',
      DefaultValue: '7',
      Description: 'How many archives to keep in the folder (the oldest go)',
    },
  ]),
];

/**
 * Creates the built-in objects that are missing; safe to run on every start. A System definition made by an older
 * version gets this version's parameters (System_Import_Archive gained some), since nobody else may change it.
 */
export async function ensureBuiltinObjects(store: Store, objects: ObjectService): Promise<void> {
  for (const b of BUILTIN_OBJECTS) {
    const existing = await store.getObject(b.type, b.key);
    // A locked built-in that declares parameters (a System definition) keeps this version's.
    if (existing && b.protection === 'locked' && b.body.Parameters !== undefined) {
      const wanted = validateObjectBody(requireType(b.type), b.body, {
        mode: 'create',
        defaultZone: 'UTC',
        keyShapeOf,
      }).Parameters;
      if (!isDeepStrictEqual(existing.data.Parameters, wanted))
        await store.patchObjectData(existing.uniqueId, { ...existing.data, Parameters: wanted });
    }
    if (existing) continue;
    await objects.create(SYSTEM_PRINCIPAL, requireType(b.type), b.key, b.body);
    const created = await store.getObject(b.type, b.key);
    if (created) await store.setProtection(created.uniqueId, b.protection);
  }
}

/** What the first start generated, to print once. */
export interface FirstStartCredentials {
  user: string;
  password?: string;
  apiKey?: string;
}

/**
 * On the first start of an empty database: the admin user with MILLRACE_ADMIN_PASSWORD and
 * MILLRACE_ADMIN_API_KEY when set, random ones otherwise. Returns the generated secrets, or undefined when the
 * database was initialised before.
 */
export async function initialiseAdmin(
  store: Store,
  accounts: AccountService,
  env: NodeJS.ProcessEnv,
): Promise<FirstStartCredentials | undefined> {
  await accounts.ensureBuiltinRoles();
  if (await store.getMeta('initialised')) return undefined;
  const password = env.MILLRACE_ADMIN_PASSWORD || randomBytes(12).toString('base64url');
  if (!(await store.getUser('admin'))) await accounts.addUser('admin', { password, roles: ['Administrator'] });
  const { key } = await accounts.createApiKey('admin', {
    description: 'created on first start',
    ...(env.MILLRACE_ADMIN_API_KEY ? { key: env.MILLRACE_ADMIN_API_KEY } : {}),
  });
  await store.setMeta('initialised', String(Date.now()));
  return {
    user: 'admin',
    ...(env.MILLRACE_ADMIN_PASSWORD ? {} : { password }),
    ...(env.MILLRACE_ADMIN_API_KEY ? {} : { apiKey: key }),
  };
}

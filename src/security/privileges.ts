import { PRIVILEGES, type Privilege } from '../model/fields.ts';
import type { AuditActor } from '../store/audit-store.ts';
import type { Grant, Role } from '../store/store.ts';

/** What an authenticated caller is: a user and the grants of its roles. */
export interface Principal {
  readonly user: string;
  readonly roles: readonly string[];
  readonly grants: readonly Grant[];
  /** How this request came in (interface, address, API key id), for the audit log; absent for the server itself. */
  readonly via?: Omit<AuditActor, 'user'>;
}

/** The role that may read the audit log (docs/architecture.md §18); administrators may too. */
export const AUDITOR_ROLE = 'Auditor';

/** Reading the audit log and restoring from it: the Auditor role or the Administrator role. */
export const mayAudit = (p: Principal): boolean => p.roles.includes(AUDITOR_ROLE) || p.roles.includes('Administrator');

/** The audit log's actor for a principal: its user and how its request came in (the server itself otherwise). */
export const auditActor = (p: Principal): AuditActor => ({
  user: p.user,
  interface: p.via?.interface ?? 'system',
  address: p.via?.address ?? null,
  apiKeyId: p.via?.apiKeyId ?? null,
});

/** True when some grant gives `privilege` on objects of `type` in `partition`. */
export function can(p: Principal, type: string, partition: string, privilege: Privilege): boolean {
  for (const g of p.grants)
    if (
      (g.type === '*' || g.type === type) &&
      (g.partition === '*' || g.partition === partition) &&
      g.privileges.includes(privilege)
    )
      return true;
  return false;
}

/** The roles every installation has; they cannot be deleted. */
export const BUILTIN_ROLES: readonly Role[] = [
  {
    name: 'Administrator',
    description: 'Every privilege on every object type in every partition.',
    grants: [{ type: '*', partition: '*', privileges: [...PRIVILEGES] }],
    builtin: true,
  },
  {
    name: 'Operator',
    description: 'Views everything; submits, controls and answers jobs; holds and releases queues.',
    grants: [
      { type: '*', partition: '*', privileges: ['View', 'Submit', 'Control', 'Reply'] },
      { type: 'Queue', partition: '*', privileges: ['Edit'] },
      { type: 'QueueProvider', partition: '*', privileges: ['Edit'] },
    ],
    builtin: true,
  },
  {
    name: AUDITOR_ROLE,
    description: 'Views every object and reads the audit log; changes nothing.',
    grants: [{ type: '*', partition: '*', privileges: ['View'] }],
    builtin: true,
  },
  {
    name: 'Viewer',
    description: 'Views every object; changes nothing.',
    grants: [{ type: '*', partition: '*', privileges: ['View'] }],
    builtin: true,
  },
];

/** Parses `Type:Partition:Priv[,Priv…]` (either name may be `*`) into a grant; a message on error. */
const PRIVILEGE_NAMES: readonly string[] = PRIVILEGES;
const isPrivilege = (name: string): name is Privilege => PRIVILEGE_NAMES.includes(name);

export function parseGrant(text: string, knownTypes: ReadonlySet<string>): Grant | string {
  const [type, partition, privs, extra] = text.split(':');
  if (!type || !partition || !privs || extra !== undefined)
    return `"${text}" is not Type:Partition:Privilege[,Privilege…]`;
  if (type !== '*' && !knownTypes.has(type)) return `unknown object type "${type}"`;
  if (partition !== '*' && !/^[A-Za-z_][A-Za-z0-9_]{0,79}$/.test(partition))
    return `"${partition}" is not a partition name`;
  const privileges = privs.split(',').map((s) => s.trim());
  for (const pr of privileges)
    if (!isPrivilege(pr)) return `unknown privilege "${pr}" (one of ${PRIVILEGES.join(', ')})`;
  return { type, partition, privileges: privileges.filter(isPrivilege) };
}

/**
 * The partitions in which `type` objects grant every one of `privileges` to the caller, for lists filtered in
 * SQL: undefined means every partition (a grant on `*` covers each privilege), else the named ones (maybe none).
 */
export function partitionsWith(
  p: Principal,
  type: string,
  privileges: readonly Privilege[],
): readonly string[] | undefined {
  let result: Set<string> | undefined;
  for (const privilege of privileges) {
    const granted = new Set<string>();
    let everywhere = false;
    for (const g of p.grants)
      if ((g.type === '*' || g.type === type) && g.privileges.includes(privilege)) {
        if (g.partition === '*') everywhere = true;
        else granted.add(g.partition);
      }
    if (everywhere) continue;
    result = result === undefined ? granted : new Set([...result].filter((x) => granted.has(x)));
  }
  return result === undefined ? undefined : [...result].sort();
}

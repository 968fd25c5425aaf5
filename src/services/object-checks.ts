import { type LookupAll, resolveWebhookTarget } from '../alerts/ssrf.ts';
import { type DataOf, fieldDefault } from '../model/data.ts';
import type { TypeName } from '../model/fields.ts';
import type { Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';
import { checkCredentialUse } from './credential-checks.ts';
import { checkWindowCircles } from './window-checks.ts';

/**
 * Structure checks that need other objects, so they cannot be pure registry `rules`. ObjectService runs them inside
 * the create/update transaction, after the references resolved (every referenced object exists), and answers 400
 * with the message: nothing is stored.
 */

type Rec = Record<string, unknown>;
const items = (v: unknown): Rec[] => (Array.isArray(v) ? (v as Rec[]) : []);
// The stored forms the chain checks read, typed from the declarations.
type Definition = DataOf<'JobDefinition'>;
type Chain = DataOf<'JobChain'>;
type Step = NonNullable<Chain['Steps']>[number];
type Call = NonNullable<Step['Calls']>[number];
type Parameter = NonNullable<Definition['Parameters']>[number];

export interface PrecheckDeps {
  webhookAllow: readonly string[];
  lookup?: LookupAll;
}

/**
 * Checks that wait on the network (DNS), so ObjectService runs them before its transaction, never inside one.
 * `data` is the body as given (on update, only the fields it changes). A problem message, or undefined.
 */
export async function precheckObject(typeName: TypeName, data: Rec, deps: PrecheckDeps): Promise<string | undefined> {
  if (typeName !== 'AlertEscalation') return undefined;
  // Only well-formed webhook URLs: the registry rules word the message for anything else.
  const checks = items(data.Recipients).map(async (r, i) => {
    if (r.Kind !== 'Webhook' || typeof r.Address !== 'string' || !/^https?:\/\/\S+$/i.test(r.Address)) return undefined;
    const target = await resolveWebhookTarget(r.Address, deps.webhookAllow, deps.lookup);
    // A host that does not resolve (yet, or not from here) is accepted: every send resolves and checks it again,
    // so it can never reach an internal address. One that resolves to an internal address is refused now.
    if (!('problem' in target) || target.unresolved) return undefined;
    return `Field "Recipients[${i}].Address": ${target.problem}`;
  });
  return (await Promise.all(checks)).find((p) => p !== undefined);
}

/** Chains nest at most this deep, and one check reads at most this many chains: the walk is bounded. */
export const MAX_CHAIN_NESTING = 50;
const MAX_CHAINS_READ = 2000;

/** A problem message for an object about to be stored with `data` under `key`, or undefined when it is fine. */
export async function checkObject(
  tx: Store,
  typeName: TypeName,
  key: string,
  data: Rec,
  principal?: Principal,
): Promise<string | undefined> {
  switch (typeName) {
    // `data` was validated against the type's fields: it is that type's data.
    case 'JobChain':
      return checkJobChain(new Reader(tx), key, data as Chain);
    case 'JobDefinition':
      return (
        (await checkChainDefinition(tx, key, data)) ??
        (await checkCredentialUse(tx, data, principal)) ??
        (await checkParticipants(tx, data as Definition))
      );
    case 'TimeWindow':
      return checkWindowCircles(tx, key, data);
    default:
      return undefined;
  }
}

/**
 * A UserMessage's participants must exist when the definition is stored: a misspelt or missing name would leave its
 * jobs waiting for an answer nobody is allowed to give. Users and roles are made with `millrace user …`.
 */
async function checkParticipants(tx: Store, data: Definition): Promise<string | undefined> {
  for (const [i, name] of (data.UserMessage?.Participants ?? []).entries()) {
    const role = /^role:(.+)$/i.exec(name)?.[1];
    if (role !== undefined ? await tx.getRole(role) : await tx.getUser(name)) continue;
    return `Field "UserMessage.Participants[${i}]": there is no ${role !== undefined ? `role ${role}` : `user ${name}`}; create it first (millrace user add / user role-set)`;
  }
  return undefined;
}

/** The definition that carries a JobChain's parameters and submits it must stay of type JobChain. */
async function checkChainDefinition(tx: Store, key: string, data: Rec): Promise<string | undefined> {
  if (data.JobDefinitionType === 'JobChain' || !(await tx.getObject('JobChain', key))) return undefined;
  return `Field "JobDefinitionType": JobChain ${key} uses this definition, so its type must be JobChain`;
}

/** Objects read during one check, each once. */
class Reader {
  private readonly tx: Store;
  private readonly definitions = new Map<string, Definition | undefined>();
  private readonly chains = new Map<string, Chain | undefined>();
  chainsRead = 0;

  constructor(tx: Store) {
    this.tx = tx;
  }

  async definition(key: string): Promise<Definition | undefined> {
    if (!this.definitions.has(key)) this.definitions.set(key, (await this.tx.getObject('JobDefinition', key))?.data);
    return this.definitions.get(key);
  }

  async chain(key: string): Promise<Chain | undefined> {
    if (!this.chains.has(key)) {
      this.chainsRead++;
      this.chains.set(key, (await this.tx.getObject('JobChain', key))?.data);
    }
    return this.chains.get(key);
  }
}

type Direction = 'In' | 'Out' | 'InOut';
const directionOf = (p: Parameter): Direction =>
  p.Direction ?? fieldDefault('JobDefinition', 'Parameters', 'Direction');
const findParameter = (
  def: Definition | undefined,
  name: unknown,
  directions: readonly Direction[],
): Parameter | undefined => (def?.Parameters ?? []).find((p) => p.Name === name && directions.includes(directionOf(p)));

const INPUT: readonly Direction[] = ['In', 'InOut'];
const OUTPUT: readonly Direction[] = ['Out', 'InOut'];
const ANY: readonly Direction[] = ['In', 'Out', 'InOut'];

async function checkJobChain(r: Reader, key: string, data: Chain): Promise<string | undefined> {
  // Same key: the definition a chain is submitted through (docs/architecture.md §3); absent on a first create (auto-created).
  const own = await r.definition(key);
  if (own && own.JobDefinitionType !== 'JobChain')
    return `JobDefinition ${key} has JobDefinitionType ${own.JobDefinitionType}; the definition of a JobChain must have JobDefinitionType JobChain`;
  const steps = data.Steps ?? [];
  const searched = new Set<string>(); // nested chains known not to lead back here, shared by all calls
  for (const [i, step] of steps.entries())
    for (const [j, call] of (step.Calls ?? []).entries()) {
      const at = `Steps[${i}].Calls[${j}]`;
      const problem =
        (await checkCallTarget(r, key, call, at, searched)) ??
        (await checkMappings(r, key, own, steps, call, `${at}.ParameterMappings`));
      if (problem) return problem;
    }
  return undefined;
}

/** A chain must not run itself, directly or through nested chains (its run would never end). */
async function checkCallTarget(
  r: Reader,
  key: string,
  call: Call,
  at: string,
  searched: Set<string>,
): Promise<string | undefined> {
  const target = call.JobDefinition;
  if (target === key) return `Field "${at}.JobDefinition": a chain cannot call itself (${key})`;
  const path = await findPathBack(r, key, target, [key, target], searched);
  if (typeof path === 'string') return `Field "${at}.JobDefinition": ${path}`;
  if (path) return `Field "${at}.JobDefinition": calling ${target} makes a cycle of chains: ${path.join(' → ')}`;
  return undefined;
}

/**
 * Depth-first through the chains `def` calls: the path of keys that leads back to `home`, undefined when none does,
 * or a message when the walk hits its bounds. `done` holds chains already searched without finding `home`.
 */
async function findPathBack(
  r: Reader,
  home: string,
  def: string,
  path: string[],
  done: Set<string>,
): Promise<string[] | string | undefined> {
  // A loop that does not pass through `home` is not this object's doing (nor reachable through the API): stop there.
  if (done.has(def) || path.indexOf(def) < path.length - 1) return undefined;
  if ((await r.definition(def))?.JobDefinitionType !== 'JobChain') return undefined;
  if (path.length > MAX_CHAIN_NESTING)
    return `chains nest deeper than ${MAX_CHAIN_NESTING} levels: ${path.slice(0, 5).join(' → ')} → …`;
  if (r.chainsRead >= MAX_CHAINS_READ)
    return `calling ${path[1]} reaches more than ${MAX_CHAINS_READ} nested chains; this server does not check that many`;
  const chain = await r.chain(def);
  for (const step of chain?.Steps ?? [])
    for (const call of step.Calls ?? []) {
      const next = call.JobDefinition;
      if (next === home) return [...path, home];
      const found = await findPathBack(r, home, next, [...path, next], done);
      if (found) return found;
    }
  done.add(def);
  return undefined;
}

/** Each mapping's names must exist, with a direction that lets the value flow the way the mapping says. */
async function checkMappings(
  r: Reader,
  key: string,
  own: Definition | undefined,
  steps: readonly Step[],
  call: Call,
  at: string,
): Promise<string | undefined> {
  const target = call.JobDefinition;
  const called = await r.definition(target);
  for (const [k, m] of (call.ParameterMappings ?? []).entries()) {
    const mAt = `${at}[${k}]`;
    if (!findParameter(called, m.Parameter, INPUT))
      return `Field "${mAt}.Parameter": ${target} has no In or InOut parameter ${m.Parameter}`;
    if (m.Source === 'ChainParameter') {
      if (!own)
        return `Field "${mAt}.ChainParameter": JobDefinition ${key} does not exist yet, so the chain has no parameter ${m.ChainParameter}; create the JobDefinition ${key} (JobDefinitionType JobChain) with its Parameters first`;
      if (!findParameter(own, m.ChainParameter, ANY))
        return `Field "${mAt}.ChainParameter": JobDefinition ${key} has no parameter ${m.ChainParameter}`;
    }
    if (m.Source === 'CallOutput') {
      // The registry rules already checked that FromStep is an earlier step and FromCall one of its calls.
      const fromStep = steps.find((s) => s.Name === m.FromStep);
      const fromDef = (fromStep?.Calls ?? [])[(m.FromCall ?? 0) - 1]?.JobDefinition;
      const source = fromDef === undefined ? undefined : await r.definition(fromDef);
      if (!findParameter(source, m.FromParameter, OUTPUT))
        return `Field "${mAt}.FromParameter": ${fromDef} (call ${m.FromCall} of step ${m.FromStep}) has no Out or InOut parameter ${m.FromParameter}`;
    }
  }
  return undefined;
}

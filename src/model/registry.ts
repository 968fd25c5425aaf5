import { TYPE_NAMES, type TypeName } from './fields.ts';
import type { Form, ObjectType } from './object-type.ts';
import Alert from './types/Alert.ts';
import AlertEscalation from './types/AlertEscalation.ts';
import Application from './types/Application.ts';
import Credential from './types/Credential.ts';
import Deadline from './types/Deadline.ts';
import Event from './types/Event.ts';
import EventDefinition from './types/EventDefinition.ts';
import ImportRuleSet from './types/ImportRuleSet.ts';
import Job from './types/Job.ts';
import JobChain from './types/JobChain.ts';
import JobDefinition from './types/JobDefinition.ts';
import JobDefinitionAlertSource from './types/JobDefinitionAlertSource.ts';
import JobFile from './types/JobFile.ts';
import Library from './types/Library.ts';
import Lock from './types/Lock.ts';
import OperatorMessage from './types/OperatorMessage.ts';
import Partition from './types/Partition.ts';
import ProcessServer from './types/ProcessServer.ts';
import ProcessServerAlertSource from './types/ProcessServerAlertSource.ts';
import Queue from './types/Queue.ts';
import QueueProvider from './types/QueueProvider.ts';
import SubmitFrame from './types/SubmitFrame.ts';
import TimeWindow from './types/TimeWindow.ts';
import UserMessage from './types/UserMessage.ts';

/**
 * Every declaration by its name: a name missing here, or one that is not a TypeName, does not compile. Each keeps
 * its literal type, from which the type of its objects' data is made (model/data.ts).
 */
const TYPES = {
  Partition,
  Application,
  JobDefinition,
  JobChain,
  EventDefinition,
  Event,
  TimeWindow,
  SubmitFrame,
  Queue,
  QueueProvider,
  ProcessServer,
  Lock,
  ProcessServerAlertSource,
  JobDefinitionAlertSource,
  AlertEscalation,
  Alert,
  Deadline,
  OperatorMessage,
  UserMessage,
  Job,
  JobFile,
  Credential,
  ImportRuleSet,
  Library,
} as const satisfies { readonly [N in TypeName]: ObjectType<N> };

/** The declarations with their literal types, for the data types of model/data.ts. */
export type Declarations = typeof TYPES;

/** The one registry of object types, in TYPE_NAMES order. Everything per-type (validation, JSON, XML, CAR, privileges) reads it. */
const ALL: readonly ObjectType[] = TYPE_NAMES.map((name) => {
  const type = TYPES[name];
  if (type.name !== name) throw new Error(`the declaration registered as ${name} is named ${type.name}`);
  return type;
});

export const registry: ReadonlyMap<TypeName, ObjectType> = new Map(ALL.map((t) => [t.name, t]));

export function getType(name: string): ObjectType | undefined {
  return registry.get(name as TypeName);
}

export function requireType(name: TypeName): ObjectType {
  const t = registry.get(name);
  if (!t) throw new Error(`unknown object type ${name}`);
  return t;
}

/** Types kept in the generic object store, with create/read/update/delete routes. */
export const definitionTypes = (): ObjectType[] => ALL.filter((t) => t.storage === 'definition');

export const allTypes = (): readonly ObjectType[] => ALL;

/** A request body a type declares (the Job's submit, an event's raise, a message's reply); a missing one is a bug. */
export function requireForm(type: TypeName, name: string): Form {
  const form = requireType(type).forms[name];
  if (!form) throw new Error(`the ${type} type declares no ${name} form`);
  return form;
}

export const keyShapeOf = (name: TypeName): ObjectType['key'] => requireType(name).key;

import type { DefinitionParameter } from '../domain/parameters.ts';
import { type DataOf, fieldDefault } from './data.ts';

/**
 * A definition's declared parameters as the domain's parameter rules read them (domain/parameters.ts): a field
 * stored as null takes the default its declaration gives (model/types/JobDefinition.ts).
 */
export function declaredParameters(d: DataOf<'JobDefinition'>): DefinitionParameter[] {
  return (d.Parameters ?? []).map((p) => ({
    Name: p.Name,
    Direction: p.Direction ?? fieldDefault('JobDefinition', 'Parameters', 'Direction'),
    DataType: p.DataType ?? fieldDefault('JobDefinition', 'Parameters', 'DataType'),
    DefaultValue: p.DefaultValue ?? null,
    Optional: p.Optional ?? fieldDefault('JobDefinition', 'Parameters', 'Optional'),
  }));
}

import { emptyRecord } from '../domain/own.ts';

/**
 * The environment of a job: the agent's own without any MILLRACE_* variable (the server's and the agent's
 * settings and secrets never reach a job), plus the run's parameters by name, plus the agent's own variables for
 * the job (MILLRACE_JOB_ID, MILLRACE_ATTEMPT, MILLRACE_FILES, MILLRACE_OUT and what the launcher needs).
 */
export function jobEnvironment(
  base: NodeJS.ProcessEnv,
  parameters: Record<string, string>,
  own: Record<string, string>,
): Record<string, string> {
  const env = emptyRecord<string>();
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && !name.toUpperCase().startsWith('MILLRACE_')) env[name] = value;
  }
  for (const [name, value] of Object.entries(parameters)) env[name] = value;
  for (const [name, value] of Object.entries(own)) env[name] = value;
  return env;
}

/** Why a parameter cannot be an environment variable, or null when all can. */
export function badParameter(parameters: Record<string, string>): string | null {
  for (const [name, value] of Object.entries(parameters)) {
    if (name.length === 0 || name.includes('=') || name.includes('\0'))
      return `parameter name ${JSON.stringify(name)} cannot be an environment variable name`;
    if (value.includes('\0')) return `the value of parameter ${name} holds a NUL character`;
  }
  return null;
}

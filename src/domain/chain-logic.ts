/**
 * Chain decisions (product §1.5), pure. SKELETON: signatures fixed.
 */

export type CallOutcome = 'Completed' | 'Error' | 'Killed' | 'Canceled' | 'Unknown' | 'Ignored' | 'Skipped';

export interface Handler {
  Status: string; // Completed | Error | Killed | Canceled | Unknown | Otherwise
  Action: string; // Continue | GotoStep | MarkCompleted | MarkError | RestartStep | RestartFromError | RequestRestart
  GotoStep?: string | null;
}

/** What the chain does after a step's calls are all final. */
export type StepDecision =
  | { action: 'Continue' } // next step, or chain Completed after the last
  | { action: 'GotoStep'; step: string }
  | { action: 'MarkCompleted' }
  | { action: 'MarkError' }
  | { action: 'RestartStep' }
  | { action: 'RestartFromError' }
  | { action: 'RequestRestart' };

/** The step's status from its calls' final statuses: Completed when every call Completed (Ignored/Skipped count as done), else the worst. */
export function stepStatus(_calls: readonly CallOutcome[]): 'Completed' | 'Error' | 'Killed' | 'Canceled' | 'Unknown' {
  throw new Error('not implemented');
}

/** Step handlers first, then the chain's, then the default (Completed → Continue, anything else → MarkError). */
export function decideStep(
  _calls: readonly CallOutcome[],
  _stepHandlers: readonly Handler[],
  _chainHandlers: readonly Handler[],
): StepDecision {
  throw new Error('not implemented');
}

/** A parsed precondition expression. */
export type Condition = unknown;

/** Parses a precondition expression; throws Error with a message naming the problem. */
export function parseCondition(_text: string): Condition {
  throw new Error('not implemented');
}

/** Evaluates a parsed condition over parameter values (by name; numbers, strings, null). */
export function evalCondition(_c: Condition, _values: Readonly<Record<string, string | number | null>>): boolean {
  throw new Error('not implemented');
}

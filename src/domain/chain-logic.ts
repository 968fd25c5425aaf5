/**
 * Chain decisions, pure: the status of a step from its calls' statuses, what the chain does next
 * (status handlers), and the precondition expressions of steps and calls. No I/O, nothing imported but
 * the checked list index (item-at.ts): the registry
 * (`JobChain` rules) parses expressions with it and the chain runtime decides with it.
 */

import { itemAt } from './item-at.ts';

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

type StepStatus = 'Completed' | 'Error' | 'Killed' | 'Canceled' | 'Unknown';

/** Ignored (submit disabled) and Skipped (false precondition) calls did all they were asked to: they count as done. */
const DONE: ReadonlySet<CallOutcome> = new Set<CallOutcome>(['Completed', 'Ignored', 'Skipped']);

/**
 * Worst first. Error (the work itself failed) outranks Killed (stopped by force, possibly mid-work), which
 * outranks Unknown (the outcome was lost, the work may well have finished), which outranks Canceled (the call never
 * ran, so nothing half-done is left behind).
 */
const SEVERITY: readonly StepStatus[] = ['Error', 'Killed', 'Unknown', 'Canceled'];

/** The step's status from its calls' final statuses: Completed when every call Completed (Ignored/Skipped count as done), else the worst. */
export function stepStatus(calls: readonly CallOutcome[]): StepStatus {
  for (const s of SEVERITY) if (calls.includes(s)) return s;
  return 'Completed'; // all done, or no calls at all
}

/** Product rule: Completed needs every call done; a failure status needs one call with it; Otherwise always fires. */
function fires(h: Handler, calls: readonly CallOutcome[]): boolean {
  if (h.Status === 'Otherwise') return true;
  if (h.Status === 'Completed') return calls.every((c) => DONE.has(c));
  const severities: readonly string[] = SEVERITY;
  const outcomes: readonly string[] = calls;
  return severities.includes(h.Status) && outcomes.includes(h.Status);
}

/** The first handler of one list that fires: specific statuses in list order, then Otherwise. */
function firstFiring(handlers: readonly Handler[], calls: readonly CallOutcome[]): Handler | undefined {
  return (
    handlers.find((h) => h.Status !== 'Otherwise' && fires(h, calls)) ?? handlers.find((h) => h.Status === 'Otherwise')
  );
}

function toDecision(h: Handler): StepDecision {
  switch (h.Action) {
    case 'Continue':
    case 'MarkCompleted':
    case 'MarkError':
    case 'RestartStep':
    case 'RestartFromError':
    case 'RequestRestart':
      return { action: h.Action };
    case 'GotoStep':
      // The registry requires GotoStep with this action; a handler without one falls through to failing the chain.
      if (h.GotoStep) return { action: 'GotoStep', step: h.GotoStep };
      return { action: 'MarkError' };
    default:
      // An action this code does not know (never stored by the registry): fail the chain visibly, not silently go on.
      return { action: 'MarkError' };
  }
}

/**
 * Step handlers first, then the chain's, then the default (Completed → Continue, anything else → MarkError).
 *
 * The default for a failed step follows the product's behaviour for chains built through an API or RedwoodScript:
 * step and chain go to Error. The "Easy Restart" default of the product's editor (step to Console,
 * chain stays Waiting) is not followed: a chain that needs it declares a RequestRestart handler.
 */
export function decideStep(
  calls: readonly CallOutcome[],
  stepHandlers: readonly Handler[],
  chainHandlers: readonly Handler[],
): StepDecision {
  const h = firstFiring(stepHandlers, calls) ?? firstFiring(chainHandlers, calls);
  if (h) return toDecision(h);
  return stepStatus(calls) === 'Completed' ? { action: 'Continue' } : { action: 'MarkError' };
}

// ---------------------------------------------------------------------------------------------------------------
// Preconditions: "a simple comparison over parameters".
//
//   expr := or;  or := and ('or' and)*;  and := not ('and' not)*;  not := 'not' not | cmp | '(' expr ')'
//   cmp := operand op operand;  op := == != < <= > >=
//   operand := parameter name | number | 'single' or "double" quoted string | null | true | false
//
// Keywords are case-insensitive, so a parameter named like one (e.g. `Null`) cannot be referred to. Inside a quoted
// string a backslash takes the next character literally (`'it\'s'`).
// ---------------------------------------------------------------------------------------------------------------

export type ComparisonOperator = '==' | '!=' | '<' | '<=' | '>' | '>=';

export type Operand =
  | { kind: 'parameter'; name: string }
  | { kind: 'literal'; value: string | number | boolean | null };

/** A parsed precondition expression. */
export type Condition =
  | { kind: 'compare'; op: ComparisonOperator; left: Operand; right: Operand }
  | { kind: 'not'; operand: Condition }
  | { kind: 'and' | 'or'; operands: Condition[] };

/** Limits that keep a stored expression cheap to parse and evaluate (and the recursive parser off the stack limit). */
export const MAX_CONDITION_LENGTH = 1000;
export const MAX_CONDITION_DEPTH = 32;

type Token =
  | { kind: 'op'; text: ComparisonOperator; pos: number }
  | { kind: 'paren'; text: '(' | ')'; pos: number }
  | { kind: 'word'; text: string; pos: number } // a parameter name or a keyword
  | { kind: 'number'; text: string; value: number; pos: number }
  | { kind: 'string'; text: string; value: string; pos: number };

const OPERATORS: readonly ComparisonOperator[] = ['==', '!=', '<=', '>=', '<', '>']; // two-character ones first

/** Positions in messages are 1-based, as a person counts characters. */
const at = (pos: number): string => `at position ${pos + 1}`;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = itemAt(text, i);
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const rest = text.slice(i);
    const op = OPERATORS.find((o) => rest.startsWith(o));
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    const num = /^-?\d+(\.\d+)?/.exec(rest);
    if (op) tokens.push({ kind: 'op', text: op, pos: i });
    else if (ch === '(' || ch === ')') tokens.push({ kind: 'paren', text: ch, pos: i });
    else if (word) tokens.push({ kind: 'word', text: word[0], pos: i });
    else if (num) tokens.push({ kind: 'number', text: num[0], value: Number(num[0]), pos: i });
    else if (ch === '"' || ch === "'") {
      const s = readString(text, i);
      tokens.push({ kind: 'string', text: text.slice(i, s.end), value: s.value, pos: i });
      i = s.end;
      continue;
    } else if (ch === '=') throw new Error(`unexpected "=" ${at(i)}; equality is written ==`);
    else throw new Error(`unexpected character "${ch}" ${at(i)}`);
    i += tokens[tokens.length - 1]?.text.length ?? 1;
  }
  return tokens;
}

function readString(text: string, start: number): { value: string; end: number } {
  const quote = text[start];
  let value = '';
  for (let i = start + 1; i < text.length; i++) {
    const ch = itemAt(text, i);
    if (ch === quote) return { value, end: i + 1 };
    if (ch === '\\' && i + 1 < text.length) value += text[++i];
    else value += ch;
  }
  throw new Error(`unterminated string starting ${at(start)}`);
}

/** Recursive descent over the tokens; `depth` counts open parentheses and `not`s. */
class Parser {
  private readonly tokens: Token[];
  private readonly length: number;
  private i = 0;

  constructor(tokens: Token[], length: number) {
    this.tokens = tokens;
    this.length = length;
  }

  parse(): Condition {
    if (this.tokens.length === 0) throw new Error('the expression is empty');
    const c = this.or(0);
    const extra = this.peek();
    if (extra)
      throw new Error(
        `expected "and", "or" or the end after ${this.describePrevious()} but found "${extra.text}" ${at(extra.pos)}`,
      );
    return c;
  }

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }

  private isKeyword(t: Token | undefined, kw: string): boolean {
    return t?.kind === 'word' && t.text.toLowerCase() === kw;
  }

  /** Where the parser stands, for messages: "after "x"" or nothing at the start. */
  private describePrevious(): string {
    const prev = this.tokens[this.i - 1];
    return prev ? `"${prev.text}"` : 'the start';
  }

  private here(): string {
    return at(this.peek()?.pos ?? this.length);
  }

  private fail(expected: string): never {
    const t = this.peek();
    const found = t ? ` but found "${t.text}"` : '';
    const after = this.i > 0 ? ` after ${this.describePrevious()}` : '';
    throw new Error(`expected ${expected}${after}${found} ${this.here()}${t ? '' : ', the end of the expression'}`);
  }

  private or(depth: number): Condition {
    const operands = [this.and(depth)];
    while (this.isKeyword(this.peek(), 'or')) {
      this.i++;
      operands.push(this.and(depth));
    }
    return operands.length === 1 ? itemAt(operands, 0) : { kind: 'or', operands };
  }

  private and(depth: number): Condition {
    const operands = [this.not(depth)];
    while (this.isKeyword(this.peek(), 'and')) {
      this.i++;
      operands.push(this.not(depth));
    }
    return operands.length === 1 ? itemAt(operands, 0) : { kind: 'and', operands };
  }

  private not(depth: number): Condition {
    const t = this.peek();
    const opens = this.isKeyword(t, 'not') || (t?.kind === 'paren' && t.text === '(');
    if (opens && depth >= MAX_CONDITION_DEPTH)
      throw new Error(`the expression nests deeper than ${MAX_CONDITION_DEPTH} levels ${this.here()}`);
    if (this.isKeyword(t, 'not')) {
      this.i++;
      return { kind: 'not', operand: this.not(depth + 1) };
    }
    if (t?.kind === 'paren' && t.text === '(') {
      this.i++;
      const inner = this.or(depth + 1);
      const close = this.peek();
      if (close?.kind !== 'paren' || close.text !== ')') this.fail(`")" (for the "(" ${at(t.pos)})`);
      this.i++;
      return inner;
    }
    if (!this.isOperandStart(t)) this.fail('a comparison, "not" or "("');
    return this.compare();
  }

  private isOperandStart(t: Token | undefined): boolean {
    if (!t) return false;
    if (t.kind === 'number' || t.kind === 'string') return true;
    return t.kind === 'word' && !['and', 'or', 'not'].includes(t.text.toLowerCase());
  }

  private compare(): Condition {
    const left = this.operand();
    const op = this.peek();
    if (op?.kind !== 'op') this.fail('an operator (==, !=, <, <=, >, >=)');
    this.i++;
    if (!this.isOperandStart(this.peek())) this.fail('a parameter name, number, quoted string, null, true or false');
    const right = this.operand();
    return { kind: 'compare', op: op.text, left, right };
  }

  private operand(): Operand {
    const t = itemAt(this.tokens, this.i++); // isOperandStart checked it
    if (t.kind === 'number' || t.kind === 'string') return { kind: 'literal', value: t.value };
    const lower = t.text.toLowerCase();
    if (lower === 'null') return { kind: 'literal', value: null };
    if (lower === 'true' || lower === 'false') return { kind: 'literal', value: lower === 'true' };
    return { kind: 'parameter', name: t.text };
  }
}

/** Parses a precondition expression; throws Error with a message naming the problem. */
export function parseCondition(text: string): Condition {
  if (text.length > MAX_CONDITION_LENGTH)
    throw new Error(`the expression is ${text.length} characters long; at most ${MAX_CONDITION_LENGTH} are allowed`);
  return new Parser(tokenize(text), text.length).parse();
}

type Value = string | number | null;

/** A decimal number written as text (not hex, not Infinity), as a parameter value of DataType Number arrives. */
const NUMERIC = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const numeric = (s: string): number | undefined => {
  const t = s.trim();
  return NUMERIC.test(t) ? Number(t) : undefined;
};

function operandValue(o: Operand, values: Readonly<Record<string, Value>>): Value {
  if (o.kind === 'parameter') return Object.hasOwn(values, o.name) ? (values[o.name] ?? null) : null;
  // true/false compare as the strings a parameter would hold for them.
  return typeof o.value === 'boolean' ? String(o.value) : o.value;
}

/**
 * Numbers compare as numbers, and so does a numeric string against a number (parameter values often arrive as
 * text); anything else compares as strings, by code unit. Null equals only null; ordered comparisons with null are
 * false.
 */
function compare(op: ComparisonOperator, a: Value, b: Value): boolean {
  if (a === null || b === null) {
    if (op === '==') return a === b;
    if (op === '!=') return a !== b;
    return false;
  }
  const an = typeof a === 'number' ? a : numeric(a);
  const bn = typeof b === 'number' ? b : numeric(b);
  const asNumbers = (typeof a === 'number' || typeof b === 'number') && an !== undefined && bn !== undefined;
  const x = asNumbers ? an : String(a);
  const y = asNumbers ? bn : String(b);
  switch (op) {
    case '==':
      return x === y;
    case '!=':
      return x !== y;
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    case '>=':
      return x >= y;
  }
}

/** Evaluates a parsed condition over parameter values (by name; numbers, strings, null). */
export function evalCondition(c: Condition, values: Readonly<Record<string, string | number | null>>): boolean {
  switch (c.kind) {
    case 'compare':
      return compare(c.op, operandValue(c.left, values), operandValue(c.right, values));
    case 'not':
      return !evalCondition(c.operand, values);
    case 'and':
      return c.operands.every((o) => evalCondition(o, values));
    case 'or':
      return c.operands.some((o) => evalCondition(o, values));
  }
}

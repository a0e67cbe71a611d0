import jsonata from 'jsonata';
import { TEMPLATE_OUTPUT_MAX_BYTES, describeJsonataError } from '../webhooks/template-rules';
import type { TemplateResult } from './template-runner';

/**
 * Most time an evaluation may take in the service's own process, counted from step to step (see
 * STEP_GAP_MS): past it, that delivery's template goes to the evaluators (template-runner.ts).
 * The recipes of docs/templates.md take about 0.1 ms, once the code they run is compiled.
 */
export const INLINE_BUDGET_MS = 2;
/**
 * Most that the time from one step to the next counts. JSONata awaits at every step, so other
 * work of the process (a query's answer, another request) may run between two steps, and the
 * process may wait for a CPU: counted in full, that failed the budget of templates that take
 * 0.1 ms on a busy service. A step of the template's own that takes longer (one is bounded by
 * INLINE_MAX_WEIGHT) still counts this much, and INLINE_MAX_STEPS bounds how many there are.
 */
const STEP_GAP_MS = 0.25;
/** Most steps an evaluation may take in the service's own process (the recipes take about 100). */
export const INLINE_MAX_STEPS = 5000;
/**
 * Evaluations in a row past a bound of time or steps after which a template goes to the
 * evaluators from then on: more than one, because a first run's compiling, or a body much larger
 * than most, is not the template's usual cost.
 */
export const INLINE_OVERRUNS = 3;
/**
 * Largest value (about its size as JSON) a step may yield in the service's process: a template
 * that builds more goes to the evaluators. It bounds what one step can cost (a `$string` or a
 * `&` of it, the output's serialization), which the time checks between steps cannot.
 */
export const INLINE_MAX_WEIGHT = TEMPLATE_OUTPUT_MAX_BYTES;
/**
 * Largest notification body (JSON text) evaluated in the service's process. The sizes of the
 * body's parts are counted as steps reach them, within the budget; a larger body (rare: a few KB
 * is usual) goes to the evaluators rather than spend the budget on that.
 */
export const INLINE_MAX_BODY = 64 * 1024;
/** Compiled templates kept, and templates known to need the evaluators, most recent first. */
const CACHE_SIZE = 256;
/** Longest string literal a `$join` separator or a `$replace` pattern or replacement may be. */
const LITERAL_MAX = 16;
/** The binding through which the step hooks find their evaluation's state. */
const GUARD = '__meb_inline_guard';

/** A node of JSONata's parsed expression (jsonata(...).ast()), as far as the checks read it. */
interface Node {
  type?: string;
  value?: unknown;
  procedure?: Node;
  arguments?: Node[];
  [key: string]: unknown;
}

const literal = (node: Node | undefined): boolean =>
  node?.type === 'string' && typeof node.value === 'string' && node.value.length <= LITERAL_MAX;
const any = () => true;
/**
 * The built-in functions an inline template may call, with what its arguments must be: each one
 * costs at most about the size of its arguments and yields no more (no regular expressions, no
 * `$eval`, no `$pad` or prettified `$string`, whose cost a number or the nesting decides; a
 * `$join` or `$replace` multiplies a value by a short literal only).
 */
const CALLS: Record<string, (args: Node[]) => boolean> = {
  string: (args) => args.length <= 1,
  join: (args) => args.length <= 1 || literal(args[1]),
  replace: (args) => literal(args[1]) && literal(args[2]),
  now: (args) => args.length === 0,
  millis: any,
  ...Object.fromEntries(
    [
      'length',
      'substring',
      'substringBefore',
      'substringAfter',
      'uppercase',
      'lowercase',
      'trim',
      'contains',
      'split',
      'number',
      'abs',
      'floor',
      'ceil',
      'round',
      'sum',
      'max',
      'min',
      'average',
      'boolean',
      'not',
      'exists',
      'count',
      'append',
      'reverse',
      'keys',
      'lookup',
      'type',
      'encodeUrlComponent',
      'encodeUrl',
    ].map((name) => [name, any]),
  ),
};
/** Operators whose cost is that of their operands (not `..`, a range; not `in`, a product). */
const OPERATORS = new Set([
  '+',
  '-',
  '*',
  '/',
  '%',
  '=',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '&',
  'and',
  'or',
]);
/** Node types that need no more checking than their children. */
const PLAIN = new Set([
  'path',
  'name',
  'string',
  'number',
  'value',
  'condition',
  'block',
  'wildcard',
  'descendant',
  'filter',
]);

/**
 * Whether `node` stays within the inline subset: no variables but `$` and `$$` (so no bindings,
 * no functions of the template's own, no recursion), no regular expressions, ranges, sorting,
 * transforms or parent steps, and only the built-in calls of CALLS. In it, every step costs
 * at most about the size of what the steps before it yielded, which INLINE_MAX_WEIGHT bounds.
 */
export function inlineable(node: unknown, seen = new Set<object>()): boolean {
  if (node === null || typeof node !== 'object' || seen.has(node)) return true;
  seen.add(node);
  if (Array.isArray(node)) return node.every((child) => inlineable(child, seen));
  const n = node as Node;
  const children = (skip?: string) =>
    Object.entries(n).every(([key, child]) => key === skip || inlineable(child, seen));
  if (n.type === undefined) return children();
  if (PLAIN.has(n.type)) return children();
  switch (n.type) {
    case 'variable':
      return n.value === '' || n.value === '$';
    case 'binary':
      return OPERATORS.has(n.value as string) && children();
    case 'unary':
      return ['-', '[', '{'].includes(n.value as string) && children();
    case 'function': {
      const name = n.procedure?.type === 'variable' ? (n.procedure.value as string) : '';
      const rule = Object.prototype.hasOwnProperty.call(CALLS, name) ? CALLS[name] : undefined;
      return rule !== undefined && rule(n.arguments ?? []) && children('procedure');
    }
    default:
      return false;
  }
}

/** What warms the inline evaluation up: the constructs of the recipes, on a small body. */
const WARM_UP =
  '{"a": $join(data.files.("<" & url & "|" & $uppercase(type) & ">"), "\\n"), ' +
  '"b": data.topic = "x" ? [1, -2] : {"c": $replace(data.topic, "&", "&amp;")}, ' +
  '"d": $count(data.files[size > 1]), "e": data.files.{"t": type, "s": $string(size)}}';
const WARM_UP_BODY = JSON.stringify({
  data: {
    topic: 'A & B',
    files: [1, 2, 3].map((size) => ({ url: `u${size}`, type: 'mp4', size })),
  },
});
const WARM_UP_RUNS = 30;

/** The inline evaluation last started in this process, the next one's turn when it is over. */
let turn: Promise<unknown> = Promise.resolve();

/** Why an inline evaluation stopped without deciding: the evaluators decide instead. */
class NotHere {
  constructor(readonly slow: boolean) {}
}

/** One inline evaluation's bounds: its time and steps so far, the sizes of its values. */
interface Guard {
  /** When the last step started or ended, and the time counted so far. */
  last: number;
  spent: number;
  steps: number;
  weights: WeakMap<object, number>;
}

/** About the size of `value` as JSON, counted no further than past INLINE_MAX_WEIGHT. */
function weigh(value: unknown, weights: WeakMap<object, number>): number {
  if (typeof value === 'string') return value.length + 2;
  if (value === null || typeof value !== 'object') return 8;
  const known = weights.get(value);
  if (known !== undefined) return known;
  let total = 2;
  if (Array.isArray(value)) {
    for (const item of value) {
      total += weigh(item, weights) + 1;
      if (total > INLINE_MAX_WEIGHT) break;
    }
  } else {
    for (const [key, item] of Object.entries(value)) {
      total += key.length + 4 + weigh(item, weights);
      if (total > INLINE_MAX_WEIGHT) break;
    }
  }
  weights.set(value, total);
  return total;
}

/** Counts the time since the last step (at most STEP_GAP_MS of it): whether the budget is spent. */
function overran(guard: Guard): boolean {
  const now = performance.now();
  guard.spent += Math.min(now - guard.last, STEP_GAP_MS);
  guard.last = now;
  return guard.spent > INLINE_BUDGET_MS;
}

interface StepEnvironment {
  base: { lookup(name: string): unknown; depth: number };
}
const guardOf = (env: StepEnvironment) => env.base.lookup(GUARD) as Guard;
const onEntry = (_expr: unknown, _input: unknown, env: StepEnvironment) => {
  const guard = guardOf(env);
  if (++guard.steps > INLINE_MAX_STEPS || overran(guard)) throw new NotHere(true);
};
const onExit = (_expr: unknown, _input: unknown, env: StepEnvironment, result: unknown) => {
  const guard = guardOf(env);
  if (weigh(result, guard.weights) > INLINE_MAX_WEIGHT) throw new NotHere(false);
  if (overran(guard)) throw new NotHere(true);
};

/** What a template's output is as a delivery's bytes, or why it is none (docs/templates.md). */
function judged(output: unknown): TemplateResult {
  if (output === undefined) return { ok: false, error: 'it yielded nothing for this body' };
  if (typeof output !== 'object' || output === null) {
    const what = output === null ? 'null' : `a ${typeof output}`;
    return { ok: false, error: `it yielded ${what}, not a JSON object or array` };
  }
  const json = JSON.stringify(output);
  const bytes = Buffer.byteLength(json, 'utf8');
  return bytes > TEMPLATE_OUTPUT_MAX_BYTES
    ? {
        ok: false,
        error: `its output is ${bytes} bytes; at most ${TEMPLATE_OUTPUT_MAX_BYTES} are sent`,
      }
    : { ok: true, json };
}

/**
 * Evaluates in the service's own process the templates that can be bounded there
 * (docs/templates.md#how-templates-are-evaluated): those of the inline subset (inlineable), each
 * step checked against INLINE_BUDGET_MS, INLINE_MAX_STEPS and INLINE_MAX_WEIGHT. A template outside the
 * subset, or one that reaches a bound, is left to the evaluators (render answers null), which
 * decide with TEMPLATE_TIMEOUT_MS as before; one past the time or the steps INLINE_OVERRUNS
 * evaluations in a row goes to them from then on. No evaluator's round trip for the others:
 * waiting for an evaluator to be scheduled was what a templated delivery's slot spent most of
 * its time on (docs/benchmarks.md#templates-and-chat-messages-benchtemplatests).
 */
export class InlineTemplates {
  /** Compiled inlineable templates, most recently used last. */
  private readonly compiled = new Map<string, jsonata.Expression>();
  /** Templates for the evaluators: outside the subset, or past INLINE_BUDGET_MS too often. */
  private readonly elsewhere = new Map<string, true>();
  /** How many evaluations in a row of a template ran past INLINE_BUDGET_MS or INLINE_MAX_STEPS. */
  private readonly overruns = new Map<string, number>();

  constructor() {
    // JSONata's code and this file's compiled before the first delivery's template: a cold first
    // run took 8 ms, and the service's first templates would have gone to the evaluators for it.
    void this.warmUp();
  }

  private async warmUp(): Promise<void> {
    for (let time = 0; time < WARM_UP_RUNS; time++) {
      await this.render(WARM_UP, WARM_UP_BODY);
      // Its cold runs overrun: no reason to send it, or one like it, to the evaluators.
      this.overruns.delete(WARM_UP);
    }
  }

  /**
   * The template's output for the notification body `body` (JSON text), as the evaluators would
   * give it, or null: the evaluators decide.
   */
  render(template: string, body: string): Promise<TemplateResult | null> {
    if (body.length > INLINE_MAX_BODY) return Promise.resolve(null);
    const expr = this.expression(template);
    if (expr === null) return Promise.resolve(null);
    // One at a time in the process: JSONata awaits at every step, so evaluations started
    // together would run step by step in turn, and each one's time would count the others'.
    const run = turn.then(() => this.evaluate(template, expr, body));
    turn = run.catch(() => undefined);
    return run;
  }

  private async evaluate(
    template: string,
    expr: jsonata.Expression,
    body: string,
  ): Promise<TemplateResult | null> {
    let output: unknown;
    try {
      const input: unknown = JSON.parse(body);
      // From here: parsing a large body is not the template's cost.
      const guard: Guard = {
        last: performance.now(),
        spent: 0,
        steps: 0,
        weights: new WeakMap(),
      };
      output = await expr.evaluate(input, { [GUARD]: guard });
    } catch (error) {
      if (error instanceof NotHere) {
        if (error.slow) this.overran(template);
        return null;
      }
      // JSONata's own errors (a code such as T2001) are the template's, and the evaluators would
      // give the same; anything else (the stack, say) is for them to decide.
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code !== 'string' || code === 'U1001') return null;
      this.overruns.delete(template);
      return { ok: false, error: describeJsonataError(error) };
    }
    this.overruns.delete(template);
    return judged(output);
  }

  private overran(template: string): void {
    const times = (this.overruns.get(template) ?? 0) + 1;
    remember(this.overruns, template, times);
    if (times < INLINE_OVERRUNS) return;
    this.overruns.delete(template);
    this.compiled.delete(template);
    remember(this.elsewhere, template, true);
  }

  private expression(template: string): jsonata.Expression | null {
    if (this.elsewhere.has(template)) return null;
    const known = this.compiled.get(template);
    if (known !== undefined) {
      remember(this.compiled, template, known);
      return known;
    }
    let expr: jsonata.Expression;
    try {
      expr = jsonata(template);
    } catch {
      // Refused when the webhook was stored; the evaluators say why, as before.
      remember(this.elsewhere, template, true);
      return null;
    }
    if (!inlineable(expr.ast())) {
      remember(this.elsewhere, template, true);
      return null;
    }
    expr.assign(Symbol.for('jsonata.__evaluate_entry') as never, onEntry);
    expr.assign(Symbol.for('jsonata.__evaluate_exit') as never, onExit);
    remember(this.compiled, template, expr);
    return expr;
  }
}

/** Puts `key` last in `map`, dropping the least recently used past CACHE_SIZE. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > CACHE_SIZE) map.delete(map.keys().next().value as string);
}

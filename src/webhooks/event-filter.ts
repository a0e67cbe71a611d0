import { compareNumber } from 'lossless-json';
import { PreciseNumber, parsePrecise, stringifyPrecise } from '../common/precise-json';
import { isWellFormed } from '../common/unicode';

/**
 * A webhook's `filter` (docs/destinations.md): parsed and checked once, when the webhook is created or
 * PATCHed, into a compiled form with two faces that mean the same:
 * - `jsonpath` and `vars`, stored on the webhook: PostgreSQL matches them against the body in
 *   the fan-out statement itself (jsonb_path_match), so a filtered-out event writes no row and
 *   fan-out stays one statement. PostgreSQL keeps a jsonpath column in its parsed binary form,
 *   so nothing is parsed again per event.
 * - `matches(body)`, the same predicate in TypeScript (the in-memory stores of the unit specs,
 *   and a spec that runs one table of cases through both to keep them equal).
 *
 * Semantics follow SQL/JSON's lax mode, which jsonb_path_match applies: a path goes through an
 * array on its way (`data.participants.email` looks at every participant), and an operator
 * matches when any value the path reaches (an array's elements included) satisfies it. Each
 * comparison is guarded by type, so a value of another type never matches (and `$neq`, `$nin`,
 * `$not` and `$exists: false` are the plain negations of their counterparts, matching a missing
 * value too).
 *
 * Numbers compare by value, exactly: a filter's number that a JavaScript number would change
 * (past 2^53, `1.50`; a PreciseNumber, read off the request's bytes) is written into the path as
 * its own digits, which PostgreSQL reads as a numeric, and compared in TypeScript digit by digit
 * (lossless-json's compareNumber), so 2^53 + 1 never matches 2^53.
 */

export const FILTER_MAX_BYTES = 2048;
export const FILTER_MAX_DEPTH = 8;

export const FILTER_OPERATORS = [
  '$eq',
  '$neq',
  '$in',
  '$nin',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$exists',
  '$prefix',
  '$suffix',
  '$contains',
] as const;
export const FILTER_COMBINATORS = ['$and', '$or', '$not'] as const;
type Operator = (typeof FILTER_OPERATORS)[number];

/** A bad filter; the message names `filter` and the operator or path at fault. */
export class FilterError extends Error {
  constructor(message: string) {
    super(`filter: ${message}`);
    this.name = 'FilterError';
  }
}

export interface CompiledFilter {
  /** An SQL/JSON path predicate over the notification body, for jsonb_path_match. */
  jsonpath: string;
  /** Its variables ($v0, $v1, …): operands travel as values, never spliced into the path. */
  vars: Record<string, Scalar>;
  matches(body: unknown): boolean;
}

type Scalar = string | number | boolean | null | PreciseNumber;
type Json = Scalar | Json[] | { [key: string]: Json };
type Predicate = (body: unknown) => boolean;
interface Node {
  sql: string;
  test: Predicate;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PreciseNumber);
const isNumber = (v: unknown): v is number | PreciseNumber =>
  (typeof v === 'number' && isFinite(v)) || v instanceof PreciseNumber;
const isScalar = (v: unknown): v is Scalar =>
  v === null || ['string', 'boolean'].includes(typeof v) || isNumber(v);
/**
 * A value's SQL/JSON type. A body's number that jsonb records as a string of its text
 * (PreciseNumber.inJsonb) is a string there, so it is one here too.
 */
const typeOf = (v: unknown): string =>
  v === null
    ? 'null'
    : v instanceof PreciseNumber
      ? v.inJsonb === 'text'
        ? 'string'
        : 'number'
      : Array.isArray(v)
        ? 'array'
        : isObject(v)
          ? 'object'
          : typeof v;
/** A scalar as the comparisons take it: a number's text when it is a PreciseNumber. */
const plain = (v: unknown): unknown =>
  v instanceof PreciseNumber ? (v.inJsonb === 'text' ? v.text : v) : v;
const describe = (v: unknown): string => {
  const text = stringifyPrecise(v) ?? String(v);
  return text.length > 40 ? `${text.slice(0, 37)}…` : text;
};

const ROOT = 'the filter';

/**
 * What no jsonpath or jsonb can hold, in a key or a string of the filter: U+0000, and a
 * surrogate without its pair (no UTF-8 form). Null when there is none.
 */
function findBadText(value: unknown): string | null {
  const check = (text: string, what: string): string | null => {
    if (text.includes('\u0000')) return `${what} ${describe(text)} holds U+0000`;
    if (!isWellFormed(text)) return `${what} ${describe(text)} holds an unpaired surrogate`;
    return null;
  };
  if (typeof value === 'string') return check(value, 'the string');
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = findBadText(item);
      if (found !== null) return found;
    }
  } else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      const found = check(key, 'the key') ?? findBadText(item);
      if (found !== null) return found;
    }
  }
  return null;
}

/**
 * A number that no event's number can equal: one jsonb records as a string of its text
 * (PreciseNumber.inJsonb, `1e400`), which no numeric literal of a path could stand for either.
 */
function findUnmatchableNumber(value: unknown): string | null {
  // 1e400 as JSON.parse has read it, before the filter is read again off the bytes.
  if (typeof value === 'number' && !isFinite(value)) {
    return 'a number beyond the double range is too long to compare; give it as a string';
  }
  if (value instanceof PreciseNumber) {
    return value.inJsonb === 'text'
      ? `the number ${describe(value)} is too long to compare; give it as a string`
      : null;
  }
  for (const item of Array.isArray(value) ? value : isObject(value) ? Object.values(value) : []) {
    const found = findUnmatchableNumber(item);
    if (found !== null) return found;
  }
  return null;
}

function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (isObject(value)) return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

/** The values a dotted path reaches, in lax mode: each step goes through one level of array. */
function reach(body: unknown, path: string[]): unknown[] {
  let current: unknown[] = [body];
  for (const key of path) {
    const next: unknown[] = [];
    for (const value of current) {
      for (const item of Array.isArray(value) ? value : [value]) {
        if (isObject(item) && Object.prototype.hasOwnProperty.call(item, key)) {
          next.push(item[key]);
        }
      }
    }
    current = next;
  }
  return current;
}

/** What a filter expression (`? (…)`) looks at: the values, arrays opened one level. */
const candidates = (values: unknown[]): unknown[] =>
  values.flatMap((v) => (Array.isArray(v) ? (v as unknown[]) : [v]));

/**
 * Numbers compare by value, exactly (as PostgreSQL's numeric); strings by code point, as
 * PostgreSQL's jsonpath does (not by UTF-16 unit).
 */
function compare(a: unknown, b: unknown): number {
  if (isNumber(a)) return compareNumber(String(a), String(b));
  return Buffer.compare(Buffer.from(a as string, 'utf8'), Buffer.from(b as string, 'utf8'));
}

const same = (a: unknown, b: unknown): boolean =>
  isNumber(a) && isNumber(b) ? compare(a, b) === 0 : a === b;

/** An ARE regular expression that matches `text` literally. */
const regexLiteral = (text: string): string => text.replace(/[^A-Za-z0-9\u0080-\uffff]/g, '\\$&');

class Compiler {
  readonly vars: Record<string, Scalar> = {};

  /**
   * A number a JavaScript number would change goes into the path as its digits (a JSON number's
   * text is a jsonpath numeric literal), since filter_vars is written as JSON by JavaScript.
   */
  private variable(value: Scalar): string {
    if (value instanceof PreciseNumber) return value.text;
    const name = `v${Object.keys(this.vars).length}`;
    this.vars[name] = value;
    return `$${name}`;
  }

  filter(value: unknown, where: string): Node {
    if (!isObject(value)) {
      throw new FilterError(`${where} must be an object of paths and operators`);
    }
    // An empty filter matches everything; inside $and, $or or $not it has no jsonpath form
    // (a bare `true` is no predicate there) and says nothing a client would mean.
    if (where !== ROOT && Object.keys(value).length === 0) {
      throw new FilterError(`${where} is empty: give at least one path or $and, $or, $not`);
    }
    const parts = Object.entries(value).map(([key, operand]) =>
      key.startsWith('$') ? this.combinator(key, operand) : this.field(key, operand),
    );
    return all(parts);
  }

  private combinator(key: string, operand: unknown): Node {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(operand) || operand.length === 0) {
        throw new FilterError(`${key} needs a non-empty array of filters`);
      }
      const parts = operand.map((f, i) => this.filter(f, `${key}[${i}]`));
      return key === '$and' ? all(parts) : any(parts);
    }
    if (key === '$not') return not(this.filter(operand, '$not'));
    throw unknownOperator(key, 'at the top of a filter ($and, $or, $not, or a path)');
  }

  private field(key: string, operand: unknown): Node {
    const path = key.split('.');
    if (path.some((segment) => segment === '')) {
      throw new FilterError(`path ${describe(key)} has an empty segment`);
    }
    const at = `$.${path.map((segment) => JSON.stringify(segment)).join('.')}`;
    if (Array.isArray(operand)) {
      throw new FilterError(
        `${describe(key)} is compared with a list: use {"$in": […]} (or $contains)`,
      );
    }
    if (!isObject(operand)) return this.operator('$eq', operand, key, path, at);
    const entries = Object.entries(operand);
    if (entries.length === 0) throw new FilterError(`${describe(key)} has no operator`);
    return all(entries.map(([op, arg]) => this.operator(op, arg, key, path, at)));
  }

  private operator(op: string, arg: unknown, key: string, path: string[], at: string): Node {
    const values = (body: unknown) => reach(body, path);
    const anyValue = (guard: string, sqlTest: string, test: (v: unknown) => boolean): Node => ({
      sql: `exists(${at} ? (@.type() == "${guard}" && ${sqlTest}))`,
      test: (body) => candidates(values(body)).some((v) => typeOf(v) === guard && test(v)),
    });
    const equals = (value: Scalar): Node =>
      anyValue(typeOf(value), `@ == ${this.variable(value)}`, (v) => same(plain(v), value));
    const need = (what: string) =>
      new FilterError(`${op} of ${describe(key)} needs ${what}, got ${describe(arg)}`);

    switch (op as Operator) {
      case '$eq':
      case '$neq': {
        if (!isScalar(arg)) throw need('a string, number, boolean or null');
        return op === '$eq' ? equals(arg) : not(equals(arg));
      }
      case '$in':
      case '$nin': {
        if (!Array.isArray(arg) || arg.length === 0 || !arg.every(isScalar)) {
          throw need('a non-empty array of strings, numbers, booleans or nulls');
        }
        const some = any(arg.map(equals));
        return op === '$in' ? some : not(some);
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte': {
        if (typeof arg !== 'string' && !isNumber(arg)) throw need('a number or a string');
        const sign = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op as '$gt'];
        const holds = (c: number) =>
          op === '$gt' ? c > 0 : op === '$gte' ? c >= 0 : op === '$lt' ? c < 0 : c <= 0;
        return anyValue(typeOf(arg), `@ ${sign} ${this.variable(arg)}`, (v) =>
          holds(compare(plain(v), arg)),
        );
      }
      case '$exists': {
        if (typeof arg !== 'boolean') throw need('true or false');
        const exists: Node = {
          sql: `exists(${at})`,
          test: (body) => values(body).length > 0,
        };
        return arg ? exists : not(exists);
      }
      case '$prefix': {
        if (typeof arg !== 'string') throw need('a string');
        return anyValue('string', `@ starts with ${this.variable(arg)}`, (v) =>
          (v as string).startsWith(arg),
        );
      }
      case '$suffix': {
        if (typeof arg !== 'string') throw need('a string');
        return anyValue('string', `@ like_regex ${JSON.stringify(regexLiteral(arg) + '$')}`, (v) =>
          (v as string).endsWith(arg),
        );
      }
      case '$contains': {
        if (!isScalar(arg)) throw need('a string, number, boolean or null');
        // A string is a substring of a string value (or of an array's element); any other
        // operand is an element of an array value (or the value itself).
        if (typeof arg !== 'string') return equals(arg);
        return anyValue('string', `@ like_regex ${JSON.stringify(arg)} flag "q"`, (v) =>
          (v as string).includes(arg),
        );
      }
      default:
        throw unknownOperator(op, `on ${describe(key)} (one of ${FILTER_OPERATORS.join(', ')})`);
    }
  }
}

function unknownOperator(op: string, where: string): FilterError {
  return new FilterError(`unknown operator ${describe(op)} ${where}`);
}

function all(parts: Node[]): Node {
  if (parts.length === 0) return { sql: 'true', test: () => true };
  if (parts.length === 1) return parts[0];
  return {
    sql: `(${parts.map((p) => p.sql).join(' && ')})`,
    test: (body) => parts.every((p) => p.test(body)),
  };
}

function any(parts: Node[]): Node {
  if (parts.length === 1) return parts[0];
  return {
    sql: `(${parts.map((p) => p.sql).join(' || ')})`,
    test: (body) => parts.some((p) => p.test(body)),
  };
}

function not(part: Node): Node {
  return { sql: `!(${part.sql})`, test: (body) => !part.test(body) };
}

/**
 * Checks a filter as a client sent it and compiles it; throws FilterError naming what is
 * wrong. Size and depth are of the filter's JSON text as stored.
 */
export function compileFilter(filter: unknown): CompiledFilter {
  if (!isObject(filter)) throw new FilterError('must be an object (or null for none)');
  const bytes = Buffer.byteLength(stringifyPrecise(filter), 'utf8');
  if (bytes > FILTER_MAX_BYTES) {
    throw new FilterError(`is ${bytes} bytes of JSON, at most ${FILTER_MAX_BYTES} are allowed`);
  }
  if (depthOf(filter) > FILTER_MAX_DEPTH) {
    throw new FilterError(`is nested more than ${FILTER_MAX_DEPTH} levels deep`);
  }
  const badText = findBadText(filter) ?? findUnmatchableNumber(filter);
  if (badText !== null) throw new FilterError(badText);
  const compiler = new Compiler();
  const root = compiler.filter(filter as Json, ROOT);
  return { jsonpath: root.sql, vars: compiler.vars, matches: root.test };
}

/**
 * The filter of a create or PATCH body with its numbers as sent: Express's JSON.parse has
 * made 9007199254740993 into …992 by the time the DTO holds it, so the filter is read again
 * off the request's bytes (kept by the body parser) when they hold a number it may have
 * changed. `parsed` is the filter as the DTO holds it.
 */
export function filterAsSent(rawBody: Buffer | undefined, parsed: unknown): unknown {
  if (rawBody === undefined || !isObject(parsed)) return parsed;
  // A BOM is no part of the JSON text (body-parser skips it too).
  const text = rawBody.toString('utf8').replace(/^\uFEFF/, '');
  const body = parsePrecise(text);
  return isObject(body) && isObject(body.filter) ? body.filter : parsed;
}

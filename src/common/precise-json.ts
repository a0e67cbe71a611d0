import { parse as parseLossless } from 'lossless-json';
import { storableText } from './unicode';

/**
 * PostgreSQL's numeric, which jsonb stores numbers as, takes at most 16,383 digits after the
 * decimal point and 131,072 before it; a number past those is refused, and the whole insert
 * with it.
 */
const NUMERIC_MAX_FRACTION_DIGITS = 16_383;
const NUMERIC_MAX_INTEGER_DIGITS = 131_072;

/**
 * The most characters a number costs in the jsonb record beyond its own text. jsonb writes a
 * number in plain decimal (`1e15990` as 15,991 digits), so 16 KB of short exponents became
 * 32 MB there and in everything that read it; a number whose plain form is longer than its
 * own text and this many characters is recorded as a string of its text instead
 * (docs/operations.md, "Platform events are never refused").
 */
export const JSONB_NUMBER_MAX_CHARS = 32;

const NUMBER_PARTS = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * A JSON number that a JavaScript number would change: beyond 2^53 (2^63, a 64-bit id), beyond
 * the double range (1e400, which JSON.parse makes Infinity and JSON.stringify then `null`),
 * with more digits than a double keeps, or spelt otherwise than JavaScript writes it (`1.50`,
 * `1E2`, `-0`, `1e-7`). It keeps the number's own text, and serialises as it: through
 * stringifyPrecise exactly, through a plain JSON.stringify as a marked string (never as a
 * silent `null`).
 */
export class PreciseNumber {
  constructor(readonly text: string) {}

  toJSON(): string {
    return `${MARK}${this.text}`;
  }

  toString(): string {
    return this.text;
  }

  valueOf(): number {
    return Number(this.text);
  }

  /**
   * How jsonb records it: as itself (a numeric) when numeric holds it and writes it back as its
   * own text, `respelt` when numeric holds it at a bounded cost but writes it otherwise (`1E2`
   * as `100`, `-0` as `0`: the same value, so filters still compare it), `text` when it would
   * not fit numeric or would grow past JSONB_NUMBER_MAX_CHARS (then a string of its text).
   */
  get inJsonb(): 'itself' | 'respelt' | 'text' {
    const parts = NUMBER_PARTS.exec(this.text);
    if (parts === null) return 'text';
    const [, sign, integer, fraction = '', exponentText] = parts;
    const exponent = exponentText === undefined ? 0 : Number(exponentText);
    // Digits numeric writes on each side of the point (leading zeros of the integer aside).
    const integerDigits = Math.max(1, integer.length + exponent);
    const fractionDigits = Math.max(0, fraction.length - exponent);
    if (
      fractionDigits > NUMERIC_MAX_FRACTION_DIGITS ||
      integerDigits > NUMERIC_MAX_INTEGER_DIGITS
    ) {
      return 'text';
    }
    const plainLength = sign.length + integerDigits + (fractionDigits > 0 ? fractionDigits + 1 : 0);
    if (plainLength > Math.max(this.text.length, JSONB_NUMBER_MAX_CHARS)) return 'text';
    const negativeZero = sign === '-' && !/[1-9]/.test(integer + fraction);
    return exponentText === undefined && !negativeZero ? 'itself' : 'respelt';
  }
}

/** How toJSON() spells a PreciseNumber, replaced by its text in stringifyPrecise. */
const MARK = '\u0001precise-number:';
// The marked string as JSON.stringify writes it (U+0001 escaped), holding a valid JSON number.
const MARKED = /"\\u0001precise-number:(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)"/g;

/** Whether a number JSON.parse made from some text may not be that text's number. */
const mayBeChanged = (n: number): boolean =>
  !Number.isFinite(n) || (Number.isInteger(n) && !Number.isSafeInteger(n));

/**
 * Whether a parsed JSON value holds a number that JSON.parse may have changed (past 2^53,
 * past the double range), or a PreciseNumber. A walk of the parsed value (with a stack, as
 * nesting is not yet checked).
 */
export function holdsImpreciseNumber(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'number') {
      if (mayBeChanged(v)) return true;
    } else if (v instanceof PreciseNumber) {
      return true;
    } else if (typeof v === 'object' && v !== null) {
      for (const child of Array.isArray(v) ? v : Object.values(v)) {
        if (typeof child === 'number' || (typeof child === 'object' && child !== null)) {
          stack.push(child);
        }
      }
    }
  }
  return false;
}

/**
 * Whether a text may hold a number that JSON.parse would change: a number token (after `:`,
 * `,` or `[`, which in a string only costs the exact parse) that JavaScript does not write
 * back as it came: an exponent, a negative zero, a fraction ending in 0, 16 or more digits
 * (past 15 significant digits a double rounds; 1e21 and up it writes with an exponent), or
 * 0.000000… (below 1e-6 it writes an exponent). A token with none of these has at most 15
 * significant digits and no trailing zero, which a double holds and JavaScript writes back
 * digit for digit. Anchored on the token's start, ids such as `55FF8A1B-0000-4E3F` do not
 * send the event through the slower exact parse.
 */
const MAY_CHANGE_NUMBER =
  /[:,[]\s*(?:-?[\d.]+[eE]|-0(?:\.0+)?(?![\d.])|-?\d+\.\d*0(?!\d)|-?[\d.]{16}|-?0\.000000)/;

/**
 * A number token's value, kept as a JavaScript number only when it writes back as it came and
 * jsonb writes it as it came too (so never one with an exponent: `1e-7` is JavaScript's own
 * spelling, but jsonb writes 0.0000001).
 */
const numberOf = (text: string): number | PreciseNumber => {
  const n = Number(text);
  return String(n) === text && !/[eE]/.test(text) ? n : new PreciseNumber(text);
};

/**
 * JSON.parse, except that numbers a JavaScript number would change (PreciseNumber's list)
 * become PreciseNumbers that keep their own text. Texts without such a number (nearly all)
 * are parsed by JSON.parse alone.
 */
export function parsePrecise(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!MAY_CHANGE_NUMBER.test(text)) return value;
  try {
    return parseLossless(text, null, numberOf);
  } catch {
    // lossless-json refuses what JSON.parse takes (a key repeated with another value): the
    // numbers stay as JSON.parse read them; the caller keeps the bytes beside.
    return value;
  }
}

/** JSON.stringify that writes PreciseNumbers as their own text; `space` indents as it does. */
export function stringifyPrecise(value: unknown, space?: number): string {
  const json = JSON.stringify(value, null, space);
  return json.includes('\\u0001precise-number:') ? json.replace(MARKED, '$1') : json;
}

/** Defined, not assigned: a "__proto__" key is data here, as JSON.parse makes it. */
function setData(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * A copy of a parsed JSON value that PostgreSQL's jsonb can hold at a bounded cost: text without
 * U+0000 or unpaired surrogates (U+FFFD instead, keys too), and PreciseNumbers that numeric
 * would refuse or grow (PreciseNumber.inJsonb) as strings of their text. `changed` says whether
 * jsonb's text of the copy is not the value's own: something replaced, or a number jsonb
 * writes otherwise (`1E2` as `100`); the caller then keeps the exact bytes beside it.
 */
export function storableCopy(value: unknown): { value: unknown; changed: boolean } {
  let changed = false;
  const text = (s: string) => {
    const kept = storableText(s);
    if (kept !== s) changed = true;
    return kept;
  };
  const copy = (v: unknown): unknown => {
    if (typeof v === 'string') return text(v);
    if (v instanceof PreciseNumber) {
      const kept = v.inJsonb;
      if (kept !== 'itself') changed = true;
      return kept === 'text' ? v.text : v;
    }
    if (Array.isArray(v)) return v.map(copy);
    if (typeof v === 'object' && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(v)) {
        setData(out, text(key), copy(item));
      }
      return out;
    }
    return v;
  };
  const result = copy(value);
  return { value: result, changed };
}

const NUMBER_TEXT = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * The inverse of a plain JSON.stringify of PreciseNumbers: the marked strings of a value read
 * back from JSON become PreciseNumbers again. For a jsonb column that TypeORM writes with
 * JSON.stringify (a webhook's filter), which cannot write a number as its own text.
 */
export function revivePrecise(value: unknown): unknown {
  if (typeof value === 'string') {
    const text = value.startsWith(MARK) ? value.slice(MARK.length) : null;
    return text !== null && NUMBER_TEXT.test(text) ? new PreciseNumber(text) : value;
  }
  if (Array.isArray(value)) return value.map(revivePrecise);
  if (typeof value === 'object' && value !== null) {
    const revived: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      setData(revived, key, revivePrecise(item));
    }
    return revived;
  }
  return value;
}

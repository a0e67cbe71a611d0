import { isSafeNumber, parse as parseLossless } from 'lossless-json';
import { storableText } from './unicode';

/**
 * A JSON number that a JavaScript number would change: beyond 2^53 (2^63, a 64-bit id), beyond
 * the double range (1e400, which JSON.parse makes Infinity and JSON.stringify then `null`), or
 * with more digits than a double keeps. It keeps the number's own text, and serialises as it:
 * through stringifyPrecise exactly, through a plain JSON.stringify as a marked string (never as
 * a silent `null`).
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
   * Whether PostgreSQL's numeric (and so jsonb) holds it: up to 131,072 digits before the
   * decimal point and 16,383 after. Kept well inside that.
   */
  get storable(): boolean {
    const exponent = /e([+-]?\d+)$/i.exec(this.text);
    const power = exponent === null ? 0 : Math.abs(Number(exponent[1]));
    return power + this.text.length < 16_000;
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
 * nesting is not yet checked) costs far less than a pattern over the text: `\d{16}` alone
 * cost most of a JSON.parse on every event.
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
 * JSON.parse, except that numbers a JavaScript number would change become PreciseNumbers.
 * Texts without such a number (nearly all) are parsed by JSON.parse alone.
 */
export function parsePrecise(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!holdsImpreciseNumber(value)) return value;
  try {
    return parseLossless(text, null, (number) =>
      isSafeNumber(number) ? Number(number) : new PreciseNumber(number),
    );
  } catch {
    // lossless-json refuses what JSON.parse takes (a key repeated with another value): the
    // numbers stay as JSON.parse read them; the caller keeps the bytes beside.
    return value;
  }
}

/** JSON.stringify that writes PreciseNumbers as their own text. */
export function stringifyPrecise(value: unknown): string {
  const json = JSON.stringify(value);
  return json.includes('\\u0001precise-number:') ? json.replace(MARKED, '$1') : json;
}

/**
 * A copy of a parsed JSON value that PostgreSQL's jsonb can hold: text without U+0000 or
 * unpaired surrogates (U+FFFD instead, keys too), and PreciseNumbers beyond numeric's range as
 * strings of their text. `changed` says whether anything was replaced.
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
      if (v.storable) return v;
      changed = true;
      return v.text;
    }
    if (Array.isArray(v)) return v.map(copy);
    if (typeof v === 'object' && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(v)) {
        // Defined, not assigned: a "__proto__" key is data here.
        Object.defineProperty(out, text(key), {
          value: copy(item),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return v;
  };
  const result = copy(value);
  return { value: result, changed };
}

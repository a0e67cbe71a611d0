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

/**
 * What in a JSON text may be a number a JavaScript number would change: 16 or more digits in a
 * row, or an exponent of 3 digits. Cheap, and wrong only the safe way (a long digit run in a
 * string costs a second, exact parse).
 */
const MAY_BE_IMPRECISE = /\d{16}|[eE][+-]?\d{3}/;

/**
 * JSON.parse, except that numbers a JavaScript number would change become PreciseNumbers.
 * Texts without such a number (nearly all) are parsed by JSON.parse alone.
 */
export function parsePrecise(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!MAY_BE_IMPRECISE.test(text)) return value;
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

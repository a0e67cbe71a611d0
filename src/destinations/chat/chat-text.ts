/** The character that ends a text cut to a limit (docs/destinations.md#chat-tools). */
export const ELLIPSIS = '…';

/**
 * `text` at most `max` UTF-16 units (never more characters than the tools count), ending in `…`
 * when cut. The cut never splits a surrogate pair, nor an escape that `escaped` recognises at
 * the end (an `&amp;`, a `\*`): cut text stays valid for its tool.
 */
export function cut(text: string, max: number, escaped: RegExp | null = null): string {
  if (text.length <= max) return text;
  let kept = text.slice(0, Math.max(0, max - ELLIPSIS.length));
  if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
  if (escaped !== null) kept = kept.replace(escaped, '');
  return kept + ELLIPSIS;
}

/** Escapes a text for a format whose markup characters a backslash makes literal. */
export const backslashEscape =
  (special: RegExp) =>
  (text: string): string =>
    text.replace(special, (c) => `\\${c}`);

/** A partial backslash escape at the end of a cut text: an odd run of backslashes. */
export const TRAILING_BACKSLASH = /(?<!\\)(?:\\\\)*\\$/;

/** Omitted parts as the last line says them. */
export const moreLine = (omitted: number): string => `${ELLIPSIS} and ${omitted} more not shown`;

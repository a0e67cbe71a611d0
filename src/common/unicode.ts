/** A UTF-16 surrogate without its pair: text with one has no UTF-8 form. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** Whether the text can be written as UTF-8 as it is (String.prototype.isWellFormed). */
export const isWellFormed = (text: string): boolean => !LONE_SURROGATE.test(text);

/**
 * The text as PostgreSQL's text and jsonb can hold it: U+0000 (which neither holds) and
 * unpaired surrogates (which have no UTF-8 form) become U+FFFD; anything else is kept.
 */
export function storableText(text: string): string {
  const kept = text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
  return isWellFormed(kept) ? kept : kept.replace(LONE_SURROGATES, '\uFFFD');
}

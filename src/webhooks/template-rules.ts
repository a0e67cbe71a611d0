import jsonata from 'jsonata';

/** A webhook's template is at most this many bytes of UTF-8 (docs/templates.md). */
export const TEMPLATE_MAX_BYTES = 8 * 1024;
/** A template's output, as JSON, is at most this many bytes. */
export const TEMPLATE_OUTPUT_MAX_BYTES = 256 * 1024;

/** A JSONata error as the library throws it: a code, a message, often a position. */
interface JsonataError {
  code?: string;
  message?: string;
  position?: number;
  token?: string;
}

/** One line for a 400 or a delivery's error: the library's message and where it points. */
export function describeJsonataError(error: unknown): string {
  const e = error as JsonataError;
  const message = typeof e?.message === 'string' ? e.message : String(error);
  const where = typeof e?.position === 'number' ? ` at position ${e.position}` : '';
  return `${message}${where}${e?.code ? ` (${e.code})` : ''}`;
}

/**
 * Why `template` cannot be a webhook's template, naming `field`, or null. Parsing is linear in
 * the text, which is at most 8 KiB: safe in a request. Evaluating is not, and happens within
 * bounds (shaping/inline-templates.ts, shaping/template-runner.ts).
 */
export function templateProblem(template: unknown, field = 'template'): string | null {
  if (typeof template !== 'string')
    return `${field} must be a JSONata expression (a string) or null`;
  if (template.trim() === '') return `${field} must not be empty (null removes it)`;
  const bytes = Buffer.byteLength(template, 'utf8');
  if (bytes > TEMPLATE_MAX_BYTES) {
    return `${field} is ${bytes} bytes; at most ${TEMPLATE_MAX_BYTES} are allowed`;
  }
  try {
    jsonata(template);
  } catch (error) {
    return `${field} is not a valid JSONata expression: ${describeJsonataError(error)}`;
  }
  return null;
}

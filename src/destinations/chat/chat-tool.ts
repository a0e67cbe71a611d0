import type { ChatSummary } from './chat-summary';
import { summarize } from './chat-summary';

/** What a chat tool's answer to an attempt says beyond its status. */
export interface ChatAnswer {
  /**
   * Why the webhook is gone for good, in the tool's own words as the delivery log records them
   * (the webhook is then disabled as a 410 disables it); null when it is not.
   */
  gone: string | null;
  /** How long to wait before the next attempt, in seconds, when the body says so. */
  retryAfter: string | null;
}

/**
 * What a chat destination type knows of its tool (docs/destinations.md#chat-tools): its hosts,
 * its built-in message, the limits by which it refuses a message, and how its answers read.
 */
export interface ChatTool {
  /** Why the tool's incoming webhooks never live at `url` (the `url` field's 400), or null. */
  urlProblem(url: URL): string | null;
  /** The built-in message of a summary, every text escaped and cut to the tool's limits. */
  build(summary: ChatSummary, omitted: number): object;
  /** Why the tool would refuse `message` for its shape or size, or null. */
  refusal(message: unknown): string | null;
  /** Texts in `message` that would notify people (the render endpoint's warnings). */
  mentions(message: unknown): string[];
  /** What the answer says beyond its status: `status`, and its body's start. */
  answer(status: number, body: string): ChatAnswer;
}

/**
 * The tool's built-in message for a notification body: the summary built, and, while the tool
 * would still refuse it for its size, built again with its last link or fact left out (the last
 * line then says how many), so that a built-in message is never refused.
 */
export function builtInMessage(tool: ChatTool, body: unknown): object {
  const full = summarize(body);
  const summary = { ...full, facts: [...full.facts], links: [...full.links] };
  let omitted = 0;
  for (;;) {
    const message = tool.build(summary, omitted);
    if (tool.refusal(message) === null) return message;
    if (summary.links.length > 0) summary.links.pop();
    else if (summary.facts.length > 0) summary.facts.pop();
    else return message;
    omitted += 1;
  }
}

/** Every string in a JSON value, depth first (for the mentions a message holds). */
export function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) stringsOf(v, out);
  }
  return out;
}

/** Whether `host` is `domain` or one of its subdomains. */
export const underDomain = (host: string, domain: string): boolean =>
  host === domain || host.endsWith(`.${domain}`);

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The matches of `pattern` (global) in every string of `message`, each once. */
export function matchesIn(message: unknown, pattern: RegExp): string[] {
  const found = new Set<string>();
  for (const text of stringsOf(message)) for (const m of text.matchAll(pattern)) found.add(m[0]);
  return [...found];
}

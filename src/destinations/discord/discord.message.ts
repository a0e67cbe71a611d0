import type { ChatSummary } from '../chat/chat-summary';
import { ChatAnswer, ChatTool, isObject, matchesIn, underDomain } from '../chat/chat-tool';
import { TRAILING_BACKSLASH, backslashEscape, cut, moreLine } from '../chat/chat-text';

/** Discord's limits (docs/destination-discord.md#limits). */
export const DISCORD_LIMITS = {
  content: 2000,
  embeds: 10,
  embedTotal: 6000,
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footer: 2048,
  author: 256,
} as const;

/**
 * Markdown made literal: emphasis, code, quotes, headings, lists, masked links, and the `<…>`
 * of mentions, channels and timestamps. `@` too, though `allowed_mentions` already keeps
 * `@everyone` from notifying anyone.
 */
export const escapeDiscord = backslashEscape(/[\\*_~`|>#\-[\]()<@]/g);

const cutDiscord = (text: string, max: number): string =>
  cut(escapeDiscord(text), max, TRAILING_BACKSLASH);

const L = DISCORD_LIMITS;

/** Characters of an embed that count towards the 6,000 of a message. */
function embedChars(embed: Record<string, unknown>): number {
  const len = (v: unknown) => (typeof v === 'string' ? v.length : 0);
  const fields = Array.isArray(embed.fields) ? embed.fields : [];
  return (
    len(embed.title) +
    len(embed.description) +
    len(isObject(embed.footer) ? embed.footer.text : undefined) +
    len(isObject(embed.author) ? embed.author.name : undefined) +
    fields.reduce<number>((n, f) => n + (isObject(f) ? len(f.name) + len(f.value) : 0), 0)
  );
}

/** A masked link: label escaped, the URL's `(`, `)` and spaces percent-encoded. */
const link = (label: string, url: string) =>
  `[${cutDiscord(label, 200)}](${url.replace(/[()\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)})`;

export const discordTool: ChatTool = {
  urlProblem(url) {
    const hostOk = ['discord.com', 'discordapp.com'].some((d) => underDomain(url.hostname, d));
    return url.protocol === 'https:' && hostOk && url.pathname.startsWith('/api/webhooks/')
      ? null
      : 'url must be a Discord webhook, https://discord.com/api/webhooks/… (or a host of CHAT_EXTRA_HOSTS)';
  },

  build(summary: ChatSummary, omitted: number) {
    const lines = summary.links.map((l) => link(l.label, l.url));
    if (omitted > 0) lines.push(moreLine(omitted));
    let description = '';
    for (const [i, line] of lines.entries()) {
      const next = description === '' ? line : `${description}\n${line}`;
      if (next.length > L.description) {
        description = `${description}\n${moreLine(lines.length - i)}`;
        break;
      }
      description = next;
    }
    const embed: Record<string, unknown> = {
      title: cutDiscord(summary.title, L.title),
      ...(description !== '' && { description }),
      fields: summary.facts.slice(0, L.fields).map((f) => ({
        name: cutDiscord(f.name, L.fieldName),
        value: cutDiscord(f.value, L.fieldValue),
      })),
    };
    return {
      content: cutDiscord(summary.title, L.content),
      embeds: [embed],
      allowed_mentions: { parse: [] },
    };
  },

  refusal(message) {
    if (!isObject(message)) return 'a Discord message is a JSON object';
    const { content, embeds } = message;
    if (content !== undefined && typeof content !== 'string') return '`content` must be a string';
    if (embeds !== undefined && !Array.isArray(embeds)) return '`embeds` must be an array';
    const hasContent = typeof content === 'string' && content !== '';
    if (!hasContent && (!Array.isArray(embeds) || embeds.length === 0)) {
      return 'a Discord message needs `content` or `embeds` (Cannot send an empty message)';
    }
    if (typeof content === 'string' && content.length > L.content) {
      return `\`content\` has ${content.length} characters; Discord takes at most ${L.content}`;
    }
    if (!Array.isArray(embeds)) return null;
    if (embeds.length > L.embeds)
      return `${embeds.length} embeds; Discord takes at most ${L.embeds}`;
    let total = 0;
    for (const [i, embed] of embeds.entries()) {
      if (!isObject(embed)) return `embeds[${i}] must be an object`;
      const over = (what: string, v: unknown, max: number) =>
        typeof v === 'string' && v.length > max
          ? `embeds[${i}].${what} has ${v.length} characters; Discord takes at most ${max}`
          : null;
      const fields = Array.isArray(embed.fields) ? embed.fields : [];
      const problem =
        over('title', embed.title, L.title) ??
        over('description', embed.description, L.description) ??
        over('footer.text', isObject(embed.footer) ? embed.footer.text : undefined, L.footer) ??
        over('author.name', isObject(embed.author) ? embed.author.name : undefined, L.author) ??
        (fields.length > L.fields
          ? `embeds[${i}] has ${fields.length} fields; Discord takes at most ${L.fields}`
          : null) ??
        fields
          .map((f: unknown, j: number) =>
            !isObject(f) ||
            typeof f.name !== 'string' ||
            f.name === '' ||
            typeof f.value !== 'string' ||
            f.value === ''
              ? `embeds[${i}].fields[${j}] needs a non-empty \`name\` and \`value\``
              : (over(`fields[${j}].name`, f.name, L.fieldName) ??
                over(`fields[${j}].value`, f.value, L.fieldValue)),
          )
          .find((p: string | null) => p !== null) ??
        null;
      if (problem !== null) return problem;
      total += embedChars(embed);
    }
    return total > L.embedTotal
      ? `the embeds have ${total} characters in all; Discord takes at most ${L.embedTotal}`
      : null;
  },

  mentions(message) {
    const parse =
      isObject(message) && isObject(message.allowed_mentions)
        ? message.allowed_mentions.parse
        : undefined;
    if (Array.isArray(parse) && parse.length === 0) return [];
    return matchesIn(message, /(?<!\\)@(?:everyone|here)|<@[!&]?\d+>/g);
  },

  answer(status: number, body: string): ChatAnswer {
    let retryAfter: string | null = null;
    if (status === 429) {
      try {
        const seconds = (JSON.parse(body) as { retry_after?: unknown }).retry_after;
        // Retry-After is whole seconds; Discord's is fractional: round up, never down.
        if (typeof seconds === 'number' && seconds >= 0) retryAfter = String(Math.ceil(seconds));
      } catch {
        // Not JSON (a proxy's page): the Retry-After header, if any, stands alone.
        retryAfter = null;
      }
    }
    return { gone: status === 410 ? 'Discord answered 410 Gone' : null, retryAfter };
  },
};

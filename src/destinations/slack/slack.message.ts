import type { ChatSummary } from '../chat/chat-summary';
import { ChatAnswer, ChatTool, isObject, matchesIn } from '../chat/chat-tool';
import { cut, moreLine } from '../chat/chat-text';

/** Slack's limits (docs/destination-slack.md#limits). */
export const SLACK_MAX_BLOCKS = 50;
export const SLACK_MAX_SECTION_TEXT = 3000;
/** Slack cuts a message's top-level `text` here. */
export const SLACK_MAX_TEXT = 40000;
/** A fact's value is cut here so that several fit in one section. */
const FACT_MAX = 1000;

/**
 * mrkdwn's three special characters (Slack's "escaping text"): with them escaped, `<!channel>`,
 * `<@U…>` and `<https://…|link>` are text, never a mention or a link.
 */
export const escapeSlack = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** An entity cut in two at the end of a cut text. */
const PARTIAL_ENTITY = /&[a-z]{0,3}$/;
const cutSlack = (text: string, max: number): string => cut(escapeSlack(text), max, PARTIAL_ENTITY);

/** A URL inside `<…|…>`: the characters that would end it or the label percent-encoded. */
const linkUrl = (url: string): string =>
  url.replace(
    /[|<>&\s]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );

const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });

/** Lines grouped into as few sections as hold them, each at most Slack's limit. */
function sections(lines: string[]): ReturnType<typeof section>[] {
  const out: string[] = [];
  for (const line of lines) {
    const last = out.length - 1;
    if (last >= 0 && out[last].length + 1 + line.length <= SLACK_MAX_SECTION_TEXT) {
      out[last] += `\n${line}`;
    } else out.push(cut(line, SLACK_MAX_SECTION_TEXT));
  }
  return out.map(section);
}

export const slackTool: ChatTool = {
  urlProblem: (url) =>
    url.protocol === 'https:' && url.hostname === 'hooks.slack.com'
      ? null
      : 'url must be a Slack incoming webhook on https://hooks.slack.com (or a host of CHAT_EXTRA_HOSTS)',

  build(summary: ChatSummary, omitted: number) {
    const title = cutSlack(summary.title, SLACK_MAX_SECTION_TEXT - 2);
    const lines = [
      ...summary.facts.map((f) => `*${escapeSlack(f.name)}:* ${cutSlack(f.value, FACT_MAX)}`),
      ...summary.links.map((l) => `<${linkUrl(l.url)}|${cutSlack(l.label, 200)}>`),
      ...(omitted > 0 ? [moreLine(omitted)] : []),
    ];
    const blocks = [section(`*${title}*`), ...sections(lines)];
    if (blocks.length > SLACK_MAX_BLOCKS) {
      blocks.splice(
        SLACK_MAX_BLOCKS - 1,
        Infinity,
        section(moreLine(blocks.length - SLACK_MAX_BLOCKS + 1)),
      );
    }
    return { text: title, blocks };
  },

  refusal(message) {
    if (!isObject(message)) return 'a Slack message is a JSON object';
    const { text, blocks } = message;
    if (text !== undefined && typeof text !== 'string') return '`text` must be a string';
    if (blocks !== undefined && !Array.isArray(blocks)) return '`blocks` must be an array';
    if (
      (typeof text !== 'string' || text === '') &&
      (!Array.isArray(blocks) || blocks.length === 0)
    ) {
      return 'a Slack message needs a non-empty `text` or `blocks` (invalid_payload)';
    }
    if (typeof text === 'string' && text.length > SLACK_MAX_TEXT) {
      return `\`text\` has ${text.length} characters; Slack takes at most ${SLACK_MAX_TEXT}`;
    }
    if (Array.isArray(blocks)) {
      if (blocks.length > SLACK_MAX_BLOCKS) {
        return `${blocks.length} blocks; Slack takes at most ${SLACK_MAX_BLOCKS} (invalid_blocks)`;
      }
      for (const [i, block] of blocks.entries()) {
        if (!isObject(block) || typeof block.type !== 'string') {
          return `blocks[${i}] must be an object with a \`type\` (invalid_blocks)`;
        }
        const t = isObject(block.text) ? block.text.text : undefined;
        if (
          block.type === 'section' &&
          typeof t === 'string' &&
          t.length > SLACK_MAX_SECTION_TEXT
        ) {
          return `blocks[${i}]'s text has ${t.length} characters; Slack takes at most ${SLACK_MAX_SECTION_TEXT} (invalid_blocks)`;
        }
      }
    }
    return null;
  },

  mentions: (message) =>
    matchesIn(message, /<!(?:channel|here|everyone)[^>]*>|<!subteam\^[^>]*>|<@[A-Z0-9]+>/g),

  answer(status: number, body: string): ChatAnswer {
    // A webhook removed (404 no_service) or its channel archived (410): gone for good, each
    // said as it happened rather than as a bare 410 (docs/destination-slack.md).
    const said = body.trim();
    if (status === 404 && said.startsWith('no_service')) {
      return { gone: 'Slack answered 404 no_service: the webhook was removed', retryAfter: null };
    }
    if (status !== 410) return { gone: null, retryAfter: null };
    return {
      gone: said.startsWith('channel_is_archived')
        ? 'Slack answered 410 channel_is_archived: its channel was archived'
        : 'Slack answered 410 Gone',
      retryAfter: null,
    };
  },
};

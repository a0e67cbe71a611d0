import type { ChatSummary } from '../chat/chat-summary';
import { ChatAnswer, ChatTool, isObject, matchesIn, underDomain } from '../chat/chat-tool';
import { TRAILING_BACKSLASH, backslashEscape, cut, moreLine } from '../chat/chat-text';

/** A Teams message's size, the JSON in bytes (docs/destination-teams.md#limits). */
export const TEAMS_MAX_BYTES = 28_000;
const TEXT_MAX = 1000;
export const ADAPTIVE_CARD = 'application/vnd.microsoft.card.adaptive';

/** The Markdown a TextBlock renders made literal, and `<` so that `<at>` is never a mention. */
export const escapeTeams = backslashEscape(/[\\*_~`>#\-[\]()<+!]/g);
const cutTeams = (text: string, max: number) => cut(escapeTeams(text), max, TRAILING_BACKSLASH);

const WORKFLOW_DOMAINS = ['logic.azure.com', 'powerautomate.com', 'powerplatform.com'];

const text = (value: string, extra: Record<string, unknown> = {}) => ({
  type: 'TextBlock',
  text: value,
  wrap: true,
  ...extra,
});

export const teamsTool: ChatTool = {
  urlProblem(url) {
    const host = url.hostname;
    const ok = [...WORKFLOW_DOMAINS, 'webhook.office.com'].some(
      (d) => host !== d && underDomain(host, d),
    );
    return url.protocol === 'https:' && ok
      ? null
      : 'url must be a Teams Workflows address on *.logic.azure.com, *.powerautomate.com or ' +
          '*.powerplatform.com, or a legacy *.webhook.office.com one (or a host of CHAT_EXTRA_HOSTS)';
  },

  build(summary: ChatSummary, omitted: number) {
    const body: object[] = [
      text(cutTeams(summary.title, TEXT_MAX), { weight: 'Bolder', size: 'Medium' }),
    ];
    if (summary.facts.length > 0) {
      body.push({
        type: 'FactSet',
        facts: summary.facts.map((f) => ({
          title: cutTeams(f.name, 200),
          value: cutTeams(f.value, TEXT_MAX),
        })),
      });
    }
    for (const l of summary.links) {
      body.push(
        text(`[${cutTeams(l.label, 200)}](${l.url.replace(/[()\s]/g, encodeURIComponent)})`),
      );
    }
    if (omitted > 0) body.push(text(moreLine(omitted), { isSubtle: true }));
    return {
      type: 'message',
      attachments: [
        {
          contentType: ADAPTIVE_CARD,
          contentUrl: null,
          content: {
            $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
            type: 'AdaptiveCard',
            version: '1.4',
            body,
          },
        },
      ],
    };
  },

  refusal(message) {
    if (!isObject(message) || message.type !== 'message') {
      return 'a Teams message is an object with "type": "message"';
    }
    const attachments = message.attachments;
    if (!Array.isArray(attachments) || attachments.length === 0) {
      return 'a Teams message needs `attachments` holding an Adaptive Card';
    }
    for (const [i, a] of attachments.entries()) {
      if (!isObject(a) || a.contentType !== ADAPTIVE_CARD) {
        return `attachments[${i}].contentType must be "${ADAPTIVE_CARD}"`;
      }
      if (
        !isObject(a.content) ||
        a.content.type !== 'AdaptiveCard' ||
        !Array.isArray(a.content.body)
      ) {
        return `attachments[${i}].content must be an AdaptiveCard with a \`body\` array`;
      }
    }
    const bytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
    return bytes > TEAMS_MAX_BYTES
      ? `the message is ${bytes} bytes; Teams takes at most ${TEAMS_MAX_BYTES}`
      : null;
  },

  mentions: (message) => matchesIn(message, /<at>[^<]*<\/at>/gi),

  answer: (status: number): ChatAnswer => ({
    gone: status === 410 ? 'Teams answered 410 Gone' : null,
    retryAfter: null,
  }),
};

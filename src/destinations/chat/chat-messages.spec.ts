import { EVENT_EXAMPLES } from '../../webhooks/event-examples';
import { discordTool, escapeDiscord } from '../discord/discord.message';
import { escapeSlack, slackTool } from '../slack/slack.message';
import { TEAMS_MAX_BYTES, escapeTeams, teamsTool } from '../teams/teams.message';
import { cut } from './chat-text';
import { ChatTool, builtInMessage, stringsOf } from './chat-tool';

const TOOLS: [string, ChatTool][] = [
  ['slack', slackTool],
  ['teams', teamsTool],
  ['discord', discordTool],
];

const started = (topic: string, extra: object = {}) => ({
  ...EVENT_EXAMPLES['job.started'],
  data: { ...(EVENT_EXAMPLES['job.started'].data as object), topic, ...extra },
});

describe('chat text', () => {
  it('cuts to the limit, ending in …, never inside a surrogate pair or an escape', () => {
    expect(cut('abcdef', 6)).toBe('abcdef');
    expect(cut('abcdefg', 6)).toBe('abcde…');
    expect(cut('abcd😀xyz', 6)).toBe('abcd…');
    expect(cut(escapeSlack('abc<def'), 6, /&[a-z]{0,3}$/)).toBe('abc…');
  });

  it('escapes what would notify or mark up', () => {
    expect(escapeSlack('<!channel> & <@U123>')).toBe('&lt;!channel&gt; &amp; &lt;@U123&gt;');
    expect(escapeDiscord('@everyone *bold* [x](http://e)')).toBe(
      '\\@everyone \\*bold\\* \\[x\\]\\(http://e\\)',
    );
    expect(escapeTeams('**b** <at>x</at>')).toBe('\\*\\*b\\*\\* \\<at\\>x\\</at\\>');
  });
});

/**
 * What a built-in message names of each kind (docs/destinations.md#chat-tools): the meeting's
 * topic and start time, the participant, the failed operation's reason, the operational
 * event's webhook or account, the platform event and its object.
 */
const SAYS: Record<string, string[]> = {
  'job.started': ['Quarterly all', '2026-01-01T10:00:00Z'],
  'job.completed': ['Quarterly all', '2026-01-01T10:00:00Z'],
  'follower.gained': ['Jill Chill', 'Quarterly all'],
  'follower.lost': ['Jill Chill', 'Quarterly all'],
  'operation.failed': ['Quarterly all', 'the platform answered 404 for every file'],
  'meeting.attendance': ['Onboarding training', 'Jill Chill'],
  'zoom.*': ['meeting.created', 'Quarterly all'],
  'bridge.webhook.disabled': ['9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d'],
  'bridge.delivery.failed': ['9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d', 'job.started'],
  'bridge.account.disconnected': ['AbCdEfGhIjKlMnOp'],
  'bridge.account.deauthorized': ['AbCdEfGhIjKlMnOp'],
};

describe.each(TOOLS)('the %s built-in messages', (_type, tool) => {
  it.each(Object.keys(EVENT_EXAMPLES))(
    'says what happened for %s, in a message the tool takes',
    (kind) => {
      const message = builtInMessage(tool, EVENT_EXAMPLES[kind]);
      expect(tool.refusal(message)).toBeNull();
      expect(tool.mentions(message)).toEqual([]);
      const text = stringsOf(message).join('\n');
      if (kind === 'operation.complete') expect(text).toContain('/f1a2b3c4/download');
      if (kind.startsWith('job.')) expect(text).toContain('Quarterly all');
      if (kind === 'webhook.test') expect(text).toMatch(/test/i);
      // As a reader sees it: Discord's and Teams' Markdown escapes taken away.
      const shown = text.replace(/\\(.)/g, '$1');
      for (const promised of SAYS[kind] ?? []) expect(shown).toContain(promised);
    },
  );

  it('never lets a topic or a name notify anyone', () => {
    const hostile = started(
      '<!channel> @everyone <@U0123> <at>Boss</at> [x](https://evil.example)',
      {
        participant: { user_name: '@here' },
      },
    );
    const message = builtInMessage(tool, hostile);
    expect(tool.mentions(message)).toEqual([]);
    const text = stringsOf(message).join('\n');
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('<@U0123>');
    // Slack has no Markdown links; the others would make one of [x](…).
    if (tool !== slackTool) expect(text).not.toMatch(/(?<!\\)\[x\]/);
  });

  it('cuts what is too long and leaves out what does not fit, never refused for its size', () => {
    const files = Array.from({ length: 500 }, (_, i) => ({
      file_type: 'MP4'.repeat(100),
      recording_type: 'gallery_view',
      download_url: `https://bridge.example.com/api/recordings/1/files/${i}/download`,
    }));
    const body = {
      ...EVENT_EXAMPLES['operation.complete'],
      data: {
        ...(EVENT_EXAMPLES['operation.complete'].data as object),
        topic: '&<'.repeat(20000),
        files,
      },
    };
    const message = builtInMessage(tool, body);
    expect(tool.refusal(message)).toBeNull();
    const text = stringsOf(message).join('\n');
    expect(text).toContain('…');
    if (tool === teamsTool) {
      expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThanOrEqual(TEAMS_MAX_BYTES);
    }
  });
});

describe('what the tools refuse', () => {
  it('Slack: more than 50 blocks, a section over 3,000 characters, nothing to say', () => {
    const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });
    expect(slackTool.refusal({ blocks: Array(51).fill(section('x')) })).toMatch(/51 blocks/);
    expect(slackTool.refusal({ blocks: [section('x'.repeat(3001))] })).toMatch(/3000/);
    expect(slackTool.refusal({})).toMatch(/invalid_payload/);
    expect(slackTool.refusal([1])).toMatch(/object/);
  });

  it('Discord: content over 2,000, embeds over 6,000 in all, a field over 1,024', () => {
    expect(discordTool.refusal({ content: 'x'.repeat(2001) })).toMatch(/2000/);
    const embed = { title: 't', description: 'd'.repeat(4000) };
    expect(discordTool.refusal({ embeds: [embed, embed] })).toMatch(/6000/);
    expect(
      discordTool.refusal({ embeds: [{ fields: [{ name: 'n', value: 'v'.repeat(1025) }] }] }),
    ).toMatch(/1024/);
    expect(discordTool.refusal({ content: '' })).toMatch(/empty/);
  });

  it('Teams: anything but a message of Adaptive Cards, or over 28 KB', () => {
    expect(teamsTool.refusal({ text: 'hi' })).toMatch(/"type": "message"/);
    const card = builtInMessage(teamsTool, EVENT_EXAMPLES['job.started']) as {
      attachments: { content: { body: unknown[] } }[];
    };
    card.attachments[0].content.body.push({ type: 'TextBlock', text: 'x'.repeat(30000) });
    expect(teamsTool.refusal(card)).toMatch(/28000/);
  });

  it('reads the answers: Slack no_service is gone, Discord retry_after rounds up', () => {
    expect(slackTool.answer(404, 'no_service')).toEqual({
      gone: 'Slack answered 404 no_service: the webhook was removed',
      retryAfter: null,
    });
    expect(slackTool.answer(410, 'channel_is_archived').gone).toBe(
      'Slack answered 410 channel_is_archived: its channel was archived',
    );
    expect(slackTool.answer(404, 'other')).toEqual({ gone: null, retryAfter: null });
    expect(discordTool.answer(429, '{"retry_after": 1.2, "global": false}')).toEqual({
      gone: null,
      retryAfter: '2',
    });
    expect(teamsTool.answer(410, '')).toEqual({
      gone: 'Teams answered 410 Gone',
      retryAfter: null,
    });
  });
});

describe('the addresses each tool takes', () => {
  const problem = (tool: ChatTool, url: string) => tool.urlProblem(new URL(url));

  it.each([
    [slackTool, 'https://hooks.slack.com/services/T0/B0/x'],
    [discordTool, 'https://discord.com/api/webhooks/1/x'],
    [discordTool, 'https://discordapp.com/api/webhooks/1/x'],
    [teamsTool, 'https://prod-01.westeurope.logic.azure.com/workflows/a/triggers/manual'],
    [teamsTool, 'https://default1.environment.api.powerplatform.com/powerautomate/x'],
    [teamsTool, 'https://flow.eu.powerautomate.com/x'],
    [teamsTool, 'https://contoso.webhook.office.com/webhookb2/x'],
  ])('%#: takes the tool’s own host', (tool, url) => {
    expect(problem(tool, url)).toBeNull();
  });

  it.each([
    [slackTool, 'http://hooks.slack.com/services/T0/B0/x'],
    [slackTool, 'https://hooks.slack.com.example.com/services/x'],
    [slackTool, 'https://discord.com/api/webhooks/1/x'],
    [discordTool, 'https://discord.com/channels/1/2'],
    [discordTool, 'https://notdiscord.com/api/webhooks/1/x'],
    [teamsTool, 'https://logic.azure.com/x'],
    [teamsTool, 'https://evil-powerautomate.com/x'],
    [teamsTool, 'https://hooks.slack.com/services/x'],
  ])('%#: refuses any other address, naming url', (tool, url) => {
    expect(problem(tool, url)).toMatch(/^url must be/);
  });
});

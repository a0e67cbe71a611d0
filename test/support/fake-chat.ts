import { IncomingHttpHeaders, Server, createServer } from 'node:http';
import { AddressInfo } from 'node:net';

/**
 * Local stand-ins for the chat tools' incoming webhooks (Slack, Microsoft Teams Workflows,
 * Discord), refusing what the real ones refuse by the platform notes: the shape, the sizes, the
 * answers. Written apart from the service's own limits (src/destinations/*\/…message.ts) on
 * purpose: a fake that shared them would accept whatever the service got wrong. Paths:
 * - Slack: `POST /services/T…/B…/…`: 200 `ok`; 400 `invalid_payload` or `invalid_blocks`;
 * - Discord: `POST /api/webhooks/<id>/<token>`: 204; 400 with a JSON `message`;
 * - Teams: `POST /workflows/<id>`: 202; 400.
 * A path can be told to answer otherwise first (a 429, a 404 `no_service`, a 410).
 */
export type ChatKind = 'slack' | 'discord' | 'teams';

export interface ChatRequest {
  kind: ChatKind;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body parsed, when it was JSON. */
  json: unknown;
  receivedAt: number;
  status: number;
  /** Why it was refused; null when accepted. */
  refused: string | null;
}

export interface ChatAnswer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const chars = (v: unknown) => (typeof v === 'string' ? [...v].length : 0);

/** Slack's incoming webhook refusals (Block Kit: 50 blocks, 3,000 characters a section). */
function slackRefusal(m: unknown): string | null {
  if (!isObj(m)) return 'invalid_payload';
  const blocks = m.blocks;
  const hasText = typeof m.text === 'string' && m.text.trim() !== '';
  if (blocks === undefined) return hasText ? null : 'no_text';
  if (!Array.isArray(blocks) || blocks.length > 50) return 'invalid_blocks';
  for (const b of blocks) {
    if (!isObj(b) || typeof b.type !== 'string') return 'invalid_blocks';
    if (b.type === 'section') {
      if (!isObj(b.text) && !Array.isArray(b.fields)) return 'invalid_blocks';
      if (isObj(b.text) && (chars(b.text.text) > 3000 || chars(b.text.text) === 0)) {
        return 'invalid_blocks';
      }
    }
  }
  return null;
}

/** Discord's refusals of an execute-webhook body. */
function discordRefusal(m: unknown): string | null {
  if (!isObj(m)) return 'Cannot send an empty message';
  const embeds = Array.isArray(m.embeds) ? m.embeds : [];
  if (chars(m.content) === 0 && embeds.length === 0) return 'Cannot send an empty message';
  if (chars(m.content) > 2000) return 'content: Must be 2000 or fewer in length.';
  if (embeds.length > 10) return 'embeds: Must be 10 or fewer in length.';
  let total = 0;
  for (const e of embeds) {
    if (!isObj(e)) return 'embeds: invalid';
    const fields = Array.isArray(e.fields) ? e.fields : [];
    if (chars(e.title) > 256) return 'embeds.title: Must be 256 or fewer in length.';
    if (chars(e.description) > 4096) return 'embeds.description: Must be 4096 or fewer in length.';
    if (fields.length > 25) return 'embeds.fields: Must be 25 or fewer in length.';
    total += chars(e.title) + chars(e.description);
    for (const f of fields) {
      if (!isObj(f) || chars(f.name) === 0 || chars(f.value) === 0) return 'fields: required';
      if (chars(f.name) > 256 || chars(f.value) > 1024) return 'fields: too long';
      total += chars(f.name) + chars(f.value);
    }
  }
  return total > 6000 ? 'Embed size exceeds maximum size of 6000' : null;
}

/** Workflows' "post to a channel when a webhook request is received" refusals. */
function teamsRefusal(m: unknown, bytes: number): string | null {
  if (bytes > 28 * 1000) return 'RequestEntityTooLarge';
  if (!isObj(m) || m.type !== 'message' || !Array.isArray(m.attachments)) return 'InvalidRequest';
  for (const a of m.attachments) {
    if (!isObj(a) || a.contentType !== 'application/vnd.microsoft.card.adaptive') {
      return 'InvalidRequest: attachment is not an Adaptive Card';
    }
    if (!isObj(a.content) || a.content.type !== 'AdaptiveCard' || !Array.isArray(a.content.body)) {
      return 'InvalidRequest: card has no body';
    }
  }
  return null;
}

const KIND_OF: [RegExp, ChatKind][] = [
  [/^\/services\/T[^/]+\/B[^/]+\/[^/]+$/, 'slack'],
  [/^\/api\/webhooks\/\d+\/[^/]+$/, 'discord'],
  [/^\/workflows\/[^/]+$/, 'teams'],
];

export class FakeChat {
  readonly requests: ChatRequest[] = [];
  private readonly queued = new Map<string, ChatAnswer[]>();
  private server: Server | null = null;
  port = 0;

  /** `host:port` as CHAT_EXTRA_HOSTS lists it. */
  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  url(path: string): string {
    return `http://${this.host}${path}`;
  }

  /** Answers the next requests to `path` with these, in turn, before its usual answer. */
  answerFirst(path: string, ...answers: ChatAnswer[]): void {
    this.queued.set(path, [...(this.queued.get(path) ?? []), ...answers]);
  }

  to(path: string): ChatRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const body = Buffer.concat(parts);
        const path = req.url ?? '/';
        const kind = KIND_OF.find(([p]) => p.test(path))?.[1];
        const answer = (status: number, text = '', headers: Record<string, string> = {}) => {
          res.writeHead(status, { 'content-type': 'text/plain', ...headers });
          res.end(text);
        };
        if (req.method !== 'POST' || kind === undefined) return answer(404, 'not found');
        let json: unknown;
        try {
          json = JSON.parse(body.toString('utf8'));
        } catch {
          json = undefined;
        }
        const record: ChatRequest = {
          kind,
          path,
          headers: req.headers,
          body,
          json,
          receivedAt: Date.now(),
          status: 0,
          refused: null,
        };
        this.requests.push(record);
        const first = this.queued.get(path)?.shift();
        if (first) {
          record.status = first.status;
          return answer(first.status, first.body ?? '', first.headers);
        }
        const refused =
          json === undefined || req.headers['content-type'] !== 'application/json'
            ? 'invalid_payload'
            : kind === 'slack'
              ? slackRefusal(json)
              : kind === 'discord'
                ? discordRefusal(json)
                : teamsRefusal(json, body.length);
        record.refused = refused;
        if (refused !== null) {
          record.status = 400;
          return kind === 'discord'
            ? answer(400, JSON.stringify({ message: refused, code: 50006 }), {
                'content-type': 'application/json',
              })
            : answer(400, refused);
        }
        record.status = kind === 'slack' ? 200 : kind === 'discord' ? 204 : 202;
        return kind === 'slack' ? answer(200, 'ok') : answer(record.status);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    if (this.server) {
      this.server.closeAllConnections();
      await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    }
  }
}

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import {
  IncomingHttpHeaders,
  IncomingMessage,
  Server,
  ServerResponse,
  createServer,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { PLATFORM_OPERATIONS, PlatformOperation } from '../../src/platform-api/platform-operations';
import { ContractCheck, PlatformContract } from './platform-contract';

/**
 * A local stand-in for the meeting platform (Zoom), behaving as its documentation says:
 *
 * - `POST /oauth/token`: HTTP Basic client credentials, form body
 *   `grant_type=account_credentials&account_id=…`; answers `access_token`, `token_type`,
 *   `expires_in`, `scope` and `api_url` (this server, under `regionPath`).
 * - REST under `/v2` (and under any one-segment prefix before `/v2`, so a test can tell the
 *   regional base from the global one): bearer tokens checked, a bad or expired one is
 *   401 `{"code":124,"message":"Invalid access token."}`; errors are `{code, message}`.
 * - `GET /rec/download/{fileId}`: the file's bytes with the bearer token (or, as a recording
 *   event's `download_token`, `?access_token=` one of issueDownloadToken's), either served
 *   here or redirected to a separate "storage" server (another origin) with a signed URL.
 *   Files without an id (CC, TIMELINE) are served under `{meeting id}-{file type}`.
 *
 * - Every REST answer carries `x-zm-trackingid` and the `X-RateLimit-*` headers, as the
 *   platform's do. File downloads honour `Range` (206 with Content-Range).
 * - Contract mode (`contract: true`): every REST call is checked against the operation it
 *   reaches in the platform's published document (test/support/platform-contract.ts) and
 *   answered with that operation's first 2xx status and a body in its documented shape (none
 *   where the document gives none), or 400 listing the violations.
 *
 * Test controls: counters, every request recorded as received (raw path), token revocation,
 * 429s with Retry-After and X-RateLimit-* on demand, stalls (before the headers, or of a file's
 * body midway), requests held and answered later, connection resets and arbitrary failures.
 */

export interface FakeZoomOptions {
  accountId?: string;
  clientId?: string;
  clientSecret?: string;
  tokenTtlSeconds?: number;
  /** Appended to the base URL as the token's api_url; null sends no api_url. */
  regionPath?: string | null;
  /** Serve downloads by redirecting to the storage server (default) or directly. */
  redirectDownloads?: boolean;
  /** Validate every REST call against the published document and answer it generically. */
  contract?: boolean;
  /** In contract mode, the document's operations it holds calls to (default: the route table). */
  operations?: readonly PlatformOperation[];
}

export interface RecordedRequest {
  method: string;
  /** The request target exactly as received, query included. */
  rawUrl: string;
  /** Raw path without the query. */
  rawPath: string;
  /** For REST calls: the prefix before /v2 ('' for none), and the raw path after /v2. */
  base?: string;
  apiPath?: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeUser {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  type: number;
  status: 'active' | 'inactive' | 'pending';
}

export interface FakeMeeting {
  id: number;
  uuid: string;
  host_id: string;
  topic: string;
  type: number;
  start_time?: string;
  duration?: number;
  timezone: string;
  created_at: string;
  join_url: string;
  settings: Record<string, unknown>;
  status: 'waiting' | 'started' | 'ended';
  deleted: boolean;
}

export interface FakeRecordingFile {
  id?: string;
  file_type: string;
  file_extension: string;
  file_size: number;
  recording_type: string;
  /** Served with this content type and disposition. */
  content_type: string;
  /** Listed instead of this fake's own download URL (to model a hostile or broken answer). */
  download_url?: string;
}

export interface FileTransfer {
  fileId: string;
  bytes: number;
  state: 'streaming' | 'done' | 'aborted';
}

export interface RateLimitOptions {
  /** Raw Retry-After value: seconds, or an HTTP date. Omitted when null. */
  retryAfter?: string | null;
  category?: string;
  type?: string;
  limit?: string;
  message?: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, rec: RecordedRequest) => void;

/** The bytes of a generated recording file: 64 KiB chunks, each distinct, deterministic. */
export function* recordingChunks(
  seed: string,
  size: number,
  chunkSize = 64 * 1024,
): Generator<Buffer> {
  const block = Buffer.alloc(chunkSize);
  let pattern = createHash('sha256').update(seed).digest();
  for (let i = 0; i < chunkSize; i += pattern.length) pattern.copy(block, i);
  for (let offset = 0, index = 0; offset < size; offset += chunkSize, index++) {
    const chunk = Buffer.from(block.subarray(0, Math.min(chunkSize, size - offset)));
    pattern = createHash('sha256').update(pattern).update(String(index)).digest();
    pattern.copy(chunk, 0, 0, Math.min(pattern.length, chunk.length));
    yield chunk;
  }
}

/** sha256 (hex) of a generated recording file, computed chunk by chunk. */
export function recordingSha256(seed: string, size: number): string {
  const hash = createHash('sha256');
  for (const chunk of recordingChunks(seed, size)) hash.update(chunk);
  return hash.digest('hex');
}

const json = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) => {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json;charset=UTF-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
};

/**
 * A meeting's `start_time` as the platform answers it, in UTC (`…Z`): a local time given with
 * `timezone` is that zone's wall-clock time.
 */
function utcStartTime(body: Record<string, unknown>): string {
  const start = String(body.start_time);
  const zoned = /(Z|[+-]\d{2}:\d{2})$/.test(start);
  if (zoned || typeof body.timezone !== 'string') {
    return new Date(zoned ? start : `${start}Z`).toISOString().replace(/\.\d+Z$/, 'Z');
  }
  const asUtc = new Date(`${start}Z`);
  // The zone's offset at that moment: its wall clock there, read as if it were UTC, minus UTC.
  const wall = asUtc.toLocaleString('sv-SE', { timeZone: body.timezone }).replace(' ', 'T');
  const offset = new Date(`${wall}Z`).getTime() - asUtc.getTime();
  return new Date(asUtc.getTime() - offset).toISOString().replace(/\.\d+Z$/, 'Z');
}

const noContent = (res: ServerResponse) => {
  res.writeHead(204);
  res.end();
};

function decodeSegment(raw: string): { value: string; doubleEncoded: boolean } {
  const once = decodeURIComponent(raw);
  return /%[0-9A-Fa-f]{2}/.test(once)
    ? { value: decodeURIComponent(once), doubleEncoded: true }
    : { value: once, doubleEncoded: false };
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Consumes the first rule that matches the request; whether one did. */
function take(rules: ((r: RecordedRequest) => boolean)[], rec: RecordedRequest): boolean {
  const index = rules.findIndex((match) => match(rec));
  if (index >= 0) rules.splice(index, 1);
  return index >= 0;
}

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export class FakeZoom {
  readonly accountId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  tokenTtlSeconds: number;
  regionPath: string | null;
  redirectDownloads: boolean;
  /**
   * The host name download redirects name for the storage server (same port): another name
   * for this machine, such as `localhost`, models a redirect off the platform's hosts.
   */
  storageHost = '127.0.0.1';

  baseUrl = '';
  storageUrl = '';

  /** Every request to the platform server, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  /** Every request to the storage server. */
  readonly storageRequests: RecordedRequest[] = [];

  readonly users: FakeUser[] = [];
  readonly meetings: FakeMeeting[] = [];
  /** Recording files by meeting uuid. */
  readonly recordings = new Map<string, FakeRecordingFile[]>();
  /** Every file transfer started, with the bytes written so far and how it ended. */
  readonly transfers: FileTransfer[] = [];
  /** Meeting uuids whose recordings were deleted, with the action used. */
  readonly deletedRecordings: { uuid: string; action: string }[] = [];
  /** In contract mode: each REST call's operation and what was wrong with it. */
  readonly contractChecks: ContractCheck[] = [];
  /** The `x-zm-trackingid` of the latest REST answer. */
  lastTrackingId = '';
  /**
   * REST routes of extensions (fake-zoom-reports.ts), asked first: each answers and returns
   * true, or returns false to leave the call to the next.
   */
  readonly routes: ((res: ServerResponse, rec: RecordedRequest) => boolean)[] = [];

  private readonly tokens = new Map<string, number>();
  /** Recording events' download tokens, which open files as `?access_token=`. */
  private readonly downloadTokens = new Set<string>();
  private refuseAll = false;
  private readonly rateLimits: RateLimitOptions[] = [];
  private readonly failures: { status: number; body: unknown }[] = [];
  private readonly resets: ((r: RecordedRequest) => boolean)[] = [];
  private readonly stalls: ((r: RecordedRequest) => boolean)[] = [];
  private readonly stalled = new Set<ServerResponse>();
  /** File ids whose next transfer stops after this many bytes. */
  private readonly bodyStalls: { fileId: string; afterBytes: number }[] = [];
  private readonly holds: ((r: RecordedRequest) => boolean)[] = [];
  private readonly held: (() => void)[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  private readonly storage: Server;
  private readonly storageKey = randomBytes(16);
  private readonly contract: PlatformContract | null;
  private readonly operations: readonly PlatformOperation[];

  private constructor(options: FakeZoomOptions) {
    this.accountId = options.accountId ?? 'fake-account-id';
    this.clientId = options.clientId ?? 'fake-client-id';
    this.clientSecret = options.clientSecret ?? 'fake-client-secret';
    this.tokenTtlSeconds = options.tokenTtlSeconds ?? 3599;
    this.regionPath = options.regionPath === undefined ? '/regional' : options.regionPath;
    this.redirectDownloads = options.redirectDownloads ?? true;
    this.operations = options.operations ?? PLATFORM_OPERATIONS;
    this.contract = options.contract ? new PlatformContract(this.operations) : null;
    this.server = createServer((req, res) => this.receive(req, res, this.requests, this.platform));
    this.storage = createServer((req, res) =>
      this.receive(req, res, this.storageRequests, this.serveStorage),
    );
    for (const server of [this.server, this.storage]) {
      server.on('connection', (socket: Socket) => {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
      });
    }
  }

  static async start(options: FakeZoomOptions = {}): Promise<FakeZoom> {
    const fake = new FakeZoom(options);
    fake.baseUrl = await listen(fake.server);
    fake.storageUrl = await listen(fake.storage);
    return fake;
  }

  /** Environment for the app under test: credentials, token URL, and a global REST base. */
  env(globalPath = '/global'): Record<string, string> {
    return {
      ZOOM_ACCOUNT_ID: this.accountId,
      ZOOM_CLIENT_ID: this.clientId,
      ZOOM_CLIENT_SECRET: this.clientSecret,
      ZOOM_OAUTH_URL: this.baseUrl,
      ZOOM_API_URL: `${this.baseUrl}${globalPath}/v2`,
    };
  }

  /** Token requests received (good, bad, stalled or reset alike). */
  get tokenRequests(): number {
    return this.requests.filter((r) => r.method === 'POST' && r.rawPath === '/oauth/token').length;
  }

  /** REST calls (under …/v2) recorded so far. */
  apiRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.apiPath !== undefined);
  }

  /** Every issued token stops working (as after a credential rotation): the next call gets 401. */
  revokeTokens(): void {
    this.tokens.clear();
  }

  /** Whether `token` is one this platform issued and still accepts (the event socket asks). */
  acceptsToken(token: string): boolean {
    const expiresAt = this.tokens.get(token);
    return !this.refuseAll && expiresAt !== undefined && expiresAt > Date.now();
  }

  /** While on, every token is refused with 401 code 124, even fresh ones. */
  refuseAllTokens(on = true): void {
    this.refuseAll = on;
  }

  /** The next `count` REST calls answer 429 with Retry-After and the X-RateLimit-* headers. */
  rateLimitNext(count = 1, options: RateLimitOptions = {}): void {
    for (let i = 0; i < count; i++) this.rateLimits.push(options);
  }

  /** The next REST call answers `status` with `body`. */
  failNext(
    status: number,
    body: unknown = { code: status, message: `Fake failure ${status}` },
  ): void {
    this.failures.push({ status, body });
  }

  /** The next `count` requests (matching `match`) get their connection reset, unanswered. */
  resetNext(count = 1, match: (r: RecordedRequest) => boolean = () => true): void {
    for (let i = 0; i < count; i++) this.resets.push(match);
  }

  /** The next `count` requests (matching `match`) are held unanswered until release(). */
  stallNext(count = 1, match: (r: RecordedRequest) => boolean = () => true): void {
    for (let i = 0; i < count; i++) this.stalls.push(match);
  }

  /**
   * The next `count` requests (matching `match`) wait, unanswered, until releaseHeld(); then
   * they get their normal answer (unlike stallNext, whose requests are never answered).
   */
  holdNext(count = 1, match: (r: RecordedRequest) => boolean = () => true): void {
    for (let i = 0; i < count; i++) this.holds.push(match);
  }

  /** Requests held by holdNext and not yet released. */
  get heldCount(): number {
    return this.held.length;
  }

  /**
   * The next transfer of `fileId` (served here or by storage) sends its headers and about
   * `afterBytes` bytes, then writes nothing more, its connection left open until the client
   * goes away or release().
   */
  stallFileNext(fileId: string, afterBytes = 64 * 1024): void {
    this.bodyStalls.push({ fileId, afterBytes });
  }

  releaseHeld(): void {
    for (const answer of this.held.splice(0)) answer();
  }

  release(): void {
    for (const res of this.stalled) res.destroy();
    this.stalled.clear();
  }

  addUser(user: Partial<FakeUser> = {}): FakeUser {
    const n = this.users.length + 1;
    const created: FakeUser = {
      id: `user${n}${randomBytes(6).toString('hex')}`,
      email: `user${n}@example.com`,
      first_name: `User`,
      last_name: `${n}`,
      type: 2,
      status: 'active',
      ...user,
    };
    this.users.push(created);
    return created;
  }

  addMeeting(hostId: string, fields: Partial<FakeMeeting> = {}): FakeMeeting {
    const id = 80000000000 + this.meetings.length + 1;
    const meeting: FakeMeeting = {
      id,
      uuid: randomBytes(16).toString('base64'),
      host_id: hostId,
      topic: 'Fake meeting',
      type: 2,
      start_time: '2025-01-01T10:00:00Z',
      duration: 30,
      timezone: 'UTC',
      created_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      join_url: `${this.baseUrl}/j/${id}`,
      settings: { join_before_host: false, waiting_room: true },
      status: 'waiting',
      deleted: false,
      ...fields,
    };
    this.meetings.push(meeting);
    return meeting;
  }

  /** A recording event's download_token: it opens this fake's downloads as ?access_token=. */
  issueDownloadToken(): string {
    const token = `dl-${randomBytes(18).toString('base64url')}`;
    this.downloadTokens.add(token);
    return token;
  }

  /** The recording's files as a recording.completed event lists them (download URLs here). */
  recordingFilesOf(meeting: FakeMeeting): Record<string, unknown>[] {
    return (this.recordingView(meeting)?.recording_files ?? []) as Record<string, unknown>[];
  }

  /** Gives a meeting a cloud recording; files without `id` model CC and TIMELINE files. */
  addRecording(meeting: FakeMeeting, files: FakeRecordingFile[]): void {
    this.recordings.set(meeting.uuid, files);
  }

  /** sha256 of a file's bytes as this fake serves them. */
  fileSha256(file: FakeRecordingFile): string {
    return recordingSha256(file.id ?? file.file_type, file.file_size);
  }

  async close(): Promise<void> {
    this.release();
    this.held.length = 0;
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(
      [this.server, this.storage].map(
        (server) => new Promise<void>((resolve) => server.close(() => resolve())),
      ),
    );
  }

  // --- request handling ---------------------------------------------------------------------

  private receive(
    req: IncomingMessage,
    res: ServerResponse,
    log: RecordedRequest[],
    handler: Handler,
  ): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawUrl = req.url ?? '/';
      const q = rawUrl.indexOf('?');
      const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
      const rec: RecordedRequest = {
        method: req.method ?? 'GET',
        rawUrl,
        rawPath,
        query: new URLSearchParams(q < 0 ? '' : rawUrl.slice(q + 1)),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const api = /^(\/[A-Za-z0-9_-]+)?\/v2(\/.*)$/.exec(rawPath);
      if (api && log === this.requests) {
        rec.base = api[1] ?? '';
        rec.apiPath = api[2];
      }
      log.push(rec);
      if (log === this.requests && take(this.resets, rec)) {
        req.socket.destroy();
        return;
      }
      if (log === this.requests && take(this.stalls, rec)) {
        this.stalled.add(res);
        return;
      }
      const answer = () => {
        try {
          handler.call(this, req, res, rec);
        } catch (error) {
          json(res, 500, { code: 500, message: `fake-zoom: ${(error as Error).message}` });
        }
      };
      if (log === this.requests && take(this.holds, rec)) {
        this.held.push(answer);
        return;
      }
      answer();
    });
  }

  private platform(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest): void {
    if (rec.method === 'POST' && rec.rawPath === '/oauth/token') return this.token(req, res, rec);
    if (rec.method === 'GET' && rec.rawPath.startsWith('/rec/download/')) {
      const eventToken = rec.query.get('access_token');
      if (eventToken === null ? !this.authorized(req, res) : !this.downloadTokens.has(eventToken)) {
        if (eventToken !== null) json(res, 401, { code: 124, message: 'Invalid access token.' });
        return;
      }
      return this.download(
        res,
        decodeURIComponent(rec.rawPath.slice('/rec/download/'.length)),
        rec.headers.range,
      );
    }
    if (rec.apiPath === undefined) return json(res, 404, { code: 404, message: 'Not found' });
    this.lastTrackingId = `fake-${randomBytes(8).toString('hex')}`;
    res.setHeader('x-zm-trackingid', this.lastTrackingId);
    res.setHeader('x-ratelimit-category', 'Light');
    res.setHeader('x-ratelimit-limit', '30');
    res.setHeader('x-ratelimit-remaining', '29');
    if (!this.authorized(req, res)) return;
    const limited = this.rateLimits.shift();
    if (limited) return this.tooManyRequests(res, limited);
    const failure = this.failures.shift();
    if (failure) return json(res, failure.status, failure.body);
    if (this.contract) return this.contractAnswer(res, rec, this.contract);
    this.rest(res, rec);
  }

  private contractAnswer(res: ServerResponse, rec: RecordedRequest, contract: PlatformContract) {
    const check = contract.check(
      rec.method,
      rec.apiPath as string,
      rec.query,
      rec.headers['content-type'],
      rec.body,
    );
    this.contractChecks.push(check);
    if (check.violations.length > 0) {
      return json(res, 400, { code: 300, message: check.violations.join('; ') });
    }
    const op = this.operations.find((o) => o.id === check.operation);
    if (!op) return json(res, 404, { code: 404, message: 'Not found' });
    const answer = PlatformContract.successAnswer(op);
    if (answer.body !== undefined) return json(res, answer.status, answer.body);
    res.writeHead(answer.status);
    res.end();
  }

  private token(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest): void {
    const match = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    const expected = Buffer.from(`${this.clientId}:${this.clientSecret}`);
    const given = match ? Buffer.from(match[1], 'base64') : Buffer.alloc(0);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return json(res, 401, {
        reason: 'Invalid client_id or client_secret',
        error: 'invalid_client',
      });
    }
    const form = new URLSearchParams(rec.body);
    if (form.get('grant_type') !== 'account_credentials') {
      return json(res, 400, { reason: 'Unsupported grant type', error: 'unsupported_grant_type' });
    }
    if (form.get('account_id') !== this.accountId) {
      return json(res, 400, { reason: 'Invalid account_id', error: 'invalid_request' });
    }
    const accessToken = randomBytes(24).toString('base64url');
    this.tokens.set(accessToken, Date.now() + this.tokenTtlSeconds * 1000);
    json(res, 200, {
      access_token: accessToken,
      token_type: 'bearer',
      expires_in: this.tokenTtlSeconds,
      scope:
        'meeting:read:admin meeting:write:admin user:read:admin recording:read:admin recording:write:admin',
      ...(this.regionPath === null ? {} : { api_url: `${this.baseUrl}${this.regionPath}` }),
    });
  }

  private authorized(req: IncomingMessage, res: ServerResponse): boolean {
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (match && this.acceptsToken(match[1])) return true;
    json(res, 401, { code: 124, message: 'Invalid access token.' });
    return false;
  }

  private tooManyRequests(res: ServerResponse, options: RateLimitOptions): void {
    const headers: Record<string, string> = {
      'x-ratelimit-category': options.category ?? 'Light',
      'x-ratelimit-type': options.type ?? 'QPS',
      'x-ratelimit-limit': options.limit ?? '30',
      'x-ratelimit-remaining': '0',
    };
    const retryAfter = options.retryAfter === undefined ? '1' : options.retryAfter;
    if (retryAfter !== null) headers['retry-after'] = retryAfter;
    json(
      res,
      429,
      {
        code: 429,
        message:
          options.message ??
          'You have reached the maximum per-second rate limit for this API. Try again later.',
      },
      headers,
    );
  }

  private rest(res: ServerResponse, rec: RecordedRequest): void {
    if (this.routes.some((route) => route(res, rec))) return;
    const raw = (rec.apiPath as string).split('/').slice(1);
    const segments = raw.map(decodeSegment);
    const names = segments.map((s) => s.value);
    const route = `${rec.method} /${raw.map((_, i) => (i % 2 === 1 ? '*' : names[i])).join('/')}`;
    const body = rec.body ? (JSON.parse(rec.body) as Record<string, unknown>) : {};
    switch (route) {
      case 'GET /users':
        return this.listUsers(res, rec.query);
      case 'GET /users/*/meetings':
        return this.withUser(res, names[1], (user) => this.listMeetings(res, user, rec.query));
      case 'POST /users/*/meetings':
        return this.withUser(res, names[1], (user) => this.createMeeting(res, user, body));
      case 'GET /users/*/recordings':
        return this.withUser(res, names[1], (user) => this.listRecordings(res, user, rec.query));
    }
    if (names[0] === 'meetings' && names.length >= 2) {
      const meeting = this.findMeeting(segments[1]);
      if (!meeting) {
        return json(res, 404, { code: 3001, message: `Meeting does not exist: ${names[1]}.` });
      }
      switch (route) {
        case 'GET /meetings/*':
          return json(res, 200, this.meetingView(meeting));
        case 'PATCH /meetings/*':
          Object.assign(meeting, body);
          return noContent(res);
        case 'DELETE /meetings/*':
          meeting.deleted = true;
          return noContent(res);
        case 'PUT /meetings/*/status':
          if (body.action !== 'end' && body.action !== 'recover') {
            return json(res, 400, { code: 300, message: 'Invalid action.' });
          }
          meeting.status = 'ended';
          return noContent(res);
        case 'GET /meetings/*/recordings':
          return this.meetingRecordings(res, meeting);
        case 'DELETE /meetings/*/recordings':
          if (!this.recordings.delete(meeting.uuid)) {
            return json(res, 404, { code: 3301, message: 'This recording does not exist.' });
          }
          this.deletedRecordings.push({
            uuid: meeting.uuid,
            action: rec.query.get('action') ?? 'trash',
          });
          return noContent(res);
      }
    }
    json(res, 404, { code: 404, message: `fake-zoom has no route ${route}` });
  }

  /**
   * Resolves a meeting id or UUID from its path segment. As on the platform, a UUID that
   * begins with `/` or contains `//` is found only when it arrives double-encoded.
   */
  private findMeeting(segment: { value: string; doubleEncoded: boolean }): FakeMeeting | undefined {
    const { value, doubleEncoded } = segment;
    if ((value.startsWith('/') || value.includes('//')) && !doubleEncoded) return undefined;
    return this.meetings.find((m) => !m.deleted && (String(m.id) === value || m.uuid === value));
  }

  private withUser(res: ServerResponse, idOrEmail: string, then: (user: FakeUser) => void): void {
    const user = this.users.find((u) => u.id === idOrEmail || u.email === idOrEmail);
    if (!user) return json(res, 404, { code: 1001, message: `User does not exist: ${idOrEmail}.` });
    then(user);
  }

  private page<T>(items: T[], query: URLSearchParams, key: string): Record<string, unknown> {
    const size = Math.min(Number(query.get('page_size') ?? 30) || 30, 300);
    const start = Number(
      Buffer.from(query.get('next_page_token') ?? '', 'base64url').toString() || 0,
    );
    const slice = items.slice(start, start + size);
    const next =
      start + size < items.length ? Buffer.from(String(start + size)).toString('base64url') : '';
    return { page_size: size, total_records: items.length, next_page_token: next, [key]: slice };
  }

  private listUsers(res: ServerResponse, query: URLSearchParams): void {
    const status = query.get('status') ?? 'active';
    json(
      res,
      200,
      this.page(
        this.users.filter((u) => u.status === status),
        query,
        'users',
      ),
    );
  }

  private listMeetings(res: ServerResponse, user: FakeUser, query: URLSearchParams): void {
    const meetings = this.meetings
      .filter((m) => m.host_id === user.id && !m.deleted)
      .map((m) => this.meetingView(m));
    json(res, 200, this.page(meetings, query, 'meetings'));
  }

  private createMeeting(res: ServerResponse, user: FakeUser, body: Record<string, unknown>): void {
    const meeting = this.addMeeting(user.id, {
      topic: typeof body.topic === 'string' ? body.topic : 'Zoom Meeting',
      type: typeof body.type === 'number' ? body.type : 2,
      start_time: typeof body.start_time === 'string' ? utcStartTime(body) : undefined,
      ...(typeof body.timezone === 'string' && { timezone: body.timezone }),
      duration: typeof body.duration === 'number' ? body.duration : undefined,
      settings: { join_before_host: false, waiting_room: false, ...(body.settings as object) },
    });
    // As on the platform, the create answer has no uuid (GET has it).
    const created: Record<string, unknown> = this.meetingView(meeting);
    delete created.uuid;
    delete created.status;
    json(res, 201, {
      ...created,
      host_email: user.email,
      start_url: `${this.baseUrl}/s/${meeting.id}?zak=fake`,
      password: 'fake12',
    });
  }

  private meetingView(meeting: FakeMeeting): Record<string, unknown> {
    const view: Record<string, unknown> = { ...meeting };
    delete view.deleted;
    return view;
  }

  private recordingView(meeting: FakeMeeting): Record<string, unknown> | undefined {
    const files = this.recordings.get(meeting.uuid);
    if (!files) return undefined;
    return {
      uuid: meeting.uuid,
      id: meeting.id,
      account_id: this.accountId,
      host_id: meeting.host_id,
      topic: meeting.topic,
      type: meeting.type,
      start_time: meeting.start_time,
      duration: meeting.duration,
      total_size: files.reduce((sum, f) => sum + f.file_size, 0),
      recording_count: files.length,
      recording_files: files.map((f) => ({
        ...(f.id === undefined ? {} : { id: f.id }),
        meeting_id: meeting.uuid,
        recording_start: meeting.start_time,
        recording_end: meeting.start_time,
        file_type: f.file_type,
        file_extension: f.file_extension,
        file_size: f.file_size,
        play_url: `${this.baseUrl}/rec/play/${f.id ?? 'none'}`,
        download_url:
          f.download_url ??
          `${this.baseUrl}/rec/download/${encodeURIComponent(f.id ?? `${meeting.id}-${f.file_type}`)}`,
        status: 'completed',
        recording_type: f.recording_type,
      })),
    };
  }

  private meetingRecordings(res: ServerResponse, meeting: FakeMeeting): void {
    const view = this.recordingView(meeting);
    if (!view) return json(res, 404, { code: 3301, message: 'This recording does not exist.' });
    json(res, 200, view);
  }

  private listRecordings(res: ServerResponse, user: FakeUser, query: URLSearchParams): void {
    const meetings = this.meetings
      .filter((m) => m.host_id === user.id)
      .map((m) => this.recordingView(m))
      .filter((v) => v !== undefined);
    json(res, 200, {
      from: query.get('from') ?? '2025-01-01',
      to: query.get('to') ?? '2025-01-31',
      ...this.page(meetings, query, 'meetings'),
    });
  }

  /** By id, or for a file without one by the `{meeting id}-{file type}` it is served under. */
  private findFile(fileId: string): FakeRecordingFile | undefined {
    for (const [uuid, files] of this.recordings) {
      const meeting = this.meetings.find((m) => m.uuid === uuid);
      const file = files.find((f) => (f.id ?? `${meeting?.id}-${f.file_type}`) === fileId);
      if (file) return file;
    }
    return undefined;
  }

  private download(res: ServerResponse, fileId: string, range?: string): void {
    const file = this.findFile(fileId);
    if (!file) return json(res, 404, { code: 3301, message: 'This recording does not exist.' });
    if (!this.redirectDownloads) return void this.streamFile(res, file, range);
    const sig = createHmac('sha256', this.storageKey).update(fileId).digest('hex');
    const storage = new URL(this.storageUrl);
    storage.hostname = this.storageHost;
    res.writeHead(302, {
      location: `${storage.origin}/file/${encodeURIComponent(fileId)}?sig=${sig}`,
    });
    res.end();
  }

  private serveStorage(_req: IncomingMessage, res: ServerResponse, rec: RecordedRequest): void {
    const match = /^\/file\/([^/]+)$/.exec(rec.rawPath);
    const fileId = match ? decodeURIComponent(match[1]) : '';
    const sig = createHmac('sha256', this.storageKey).update(fileId).digest('hex');
    const file = this.findFile(fileId);
    if (!file || rec.query.get('sig') !== sig) {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end('Forbidden');
      return;
    }
    void this.streamFile(res, file, rec.headers.range);
  }

  /**
   * Writes the file in chunks, honouring back-pressure, so the fake itself stays small. A
   * `Range: bytes=a-b` (or `a-`, `-n`) gets 206 with Content-Range and exactly those bytes.
   */
  private async streamFile(
    res: ServerResponse,
    file: FakeRecordingFile,
    range?: string,
  ): Promise<void> {
    const size = file.file_size;
    const m = range ? /^bytes=(\d*)-(\d*)$/.exec(range) : null;
    let [first, last] = [0, size - 1];
    if (m && (m[1] || m[2])) {
      [first, last] = m[1]
        ? [Number(m[1]), m[2] ? Math.min(Number(m[2]), size - 1) : size - 1]
        : [size - Number(m[2]), size - 1];
      if (first > last || first >= size) {
        res.writeHead(416, { 'content-range': `bytes */${size}` });
        res.end();
        return;
      }
    }
    res.writeHead(m ? 206 : 200, {
      'content-type': file.content_type,
      'content-length': String(last - first + 1),
      'accept-ranges': 'bytes',
      ...(m ? { 'content-range': `bytes ${first}-${last}/${size}` } : {}),
      'content-disposition': `attachment; filename="${file.id ?? 'file'}.${file.file_extension.toLowerCase()}"`,
    });
    const transfer: FileTransfer = { fileId: file.id ?? '', bytes: 0, state: 'streaming' };
    this.transfers.push(transfer);
    res.on('close', () => {
      if (transfer.state === 'streaming') transfer.state = 'aborted';
    });
    const stallAt = this.bodyStalls.findIndex((stall) => stall.fileId === transfer.fileId);
    const stall = stallAt < 0 ? undefined : this.bodyStalls.splice(stallAt, 1)[0];
    let offset = 0;
    for (const whole of recordingChunks(file.id ?? file.file_type, file.file_size)) {
      const start = offset;
      offset += whole.length;
      if (offset <= first || start > last) continue;
      const chunk = whole.subarray(
        Math.max(first - start, 0),
        Math.min(last + 1 - start, whole.length),
      );
      if (transfer.state === 'aborted') return;
      if (stall && transfer.bytes >= stall.afterBytes) {
        res.flushHeaders(); // headers out even when no byte of the body is
        this.stalled.add(res);
        return;
      }
      transfer.bytes += chunk.length;
      if (!res.write(chunk)) await drainedOrClosed(res);
    }
    transfer.state = 'done';
    res.end();
  }
}

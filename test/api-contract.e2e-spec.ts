import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import type { ValidateFunction } from 'ajv';
import { PLATFORM_OPERATIONS } from '../src/platform-api/platform-operations';
import { FakeZoom } from './support/fake-zoom';
import { Json, request } from './support/http';
import { rawExchange } from './support/raw-http';
import { PLATFORM_SPEC_ERRORS, excusedBy } from './support/platform-spec-errors';
import { RecordedResponse, ResponseContract, documentAjv } from './support/response-contract';
import { SchemaArbitraries } from './support/schema-arbitrary';
import { TestApp, startTestApp } from './support/test-app';

/**
 * The contract test of docs/development.md#contract-testing-with-schemathesis, in the suite:
 * for every operation of /docs-json, the service's own API and every platform passthrough
 * operation alike, requests drawn from the document, valid ones and ones that break one
 * constraint, sent with a token holding every scope. Every answer's status must be documented
 * for the operation and its body valid for that status; a valid request is never refused for a
 * reason the document does not state (400, 422, 5xx), an invalid one is refused with a 4xx.
 * The platform behind the passthrough is the contract-mode fake (test/support/fake-zoom.ts),
 * which checks each call against the platform's own document: a valid passthrough request must
 * be answered by it (2xx), an invalid one refused here with a 400 naming the field, and never
 * reach it. Disagreements that are the platform document's own errors are excused by name
 * (test/support/platform-spec-errors.ts, docs/api.md#the-platforms-spec-errors-we-work-around).
 */

const PLATFORM_IDS = new Set(PLATFORM_OPERATIONS.map((op) => op.id));
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const VALID_CASES = 12;
const INVALID_CASES = 10;
/** Per passthrough operation: 156 of them, each a schema the platform wrote, some very large. */
const PLATFORM_VALID_CASES = 3;
const PLATFORM_INVALID_CASES = 3;
/** What a valid request may be answered besides 2xx: no token scope, no such id, a conflict, the test route's rate limit. */
const NOT_A_REFUSAL = new Set([401, 403, 404, 409, 429]);
/** Fixed, so that the suite draws the same requests every run; CONTRACT_SEED draws others. */
const SEED = Number(process.env.CONTRACT_SEED ?? 46);

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Json;
}

interface Operation {
  id: string;
  platform: boolean;
  method: (typeof METHODS)[number];
  template: string;
  parameters: Parameter[];
  body?: { mediaType: string; schema: Json; required: boolean };
}

interface Draw {
  params: Record<string, unknown>;
  body?: unknown;
}

function operationsOf(document: Json): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const content = op.requestBody?.content as Record<string, Json> | undefined;
      const mediaType = content ? Object.keys(content)[0] : undefined;
      out.push({
        id: op.operationId as string,
        platform: PLATFORM_IDS.has(op.operationId as string),
        method,
        template,
        parameters: (op.parameters ?? []) as Parameter[],
        body:
          content && mediaType
            ? {
                mediaType,
                schema: content[mediaType].schema,
                required: op.requestBody.required === true,
              }
            : undefined,
      });
    }
  }
  // Deletes last, so the webhook the other operations address exists while they run.
  return out.sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
}

/**
 * A window's order (since before until) is a rule between two fields that the document states
 * in words only (docs/api.md): valid draws keep it.
 */
function ordered(values: Record<string, unknown>): Record<string, unknown> {
  const { since, until } = values;
  if (typeof since !== 'string' || typeof until !== 'string' || since < until) return values;
  const earlier = new Date(Date.parse(until) - 60_000).toISOString().replace('.000Z', 'Z');
  return {
    ...values,
    since: since === until ? earlier : until,
    until: since === until ? until : since,
  };
}

interface Case {
  draw: Draw;
  /** What the draw breaks (undefined: a valid draw), and the field a 400 must name. */
  broken?: string;
  field?: string;
}

/** Where a broken field must be named: `settings.meeting_invitees`, a parameter's name. */
const named = (details: { field?: string }[] | undefined, field: string): boolean =>
  (details ?? []).some(
    (d) =>
      typeof d.field === 'string' &&
      (d.field === field ||
        d.field.startsWith(`${field}.`) ||
        d.field.startsWith(`${field}[`) ||
        field.startsWith(`${d.field}.`)),
  );

describe('The whole API against its document (generated requests)', () => {
  let fake: FakeZoom;
  let t: TestApp;
  let token: string;
  let document: Json;
  let webhookId: string;
  let contract: ResponseContract;
  let arbitraries: SchemaArbitraries;
  const validators = new Map<string, ValidateFunction>();
  let ajv: ReturnType<typeof documentAjv>;

  const validatorOf = (schema: Json): ValidateFunction => {
    const key = JSON.stringify(schema);
    let v = validators.get(key);
    if (!v) {
      v = ajv.compile(schema.$ref ? { $ref: `openapi${schema.$ref}` } : schema);
      validators.set(key, v);
    }
    return v;
  };

  beforeAll(async () => {
    fake = await FakeZoom.start({ contract: true });
    t = await startTestApp({
      env: {
        ...fake.env(),
        // No scheduled reconciliation: its report calls would be taken for passed-on requests.
        RECONCILE_INTERVAL_MS: '0',
        // The generated chat webhooks point at the app's own /receiver (docs/destinations.md).
        CHAT_EXTRA_HOSTS: '127.0.0.1',
        // An OAuth app, so that starting an install answers its 201 (docs/accounts.md); the
        // callback it leads to is a browser page, driven by accounts.e2e.
        ZOOM_APP_CLIENT_ID: 'contract-app',
        ZOOM_APP_CLIENT_SECRET: 'contract-app-secret',
        ZOOM_APP_REDIRECT_URL: 'http://bridge.test/zoom/oauth/callback',
        // One broker, of one type: the document offers it by name and no rabbitmq branch.
        DESTINATION_BROKERS: JSON.stringify([
          { name: 'bus', type: 'nats', url: 'nats://127.0.0.1:4222', namespace: 'shared' },
        ]),
      },
    });
    token = await t.token('admin');
    document = (await request(t.baseUrl, 'GET', '/docs-json')).body;
    contract = new ResponseContract(document);
    ajv = documentAjv(document);
    arbitraries = new SchemaArbitraries(document, `${t.baseUrl}/receiver`);
    const created = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token,
      body: {
        url: `${t.baseUrl}/receiver`,
        events: ['job.started'],
        secret: 'contract-secret-0123456789',
      },
    });
    expect(created.status).toBe(201);
    webhookId = created.body.id as string;
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  /** Text as the service reads it off the URL, a header or a form part: text, or a number or boolean it spells. */
  function wireText(schema: Json, value: unknown): unknown {
    const text = String(value);
    const type = arbitraries.resolve(schema).type as string | undefined;
    if ((type === 'integer' || type === 'number') && /^-?[0-9]+(\.[0-9]+)?$/.test(text)) {
      return Number(text);
    }
    if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
    return text;
  }

  /** A body as it arrives: a multipart body's parts are text, read as its schema types them. */
  function wireBody(op: Operation, body: unknown): unknown {
    if (op.body?.mediaType !== 'multipart/form-data' || typeof body !== 'object' || !body) {
      return body;
    }
    const properties = (arbitraries.resolve(op.body.schema).properties ?? {}) as Record<
      string,
      Json
    >;
    return Object.fromEntries(
      Object.entries(body).map(([name, value]) => [name, wireText(properties[name] ?? {}, value)]),
    );
  }

  /** The parts of the draw the document refuses (none: a valid draw). */
  function brokenParts(op: Operation, draw: Draw): string[] {
    const out: string[] = [];
    for (const p of op.parameters) {
      const value = draw.params[p.name];
      if (value === undefined) {
        if (p.required) out.push(`${p.name} missing`);
      } else if (!validatorOf(p.schema)(wireText(p.schema, value))) out.push(p.name);
    }
    if (op.body && (draw.body !== undefined || op.body.required)) {
      if (!validatorOf(op.body.schema)(wireBody(op, draw.body))) out.push('body');
    }
    return out;
  }

  function validDraws(op: Operation, seed: number, count: number): Draw[] {
    const params: Record<string, fc.Arbitrary<unknown>> = {};
    for (const p of op.parameters) {
      const drawn = arbitraries.valid(p.schema);
      // Half the ids name the webhook made above, so routes get past their 404.
      params[p.name] =
        p.name === 'id' && op.template.startsWith('/api/webhooks/')
          ? fc.oneof(fc.constant(webhookId), drawn)
          : drawn;
    }
    const required = op.parameters.filter((p) => p.required).map((p) => p.name);
    const draw = fc
      .record({
        params: fc.record(params, { requiredKeys: required }).map(ordered),
        body: op.body ? arbitraries.valid(op.body.schema) : fc.constant(undefined),
      })
      .map((d): Draw => ({
        params: d.params,
        body:
          d.body && typeof d.body === 'object'
            ? ordered(d.body as Record<string, unknown>)
            : d.body,
      }))
      .filter((d) => brokenParts(op, d).length === 0);
    return fc.sample(draw, { seed, numRuns: count });
  }

  function invalidDraws(op: Operation, valid: Draw[], count: number): Case[] {
    const out: Case[] = [];
    for (const base of valid) {
      const candidates: Case[] = [];
      for (const p of op.parameters) {
        if (p.required && p.in === 'query') {
          const params = { ...base.params };
          delete params[p.name];
          candidates.push({
            draw: { ...base, params },
            broken: `${p.name} missing`,
            field: p.name,
          });
        }
        for (const m of arbitraries.invalid(p.schema, base.params[p.name])) {
          // A header travels as text: only what text can break is a broken header; an empty
          // path value is no value (the URL names another route).
          if (p.in !== 'header' && !(p.in === 'path' && m.value === '')) {
            candidates.push({
              draw: { ...base, params: { ...base.params, [p.name]: m.value } },
              broken: `${p.name}: ${m.broken}`,
              field: p.name,
            });
          }
        }
      }
      if (op.body) {
        const form = op.body.mediaType === 'application/x-www-form-urlencoded';
        const parts = op.body.mediaType === 'multipart/form-data';
        for (const m of arbitraries.invalid(op.body.schema, base.body)) {
          // A form carries text only: a broken type would arrive as its text, which may fit;
          // a multipart body is parts, never anything but an object of them.
          const object = typeof m.value === 'object' && m.value !== null;
          const text =
            object && Object.values(m.value as object).every((v) => typeof v === 'string');
          if ((!form || text) && (!parts || object)) {
            candidates.push({
              draw: { ...base, body: m.value },
              broken: `body ${m.broken}`,
              field: m.field?.join('.') ?? 'body',
            });
          }
        }
      }
      const still = candidates.filter((c) => brokenParts(op, c.draw).length > 0);
      // Spread over the ways to break it: the n-th valid draw gives the n-th way (and wraps).
      if (still.length > 0) out.push(still[out.length % still.length]);
      if (out.length >= count) break;
    }
    return out;
  }

  /** A multipart/form-data body: a binary field as a file part, every other as a text part. */
  function multipart(schema: Json, body: Record<string, unknown>): { type: string; text: string } {
    const boundary = 'contract-boundary-7MA4YWxkTrZu0gW';
    const properties = (arbitraries.resolve(schema).properties ?? {}) as Record<string, Json>;
    const parts = Object.entries(body).map(([name, value]) => {
      const file = arbitraries.resolve(properties[name] ?? {}).format === 'binary';
      const disposition = `form-data; name="${name}"${file ? '; filename="upload.png"' : ''}`;
      return `--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n${String(value)}\r\n`;
    });
    return {
      type: `multipart/form-data; boundary=${boundary}`,
      text: `${parts.join('')}--${boundary}--\r\n`,
    };
  }

  /**
   * A request sent as bytes: fetch, as every WHATWG URL parser, resolves a `.` or `..` segment
   * away even spelled `%2E%2E`, but other clients send it as written.
   */
  async function raw(method: string, url: string, headers: Record<string, string>, body?: string) {
    const lines = [`${method} ${url} HTTP/1.1`, `host: ${new URL(t.baseUrl).host}`];
    lines.push(`authorization: Bearer ${token}`, 'connection: close');
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    if (body !== undefined) lines.push(`content-length: ${Buffer.byteLength(body)}`);
    const answer = await rawExchange(t.baseUrl, `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`, {
      untilAnswered: true,
    });
    const split = answer.text.indexOf('\r\n\r\n');
    const type = /\r\ncontent-type: *([^\r\n]*)/i.exec(answer.text.slice(0, split));
    return {
      status: answer.status ?? 0,
      headers: new Headers(type ? { 'content-type': type[1] } : {}),
      body: answer.body as Json,
      text: Buffer.from(answer.text.slice(split + 4), 'latin1').toString('utf8'),
    };
  }

  async function send(op: Operation, draw: Draw) {
    let path = op.template;
    let dotted = false;
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    for (const p of op.parameters) {
      const value = draw.params[p.name];
      if (value === undefined) continue;
      const text = String(value);
      // Dots encoded too: a client's URL parser would resolve a `..` segment away.
      if (p.in === 'path') {
        dotted ||= text.split('/').some((part) => part === '.' || part === '..');
        path = path.replace(`{${p.name}}`, encodeURIComponent(text).replace(/\./g, '%2E'));
      } else if (p.in === 'query') query.set(p.name, text);
      else headers[p.name] = text;
    }
    const url = query.size > 0 ? `${path}?${query.toString()}` : path;
    let body: string | undefined;
    if (op.body && draw.body !== undefined) {
      headers['content-type'] = op.body.mediaType;
      if (op.body.mediaType === 'application/x-www-form-urlencoded') {
        body = new URLSearchParams(draw.body as Record<string, string>).toString();
      } else if (op.body.mediaType === 'multipart/form-data') {
        const form = multipart(op.body.schema, draw.body as Record<string, unknown>);
        headers['content-type'] = form.type;
        body = form.text;
      } else body = JSON.stringify(draw.body);
    }
    const res = dotted
      ? await raw(op.method.toUpperCase(), url, headers, body)
      : await request(t.baseUrl, op.method.toUpperCase(), url, { token, headers, body });
    const record: RecordedResponse = {
      method: op.method.toUpperCase(),
      url,
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
      body: Buffer.from(res.text),
    };
    return { url, body, res, problems: contract.problemsOf(record) };
  }

  /** The verdict on one answer, or null when it is as the document says. */
  function verdictOf(op: Operation, c: Case, status: number, answer: Json, reached: string[]) {
    if (!op.platform) {
      if (c.broken === undefined) {
        if (status < 300 || NOT_A_REFUSAL.has(status)) return null;
        // Trying a template evaluates it: its failure on this body is the documented 400 naming
        // `template` with the reason (docs/templates.md), not a refusal of the request's shape.
        const tried =
          op.template === '/api/templates/render' &&
          status === 400 &&
          (answer?.details as Json[] | undefined)?.some(
            (d) => d.field === 'template' && String(d.message).startsWith('template:'),
          );
        return tried ? null : 'a valid request refused';
      }
      return status >= 400 && status < 500
        ? null
        : `an invalid request (${c.broken}) not refused with a 4xx`;
    }
    // The contract-mode fake answers every call its document accepts with a 2xx.
    if (c.broken === undefined) return status < 300 ? null : 'a valid request refused';
    if (status !== 400) return `an invalid request (${c.broken}) not refused with a 400`;
    if (reached.length > 0) {
      return `an invalid request (${c.broken}) reached the platform: ${reached.join(', ')}`;
    }
    // A body the JSON parser refuses is named by its message: "Request body is not valid JSON".
    const parser = c.field === 'body' && /^Request body/.test(String(answer?.message));
    return parser || named(answer?.details, c.field ?? '')
      ? null
      : `an invalid request (${c.broken}) refused without naming ${c.field}`;
  }

  /** Whether a parameter's text can break the document: some rule beyond "text". */
  function breakable(p: Parameter): boolean {
    const s = arbitraries.resolve(p.schema);
    if (p.required && p.in === 'query') return true;
    if (s.type !== undefined && s.type !== 'string') return true;
    return ['enum', 'pattern', 'format', 'minLength', 'maxLength'].some((k) => s[k] !== undefined);
  }

  async function walk(platform: boolean, valid: number, invalid: number): Promise<void> {
    const failures: string[] = [];
    const excused = new Map<string, number>();
    // The install callback answers a person's browser, and only to a state an install made:
    // no generated request can hold one (accounts.e2e drives it, docs/accounts.md).
    const operations = operationsOf(document).filter(
      (op) => op.platform === platform && op.template !== '/zoom/oauth/callback',
    );
    // Every operation that takes a parameter or a body is sent at least one broken request.
    const untested: string[] = [];
    for (const [index, op] of operations.entries()) {
      const where = `${op.method.toUpperCase()} ${op.template}`;
      const drawn = validDraws(op, SEED + index, valid);
      const cases: Case[] = [
        ...drawn.map((draw) => ({ draw })),
        ...invalidDraws(op, drawn, invalid),
      ];
      if (
        (op.body || op.parameters.some((p) => p.in !== 'header' && breakable(p))) &&
        cases.length === drawn.length
      ) {
        untested.push(where);
      }
      for (const c of cases) {
        const before = fake.requests.length;
        const sent = await send(op, c.draw);
        const status = sent.res.status;
        const reached = fake.requests
          .slice(before)
          .filter((r) => r.apiPath !== undefined)
          .map((r) => `${r.method} ${r.rawUrl}`);
        const verdict = verdictOf(op, c, status, sent.res.body, reached);
        for (const problem of verdict ? [verdict, ...sent.problems] : sent.problems) {
          const failure = `${where}: ${problem}\n  request: ${op.method.toUpperCase()} ${sent.url} ${sent.body ?? ''}\n  answer: ${status} ${sent.res.text.slice(0, 400)}`;
          const excuse = excusedBy(op.id, failure);
          if (excuse) excused.set(excuse.name, (excused.get(excuse.name) ?? 0) + 1);
          else failures.push(failure);
        }
      }
    }
    expect(untested).toEqual([]);
    if (failures.length > 0) {
      throw new Error(
        `${failures.length} failures (CONTRACT_SEED=${SEED}):\n${failures.slice(0, 20).join('\n')}\n` +
          [...new Set(failures.map((f) => f.split('\n')[0].replace(/\(.*?\)/, '(…)')))].join('\n'),
      );
    }
  }

  describe("the review's disagreements, one by one", () => {
    /** The REST calls the fake platform received while `run` ran. */
    async function reaching(run: () => Promise<void>): Promise<string[]> {
      const before = fake.requests.length;
      await run();
      return fake.requests
        .slice(before)
        .filter((r) => r.apiPath !== undefined)
        .map((r) => `${r.method} ${r.apiPath}`);
    }
    const parameter = (template: string, method: string, name: string): Json =>
      (document.paths[template][method].parameters as Parameter[]).find((p) => p.name === name)
        ?.schema;

    it('takes every e-mail address the document’s `format: email` (RFC 5321) does', async () => {
      for (const email of ['"jo bloggs"@example.com', 'jo@[192.0.2.1]', 'jo@[IPv6:2001:db8::1]']) {
        for (const path of [
          '/api/users/jchill@example.com/meetings',
          '/api/users/jchill@example.com/webinars',
        ]) {
          const sent = await reaching(async () => {
            const res = await request(t.baseUrl, 'POST', path, {
              token,
              body: { topic: 'x', settings: { meeting_invitees: [{ email }] } },
            });
            expect({ email, path, status: res.status }).toEqual({ email, path, status: 201 });
          });
          expect(sent).toHaveLength(1);
        }
      }
    });

    it("states a meeting's start_time rule in the document: an offset is refused by both", async () => {
      const body =
        document.paths['/api/users/{userId}/meetings'].post.requestBody.content['application/json']
          .schema;
      const startTime = arbitraries.resolve(arbitraries.resolve(body).properties.start_time);
      const utc = new RegExp(startTime.pattern as string, 'u');
      for (const [value, status] of [
        ['2025-01-31T14:00:00Z', 201],
        ['2025-01-31T15:00:00+01:00', 400],
      ] as const) {
        expect(utc.test(value)).toBe(status === 201);
        const res = await request(t.baseUrl, 'POST', '/api/users/jchill@example.com/meetings', {
          token,
          body: { topic: 'x', type: 2, start_time: value },
        });
        expect({ value, status: res.status }).toEqual({ value, status });
      }
    });

    it('states the download route’s id rules in the document, and refuses only what they refuse', async () => {
      const template = '/api/meetings/{meetingId}/recordings/{fileId}/download';
      const fileId = parameter(template, 'get', 'fileId');
      const meetingId = parameter(template, 'get', 'meetingId');
      expect(fileId.pattern).toEqual(expect.any(String));
      expect(meetingId.pattern).toEqual(expect.any(String));
      for (const [value, admitted] of [
        ['ed6c2f27-2ae7-42f4-b3d0-835b493e4fa8', true],
        ['timeline-0123abcd', true],
        ['a b', false],
        ['x/y', false],
      ] as const) {
        expect(new RegExp(fileId.pattern as string, 'u').test(value)).toBe(admitted);
        const res = await request(
          t.baseUrl,
          'GET',
          `/api/meetings/85746065432/recordings/${encodeURIComponent(value)}/download`,
          { token },
        );
        // Admitted: looked up in the fake's recording, which lists no such file.
        expect({ value, status: res.status }).toEqual({ value, status: admitted ? 404 : 400 });
      }
    });

    it('refuses an upload without its required file part, before the platform', async () => {
      const path = '/api/webinars/85746065432/branding/wallpaper';
      expect(
        document.paths['/api/webinars/{webinarId}/branding/wallpaper'].post.requestBody.required,
      ).toBe(true);
      const boundary = 'b0undary';
      const noFile =
        `--${boundary}\r\nContent-Disposition: form-data; name="note"; filename="file"\r\n\r\nx\r\n` +
        `--${boundary}--\r\n`;
      const sent = await reaching(async () => {
        const none = await request(t.baseUrl, 'POST', path, {
          token,
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        });
        expect(none.status).toBe(400);
        expect(none.body.details).toEqual([
          { field: 'body', message: expect.stringContaining('required') },
        ]);
        const without = await request(t.baseUrl, 'POST', path, {
          token,
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
          body: noFile,
        });
        expect(without.status).toBe(400);
        expect(without.body.details).toEqual([
          { field: 'file', message: 'file is required (a multipart/form-data part)' },
        ]);
      });
      expect(sent).toEqual([]);
      const withFile =
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="w.png"\r\n\r\nPNG\r\n` +
        `--${boundary}--\r\n`;
      const ok = await request(t.baseUrl, 'POST', path, {
        token,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: withFile,
      });
      expect(ok.status).toBe(201);
    });

    it('states on text path parameters the refusal of `.` and `..`', async () => {
      const template = '/api/meetings/{meetingId}/registrants/{registrantId}';
      const schema = parameter(template, 'get', 'registrantId');
      expect(new RegExp(schema.pattern as string, 'u').test('..')).toBe(false);
      const res = await raw('GET', '/api/meetings/85746065432/registrants/%2E%2E', {});
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([
        { field: 'registrantId', message: expect.stringContaining('".."') },
      ]);
    });
  });

  it('passes on every valid request to each of the 156 platform operations, and refuses every invalid one before the platform', async () => {
    expect(operationsOf(document).filter((op) => op.platform)).toHaveLength(156);
    await walk(true, PLATFORM_VALID_CASES, PLATFORM_INVALID_CASES);
  }, 300_000);

  it('publishes only ECMA-262 patterns, each read alike by every JSON Schema tool', () => {
    const patterns: string[] = [];
    const collect = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(collect);
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === 'pattern' && typeof value === 'string') patterns.push(value);
          else if (key !== 'example' && key !== 'examples') collect(value);
        }
      }
    };
    collect(document);
    expect(patterns.length).toBeGreaterThan(50);
    const unreadable = [...new Set(patterns)].filter((p) => {
      try {
        new RegExp(p, 'u');
      } catch {
        return true;
      }
      // Inline flags, possessive quantifiers, \A \Z, named groups in Python's spelling, \d and
      // \w and \s (which mean more in other engines): none is ECMA-262's, or none reads alike.
      return /\(\?[a-zA-Z]|\(\?P<|[*+?}]\+|\\[AZzdDwWsS]/.test(p);
    });
    expect(unreadable).toEqual([]);
  });

  it('names each platform spec error it excuses in docs/api.md, and no other', () => {
    const api = readFileSync(resolve(__dirname, '..', 'docs', 'api.md'), 'utf8');
    const heading = "### The platform's spec errors we work around";
    const start = api.indexOf(heading);
    expect(start).toBeGreaterThan(0);
    const section = api.slice(start + heading.length, api.indexOf('\n#', start + heading.length));
    const documented = [...section.matchAll(/^- \*\*(.+?)\*\*/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(PLATFORM_SPEC_ERRORS.map((e) => e.name).sort());
  });

  // Last: its reconciliations read the fake platform's reports in the background, which the
  // walk above would take for requests passed on.
  it('answers every generated request to its own API as its document says', async () => {
    expect(operationsOf(document).filter((op) => !op.platform).length).toBeGreaterThan(15);
    await walk(false, VALID_CASES, INVALID_CASES);
  }, 180_000);
});

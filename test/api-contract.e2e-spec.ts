import fc from 'fast-check';
import type { ValidateFunction } from 'ajv';
import { Json, request } from './support/http';
import { RecordedResponse, ResponseContract, documentAjv } from './support/response-contract';
import { SchemaArbitraries } from './support/schema-arbitrary';
import { TestApp, startTestApp } from './support/test-app';

/**
 * The contract test of docs/development.md#contract-testing-with-schemathesis, in the suite:
 * for every operation of the service's own API (not the platform passthrough), requests drawn
 * from /docs-json, valid ones and ones that break one constraint, sent with a token holding
 * every scope. Every answer's status must be documented for the operation and its body valid
 * for that status; a valid request is never refused for a reason the document does not state
 * (400, 422, 5xx), an invalid one is refused with a 4xx.
 */

const PASSTHROUGH_TAGS = new Set(['meetings', 'webinars', 'users', 'recordings', 'reports']);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const VALID_CASES = 12;
const INVALID_CASES = 10;
/** What a valid request may be answered besides 2xx: no token scope, no such id, a conflict, the test route's rate limit. */
const NOT_A_REFUSAL = new Set([401, 403, 404, 409, 429]);
const SEED = Number(process.env.CONTRACT_SEED ?? Date.now() % 2 ** 31);

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Json;
}

interface Operation {
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
      if (!op || (op.tags as string[]).some((t) => PASSTHROUGH_TAGS.has(t))) continue;
      const content = op.requestBody?.content as Record<string, Json> | undefined;
      const mediaType = content ? Object.keys(content)[0] : undefined;
      out.push({
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

describe('The service’s own API against its document (generated requests)', () => {
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
    t = await startTestApp({
      env: {
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
  });

  /** A parameter as the service reads it off the URL or a header: text, or a number or boolean it spells. */
  function wireValue(p: Parameter, value: unknown): unknown {
    const text = String(value);
    const type = arbitraries.resolve(p.schema).type as string | undefined;
    if ((type === 'integer' || type === 'number') && /^-?[0-9]+(\.[0-9]+)?$/.test(text)) {
      return Number(text);
    }
    if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
    return text;
  }

  /** The parts of the draw the document refuses (none: a valid draw). */
  function brokenParts(op: Operation, draw: Draw): string[] {
    const out: string[] = [];
    for (const p of op.parameters) {
      const value = draw.params[p.name];
      if (value === undefined) {
        if (p.required) out.push(`${p.name} missing`);
      } else if (!validatorOf(p.schema)(wireValue(p, value))) out.push(p.name);
    }
    if (op.body && (draw.body !== undefined || op.body.required)) {
      if (!validatorOf(op.body.schema)(draw.body)) out.push('body');
    }
    return out;
  }

  function validDraws(op: Operation, seed: number): Draw[] {
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
    return fc.sample(draw, { seed, numRuns: VALID_CASES });
  }

  function invalidDraws(op: Operation, valid: Draw[]): { draw: Draw; broken: string }[] {
    const out: { draw: Draw; broken: string }[] = [];
    for (const base of valid) {
      const candidates: { draw: Draw; broken: string }[] = [];
      for (const p of op.parameters) {
        for (const m of arbitraries.invalid(p.schema, base.params[p.name])) {
          // A header travels as text: only what text can break is a broken header.
          if (p.in !== 'header') {
            candidates.push({
              draw: { ...base, params: { ...base.params, [p.name]: m.value } },
              broken: `${p.name}: ${m.broken}`,
            });
          }
        }
      }
      if (op.body) {
        const form = op.body.mediaType === 'application/x-www-form-urlencoded';
        for (const m of arbitraries.invalid(op.body.schema, base.body)) {
          // A form carries text only: a broken type would arrive as its text, which may fit.
          const text =
            typeof m.value === 'object' &&
            m.value !== null &&
            Object.values(m.value).every((v) => typeof v === 'string');
          if (!form || text) {
            candidates.push({ draw: { ...base, body: m.value }, broken: `body ${m.broken}` });
          }
        }
      }
      const still = candidates.filter((c) => brokenParts(op, c.draw).length > 0);
      // Spread over the ways to break it: the n-th valid draw gives the n-th way (and wraps).
      if (still.length > 0) out.push(still[out.length % still.length]);
      if (out.length >= INVALID_CASES) break;
    }
    return out;
  }

  async function send(op: Operation, draw: Draw) {
    let path = op.template;
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    for (const p of op.parameters) {
      const value = draw.params[p.name];
      if (value === undefined) continue;
      const text = String(value);
      if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(text));
      else if (p.in === 'query') query.set(p.name, text);
      else headers[p.name] = text;
    }
    const url = query.size > 0 ? `${path}?${query.toString()}` : path;
    let body: string | undefined;
    if (op.body && draw.body !== undefined) {
      headers['content-type'] = op.body.mediaType;
      body =
        op.body.mediaType === 'application/x-www-form-urlencoded'
          ? new URLSearchParams(draw.body as Record<string, string>).toString()
          : JSON.stringify(draw.body);
    }
    const res = await request(t.baseUrl, op.method.toUpperCase(), url, { token, headers, body });
    const record: RecordedResponse = {
      method: op.method.toUpperCase(),
      url,
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
      body: Buffer.from(res.text),
    };
    return { url, body, res, problems: contract.problemsOf(record) };
  }

  it('answers every generated request as its document says', async () => {
    const failures: string[] = [];
    const operations = operationsOf(document);
    // Every operation that takes a parameter or a body is sent at least one broken request.
    const untested: string[] = [];
    expect(operations.length).toBeGreaterThan(15);
    for (const [index, op] of operations.entries()) {
      const where = `${op.method.toUpperCase()} ${op.template}`;
      const valid = validDraws(op, SEED + index);
      const cases = [
        ...valid.map((draw) => ({ draw, broken: undefined as string | undefined })),
        ...invalidDraws(op, valid),
      ];
      if (
        (op.body || op.parameters.some((p) => p.in !== 'header')) &&
        cases.length === valid.length
      ) {
        untested.push(where);
      }
      for (const { draw, broken } of cases) {
        const sent = await send(op, draw);
        const status = sent.res.status;
        const verdict =
          broken === undefined
            ? status < 300 || NOT_A_REFUSAL.has(status)
              ? null
              : 'a valid request refused'
            : status >= 400 && status < 500
              ? null
              : `an invalid request (${broken}) not refused with a 4xx`;
        for (const problem of verdict ? [verdict, ...sent.problems] : sent.problems) {
          failures.push(
            `${where}: ${problem}\n  request: ${op.method.toUpperCase()} ${sent.url} ${sent.body ?? ''}\n  answer: ${status} ${sent.res.text.slice(0, 400)}`,
          );
        }
      }
    }
    expect(untested).toEqual([]);
    if (failures.length > 0) {
      throw new Error(
        `${failures.length} failures (CONTRACT_SEED=${SEED}):\n${failures.slice(0, 20).join('\n')}`,
      );
    }
  }, 180_000);
});

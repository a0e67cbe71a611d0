import { createHmac } from 'node:crypto';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';

/**
 * Generators of hostile HTTP requests for the fuzz suite (test/fuzz.e2e-spec.ts): each case
 * is the exact bytes of one request, described for the failure message. What is generated
 * comes from the attacks seen so far (issue 17) and the usual suspects: values PostgreSQL or
 * the parsers refuse, nesting, encodings, broken HTTP.
 */
export interface HostileRequest {
  /** What the case is, for the failure report. */
  label: string;
  bytes: Buffer;
}

/** Strings that have broken parsers, databases and URL handling elsewhere. */
const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '\uffff',
  '\u202e',
  '😀'.repeat(50),
  '..',
  '.',
  '../../etc/passwd',
  '%00',
  '%',
  '%ff',
  '%c0%af',
  "' OR 1=1 --",
  '"; DROP TABLE webhooks; --',
  '${jndi:ldap://x/a}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  'prototype',
  'me',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '-1',
  '0x10',
  '9'.repeat(40),
  '+275760-09-13T00:00:00.000Z',
  '-271821-04-20T00:00:00.000Z',
  '0000-01-01T00:00:00.000Z',
  '-000001-01-01T00:00:00.000Z',
  '2026-02-30T00:00:00Z',
  '2026-13-01',
  '24:00',
  'http://[::7f00:1]/',
  'http://[::a9fe:a9fe]/latest/meta-data',
  'http://169.254.169.254/',
  'http://127.0.0.1:6379/',
  'http://localhost/',
  'file:///etc/passwd',
  'gopher://127.0.0.1:6379/_FLUSHALL',
  'https://user:pass@example.com/',
  '//example.com',
  'x'.repeat(5000),
  '6f1c5c3e-0000-4000-8000-000000000000',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
];

const nastyString = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY_STRINGS), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
);

const nastyNumber = fc.oneof(
  fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53, -(2 ** 63), 1e308, -1e308, 5e-324),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** A JSON leaf: strings, numbers, booleans, null. */
const nastyLeaf: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: nastyString, weight: 4 },
  { arbitrary: nastyNumber, weight: 2 },
  { arbitrary: fc.constantFrom(true, false, null), weight: 1 },
);

/** Field names this service and the platform read, so values get past "unknown field". */
const KNOWN_FIELDS = [
  'url',
  'events',
  'secret',
  'active',
  'description',
  'grant_type',
  'client_id',
  'client_secret',
  'scope',
  'topic',
  'type',
  'start_time',
  'duration',
  'timezone',
  'password',
  'agenda',
  'settings',
  'recurrence',
  'action',
  'status',
  'email',
  'first_name',
  'occurrence_id',
  'schedule_for',
  'registrants',
  'id',
  'uuid',
];

const nastyValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { arbitrary: nastyLeaf, weight: 5 },
    { arbitrary: fc.array(tie('value'), { maxLength: 4 }), weight: 1 },
    {
      arbitrary: fc.dictionary(
        fc.oneof(fc.constantFrom(...KNOWN_FIELDS), nastyString),
        tie('value'),
        {
          maxKeys: 4,
        },
      ),
      weight: 1,
    },
  ),
})).value;

/** An object of known fields with hostile values: reaches validation, services, the database. */
const nastyObject = fc.dictionary(fc.constantFrom(...KNOWN_FIELDS), nastyValue, {
  minKeys: 1,
  maxKeys: 8,
});

/** JSON text nested past the limit (64), as arrays or objects; JSON.stringify could not make it. */
const deepText = fc
  .tuple(
    // Just past the limit, and past where recursion runs out of stack (about 1,500).
    fc.oneof(fc.constantFrom(65, 1_500, 10_000, 100_000), fc.integer({ min: 65, max: 100_000 })),
    fc.constantFrom('[', '{"a":'),
  )
  .map(([depth, open]) => open.repeat(depth) + '1' + (open === '[' ? ']' : '}').repeat(depth));

const deepJson = fc
  .tuple(deepText, fc.boolean())
  .map(([deep, wrapped]) =>
    wrapped ? `{"url":"http://x.example/","events":["job.started"],"x":${deep}}` : deep,
  );

const brokenJson = fc.constantFrom(
  '{',
  '{"a":',
  '{"a":1,}',
  "{'a':1}",
  '{"a":NaN}',
  '{"a":1e400}',
  '\ufeff{}',
  '[]',
  'null',
  '"string"',
  '{"a":1}{"a":2}',
  '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  `{"a":"${'\\u0000'.repeat(1000)}"}`,
  `{${Array.from({ length: 5000 }, (_, i) => `"k${i}":${i}`).join(',')}}`,
  `[${'1,'.repeat(100_000)}1]`,
);

/** A request body as text or bytes. */
const body: fc.Arbitrary<Buffer> = fc.oneof(
  { arbitrary: nastyObject.map((o) => Buffer.from(JSON.stringify(o))), weight: 6 },
  { arbitrary: nastyValue.map((v) => Buffer.from(JSON.stringify(v) ?? 'null')), weight: 2 },
  { arbitrary: deepJson.map((s) => Buffer.from(s)), weight: 3 },
  { arbitrary: brokenJson.map((s) => Buffer.from(s)), weight: 2 },
  {
    arbitrary: fc.uint8Array({ maxLength: 2000 }).map((a) => Buffer.from(a)),
    weight: 1,
  },
  { arbitrary: fc.constant(Buffer.alloc(1024 * 1024 + 10, 'a')), weight: 1 },
);

/** How a body is encoded: truthfully, or with a Content-Encoding it does not have. */
const ENCODINGS = {
  identity: (b: Buffer) => b,
  gzip: gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync,
} as const;
type EncodingCase =
  { header: keyof typeof ENCODINGS; truthful: boolean } | { header: string; truthful: false };
const encoding: fc.Arbitrary<EncodingCase | null> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 6 },
  {
    arbitrary: fc.record({
      header: fc.constantFrom('identity', 'gzip', 'deflate', 'br') as fc.Arbitrary<
        keyof typeof ENCODINGS
      >,
      truthful: fc.boolean(),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      header: fc.constantFrom('x-squash', 'gzip, br', 'GZIP', 'zstd', 'compress', '*', ''),
      truthful: fc.constant(false as const),
    }),
    weight: 1,
  },
);

function encode(bytes: Buffer, enc: EncodingCase | null): { bytes: Buffer; header?: string } {
  if (enc === null) return { bytes };
  const compress = (ENCODINGS as Record<string, ((b: Buffer) => Buffer) | undefined>)[enc.header];
  return { bytes: enc.truthful && compress ? compress(bytes) : bytes, header: enc.header };
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=koi8-r',
  'application/json; charset=utf-16le',
  'application/json; charset=nonsense',
  'application/x-www-form-urlencoded',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/json;;;',
  'application/*',
  '',
];
const contentType = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 6 },
  { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 3 },
);

/** A header value that is legal on the wire (else Node refuses the whole request, also fine). */
const headerValue = fc.oneof(
  fc.constantFrom(...NASTY_STRINGS.filter((s) => /^[\x20-\x7e]*$/.test(s))),
  fc.string({ unit: 'binary-ascii', maxLength: 60 }).map((s) => s.replace(/[\r\n]/g, ' ')),
);

const EXTRA_HEADERS = [
  'x-request-id',
  'accept',
  'accept-encoding',
  'x-forwarded-for',
  'x-forwarded-proto',
  'range',
  'if-none-match',
  'origin',
  'cookie',
  'x-http-method-override',
  'x-zm-signature',
  'x-zm-request-timestamp',
  'x-zm-trackingid',
  'expect',
  'user-agent',
  'referer',
];
const extraHeaders = fc.array(fc.tuple(fc.constantFrom(...EXTRA_HEADERS), headerValue), {
  maxLength: 4,
});

export interface Credentials {
  bearer: string;
  basic: string;
}
const authorization = (credentials: Credentials) =>
  fc.oneof(
    { arbitrary: fc.constant(`Bearer ${credentials.bearer}`), weight: 6 },
    { arbitrary: fc.constant(null), weight: 1 },
    { arbitrary: fc.constant(`Basic ${credentials.basic}`), weight: 1 },
    {
      arbitrary: headerValue.map((v) => `Bearer ${v}`),
      weight: 1,
    },
    {
      arbitrary: fc.constantFrom(
        'Basic !!!',
        `Basic ${Buffer.from(':').toString('base64')}`,
        `Basic ${Buffer.from('x'.repeat(3000)).toString('base64')}`,
        'Bearer',
        'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbHBoYSJ9.',
        'Digest x',
      ),
      weight: 1,
    },
  );

/** A path segment: a hostile value, percent-encoded properly or not at all, or broken. */
const segment = fc.oneof(
  { arbitrary: fc.constant('6f1c5c3e-0000-4000-8000-000000000000'), weight: 3 },
  { arbitrary: fc.constantFrom('85746065432', 'x1yCzABCDEfg23HiJKl4mN', 'me', 'a@b.c'), weight: 2 },
  {
    arbitrary: nastyString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, 'x'))),
    weight: 3,
  },
  {
    arbitrary: fc.constantFrom(
      '%',
      '%G1',
      '%ff',
      '%c0%af',
      '%00',
      '%2e%2e',
      '..',
      '.',
      '%2F%2F',
      ';x=1',
    ),
    weight: 2,
  },
);

const fillPath = (template: string) =>
  fc.array(segment, { minLength: 8, maxLength: 8 }).map((values) => {
    let i = 0;
    return template
      .replace(/\{\*[A-Za-z]+\}/g, () => `${values[i++]}/${values[i++]}`)
      .replace(/:[A-Za-z]+/g, () => values[i++ % values.length]);
  });

/** A cursor as a client could craft it: base64url of JSON, with times PostgreSQL may refuse. */
const cursor = fc.oneof(
  {
    // Mostly well-formed but for the time, so that it is the time that reaches the query.
    arbitrary: fc
      .tuple(
        fc.oneof(
          {
            arbitrary: fc.constantFrom(...NASTY_STRINGS.filter((s) => /\d{4}|^[-+]\d/.test(s))),
            weight: 3,
          },
          // Any time JavaScript can hold: years from -271821 to +275760.
          { arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), weight: 2 },
          { arbitrary: nastyString, weight: 1 },
        ),
        fc.oneof({ arbitrary: fc.uuid(), weight: 3 }, { arbitrary: nastyString, weight: 1 }),
      )
      .map((pair) => Buffer.from(JSON.stringify(pair)).toString('base64url')),
    weight: 4,
  },
  {
    arbitrary: nastyValue.map((v) => Buffer.from(JSON.stringify(v) ?? '').toString('base64url')),
    weight: 1,
  },
  {
    arbitrary: nastyString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, 'x'))),
    weight: 1,
  },
);

const QUERY_KEYS = [
  'limit',
  'cursor',
  'status',
  'event',
  'page_size',
  'next_page_token',
  'page_number',
  'from',
  'to',
  'type',
  'file_type',
  'occurrence_id',
  'schedule_for_reminder',
  'trash',
  'mc',
  'include_fields',
  'delete_all',
];
const queryPair = fc.oneof(
  { arbitrary: fc.tuple(fc.constant('cursor'), cursor).map(([k, v]) => `${k}=${v}`), weight: 2 },
  fc
    .tuple(
      fc.constantFrom(...QUERY_KEYS),
      fc.oneof(
        nastyString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, 'x'))),
        fc.constantFrom('%', '%ZZ', '1&limit=2', '', '0', '101', '-1', '1e1', ' 5'),
      ),
    )
    .map(([k, v]) => `${k}=${v}`),
  fc.constantFrom('limit', '&&&', '=', '%=%', 'a[b]=1', 'a[__proto__][x]=1', 'limit=1&limit=2'),
);
const query = fc.oneof(
  { arbitrary: fc.constant(''), weight: 2 },
  {
    arbitrary: fc.array(queryPair, { minLength: 1, maxLength: 5 }).map((p) => `?${p.join('&')}`),
    weight: 2,
  },
  // A lone cursor: any other unknown parameter would be refused before the cursor is read.
  { arbitrary: cursor.map((c) => `?cursor=${c}`), weight: 3 },
);

function http(
  method: string,
  target: string,
  headers: [string, string][],
  payload: Buffer | null,
): Buffer {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [name, value] of headers) lines.push(`${name}: ${value}`);
  if (payload !== null) lines.push(`Content-Length: ${payload.length}`);
  return Buffer.concat([
    Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'),
    payload ?? Buffer.alloc(0),
  ]);
}

const describeHeaders = (headers: [string, string][]) =>
  headers.map(([n, v]) => `${n}: ${v.slice(0, 80)}`).join(' | ');

/** A request to one of the app's routes with hostile path, query, headers and body. */
export function routeRequest(
  routes: [string, string][],
  credentials: Credentials,
): fc.Arbitrary<HostileRequest> {
  return (
    fc
      .record({
        // A third of the time a route that takes a body (validation and the database are behind
        // it), a third a GET, where the query string (and the cursor) is read.
        route: fc.oneof(
          ...[
            routes,
            routes.filter(([method]) => ['POST', 'PUT', 'PATCH'].includes(method)),
            routes.filter(([method]) => method === 'GET'),
          ]
            .filter((pool) => pool.length > 0)
            .map((pool) => fc.constantFrom(...pool)),
        ),
        auth: authorization(credentials),
        contentType,
        encoding,
        extra: extraHeaders,
        query,
        body: fc.option(body, { nil: null, freq: 4 }),
      })
      // Methods that carry a body nearly always get one; others now and then.
      .chain((c) =>
        ['POST', 'PUT', 'PATCH'].includes(c.route[0]) || c.body === null
          ? fc.constant(c)
          : fc.nat(4).map((n) => (n === 0 ? c : { ...c, body: null })),
      )
      .chain((c) => fillPath(c.route[1]).map((path) => ({ ...c, path })))
      .map(
        ({
          route: [method],
          path,
          auth,
          contentType: type,
          encoding: enc,
          extra,
          query: q,
          body: b,
        }) => {
          const headers: [string, string][] = [];
          if (auth) headers.push(['Authorization', auth]);
          const sent = b === null ? null : encode(b, enc);
          if (sent) {
            if (type) headers.push(['Content-Type', type]);
            if (sent.header !== undefined) headers.push(['Content-Encoding', sent.header]);
          }
          headers.push(...extra);
          const target = path + q;
          return {
            label:
              `${method} ${target.slice(0, 300)} [${describeHeaders(headers)}] ` +
              `body: ${b === null ? 'none' : `${b.length} bytes ${JSON.stringify(b.subarray(0, 120).toString('latin1'))}`}`,
            bytes: http(method, target, headers, sent?.bytes ?? null),
          };
        },
      )
  );
}

const PLATFORM_EVENTS = [
  'endpoint.url_validation',
  'meeting.started',
  'meeting.ended',
  'meeting.participant_joined',
  'meeting.participant_left',
  'meeting.registration_created',
  'meeting.registration_approved',
  'meeting.registration_denied',
  'meeting.registration_cancelled',
  'webinar.started',
  'webinar.participant_joined',
  'webinar.registration_created',
  'recording.completed',
  'recording.transcript_completed',
  'meeting.updated',
  'meeting.created',
];

/** A platform event envelope whose parts are hostile but whose shape mostly holds. */
const platformEvent = fc
  .record(
    {
      event: fc.oneof(
        { arbitrary: fc.constantFrom(...PLATFORM_EVENTS), weight: 5 },
        { arbitrary: nastyValue, weight: 1 },
      ),
      event_ts: fc.oneof(nastyNumber, nastyValue),
      download_token: fc.option(nastyValue),
      payload: fc.record(
        {
          account_id: nastyValue,
          plainToken: nastyValue,
          object: fc.record(
            {
              uuid: nastyValue,
              id: nastyValue,
              host_id: nastyValue,
              topic: nastyValue,
              start_time: nastyValue,
              occurrence_id: nastyValue,
              participant: fc.dictionary(
                fc.constantFrom('user_id', 'id', 'join_time', 'leave_time', 'email', 'user_name'),
                nastyValue,
              ),
              registrant: fc.dictionary(
                fc.constantFrom('id', 'status', 'email', 'occurrences', 'custom_questions'),
                nastyValue,
              ),
              recording_files: fc.array(
                fc.dictionary(
                  fc.constantFrom(
                    'id',
                    'file_type',
                    'file_size',
                    'download_url',
                    'recording_start',
                    'status',
                  ),
                  nastyValue,
                ),
                { maxLength: 3 },
              ),
            },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['event', 'payload'] },
  )
  .chain((e) =>
    fc
      .oneof({ arbitrary: fc.constant(null), weight: 4 }, { arbitrary: deepText, weight: 1 })
      .map((deep) => ({ e, deep })),
  )
  .map(({ e, deep }) => {
    const text = JSON.stringify(e);
    // Spliced in as text: a value this deep cannot be built with JSON.stringify.
    return Buffer.from(
      deep === null ? text : text.replace('"payload":{', `"payload":{"deep":${deep},`),
    );
  });

/** POST /zoom/events: mostly correctly signed (so the body is parsed and stored), else not. */
export function platformEventRequest(secret: string): fc.Arbitrary<HostileRequest> {
  return fc
    .record({
      payload: fc.oneof({ arbitrary: platformEvent, weight: 6 }, { arbitrary: body, weight: 3 }),
      signed: fc.oneof(
        { arbitrary: fc.constant('yes' as const), weight: 6 },
        { arbitrary: fc.constantFrom('stale', 'wrong', 'garbage'), weight: 1 },
      ),
      encoding,
      type: contentType,
      extra: extraHeaders,
    })
    .map(({ payload, signed, encoding: enc, type, extra }) => {
      const now = Math.floor(Date.now() / 1000);
      const timestamp = signed === 'stale' ? now - 3600 : now;
      const key = signed === 'wrong' ? 'not-the-secret' : secret;
      const signature =
        signed === 'garbage'
          ? 'v0=zz'
          : `v0=${createHmac('sha256', key).update(`v0:${timestamp}:`).update(payload).digest('hex')}`;
      const sent = encode(payload, enc);
      const headers: [string, string][] = [
        ['Content-Type', type || 'application/json'],
        ['x-zm-request-timestamp', String(timestamp)],
        ['x-zm-signature', signature],
        ...extra.filter(([name]) => !name.startsWith('x-zm-')),
      ];
      if (sent.header !== undefined) headers.push(['Content-Encoding', sent.header]);
      return {
        label:
          `POST /zoom/events signed=${signed} [${describeHeaders(headers)}] ` +
          `body: ${payload.length} bytes ${JSON.stringify(payload.subarray(0, 300).toString('latin1'))}`,
        bytes: http('POST', '/zoom/events', headers, sent.bytes),
      };
    });
}

/**
 * Requests that are not quite HTTP, each complete (so the server never has to wait for a
 * timeout to decide): bad request lines, bad headers, bad framing, other protocols.
 */
export const brokenHttp: fc.Arbitrary<HostileRequest> = fc
  .oneof(
    fc
      .tuple(
        fc.constantFrom(
          'GET',
          'POST',
          'TRACE',
          'OPTIONS',
          'HEAD',
          'PROPFIND',
          'M-SEARCH',
          'get',
          'G\u00ffT',
          '\u00ff\u00fe',
        ),
        fc.constantFrom(
          '/health/live',
          '*',
          'http://evil.example/',
          '//x',
          '/..',
          '/%',
          '/\u00ff',
          `/${'x'.repeat(20_000)}`,
          '/api/webhooks#x',
          '',
        ),
        fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', 'HTTP/1.1x', ''),
      )
      .map(([m, t, v]) => `${m} ${t} ${v}\r\nHost: x\r\nConnection: close\r\n\r\n`),
    fc.constantFrom(
      'GET /health/live HTTP/1.1\r\nConnection: close\r\n\r\n',
      'GET /health/live HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n',
      'POST /api/webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
      'POST /api/webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'POST /api/webhooks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n',
      'POST /api/webhooks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      'POST /api/webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
      'POST /api/webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n',
      'GET /health/live HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n  b\r\nConnection: close\r\n\r\n',
      'GET /health/live HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n',
      'GET /health/live HTTP/1.1\r\nHost: x\r\nX-Nul: a\u0000b\r\n\r\n',
      'GET /health/live HTTP/1.1\nHost: x\nConnection: close\n\n',
      'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
      'CONNECT 127.0.0.1:6379 HTTP/1.1\r\nHost: 127.0.0.1:6379\r\n\r\n',
      'GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
      'GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGARBAGE AFTER\r\n\r\n',
      `GET /health/live HTTP/1.1\r\nHost: x\r\n${'X-Many: 1\r\n'.repeat(3000)}\r\n`,
      `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
      '\u0016\u0003\u0001\u0000\u00a5\u0001\u0000\u0000\u00a1\u0003\u0003\r\n\r\n',
    ),
    fc
      .uint8Array({ minLength: 1, maxLength: 300 })
      .map((a) => `${Buffer.from(a).toString('latin1')}\r\n\r\n`),
  )
  .map((text) => ({
    label: `raw ${JSON.stringify(text.slice(0, 200))}`,
    bytes: Buffer.from(text, 'latin1'),
  }));

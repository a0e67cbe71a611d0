/**
 * The hand-written verifiers of docs/receiving.md, taken from the document as it stands and run
 * against deliveries the app really sent: a receiver who copies them must accept what the
 * service signs and refuse what it did not.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { meetingStarted, meetingUuid } from '../scripts/platform/zoom-events';
import { request } from './support/http';
import { ReceivedRequest, Receiver, startReceiver } from './support/receiver';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { sendZoomEvent } from './support/zoom-sender';

const DOCUMENT = 'docs/receiving.md';
const HEADING = 'Verifying `x-service-signature` by hand';

// .ci/run sets CI, and its machine has python3 as this one does: there a missing interpreter is
// a failure; on a developer machine without it only the Python cases are skipped, with a notice.
const PYTHON = 'python3';
const pythonProbe = spawnSync(PYTHON, ['--version'], { encoding: 'utf8' });
const havePython = pythonProbe.status === 0;
if (!havePython && process.env.CI) {
  throw new Error(
    `${PYTHON} does not run (${pythonProbe.error?.message ?? pythonProbe.stderr}): the Python ` +
      `verifier of ${DOCUMENT} cannot be checked`,
  );
}
if (!havePython) {
  process.stderr.write(`${DOCUMENT} Python verifier test skipped: no ${PYTHON} on PATH\n`);
}

/**
 * The body of the first ```lang block under the heading (up to the next heading of its level or
 * above) whose text contains `marker`; fails naming what it looked for.
 */
function docBlock(lang: string, marker: string): string {
  const markdown = readFileSync(join(__dirname, '..', DOCUMENT), 'utf8');
  const lines = markdown.split('\n');
  const start = lines.findIndex(
    (line) => /^#{1,6} /.test(line) && line.replace(/^#+ /, '') === HEADING,
  );
  if (start < 0) throw new Error(`${DOCUMENT} has no heading "${HEADING}"`);
  const level = /^#+/.exec(lines[start])![0].length;
  const end = lines.findIndex((line, i) => i > start && new RegExp(`^#{1,${level}} `).test(line));
  const section = lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
  for (const [, body] of section.matchAll(
    new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'),
  )) {
    if (body.includes(marker)) return body;
  }
  throw new Error(`${DOCUMENT}: no \`\`\`${lang} block containing "${marker}" under "${HEADING}"`);
}

/** One verification a receiver makes: these bytes, this header value, this secret. */
interface Check {
  name: string;
  body: Buffer;
  header: string | undefined;
  secret: string;
  expected: boolean;
}

/** The JS block run whole, as a receiver's handler would run it for `req` holding `secret`. */
function runJsBlock(
  block: string,
  req: { body: Buffer; headers: IncomingHttpHeaders },
  secret: string,
): {
  genuine: unknown;
  signatureMatches: (body: Buffer, header: unknown, secret: string) => unknown;
} {
  return runInNewContext(
    `${block}\n;({ genuine, signatureMatches })`,
    { require, Buffer, req, secret },
    { filename: `${DOCUMENT} (js)` },
  ) as ReturnType<typeof runJsBlock>;
}

/** Each check's result from the Python block in one python3 run: a bool, or the error raised. */
function runPythonBlock(block: string, checks: Check[]): unknown[] {
  const harness = [
    block,
    'import base64 as _b64, json as _json, sys as _sys',
    '_results = []',
    'for _c in _json.load(_sys.stdin):',
    '    try:',
    '        _results.append(signature_matches(_b64.b64decode(_c["body"]), _c["header"], _c["secret"]))',
    '    except Exception as _e:',
    '        _results.append(f"{type(_e).__name__}: {_e}")',
    'print(_json.dumps(_results))',
  ].join('\n');
  const input = JSON.stringify(
    checks.map((c) => ({
      body: c.body.toString('base64'),
      header: c.header ?? null,
      secret: c.secret,
    })),
  );
  const run = spawnSync(PYTHON, ['-c', harness], { input, encoding: 'utf8', timeout: 20_000 });
  if (run.status !== 0) {
    throw new Error(`${PYTHON} exited ${run.status}: ${run.error?.message ?? run.stderr}`);
  }
  return JSON.parse(run.stdout) as unknown[];
}

const tamper = (body: Buffer) => {
  const copy = Buffer.from(body);
  // Inside the JSON, so the body still parses: a receiver must not rely on that to notice.
  copy[copy.indexOf('"event"') + 2] ^= 0x01;
  return copy;
};

describe(`${DOCUMENT}: the x-service-signature verifiers on real deliveries`, () => {
  let t: TestApp;
  let receiver: Receiver;
  /** Each delivery below with the secret that keyed its x-service-signature. */
  const deliveries: { name: string; request: ReceivedRequest; secret: string }[] = [];
  /** The delivery sent during a rotation and the secret it replaced. */
  let rotated: { request: ReceivedRequest; current: string; previous: string };

  beforeAll(async () => {
    [t, receiver] = await Promise.all([startTestApp(), startReceiver()]);
    const token = await t.token('alpha');
    const api = (method: string, path: string, body?: unknown) =>
      request(t.baseUrl, method, path, { token, body });
    const arrival = (path: string, count: number) =>
      waitFor(() => receiver.requests(path)[count - 1], { what: `delivery ${count} at ${path}` });

    // A whsec_ secret keys x-service-signature with its UTF-8 bytes, prefix included.
    const whsec = `whsec_${randomBytes(32).toString('base64')}`;
    const tested = receiver.route({}, 'tested');
    const webhook = await createWebhook(t, {
      url: tested.url,
      events: ['follower.lost'],
      secret: whsec,
    });
    expect((await api('POST', `/api/webhooks/${webhook.id}/test`)).status).toBe(202);
    deliveries.push({
      name: 'webhook.test, whsec_ secret',
      request: await arrival(tested.path, 1),
      secret: whsec,
    });

    // A non-ASCII secret and a platform event whose body has non-ASCII bytes (the topic).
    const plain = 'plain-sécret-☕-0123456789';
    const mapped = receiver.route({}, 'mapped');
    await createWebhook(t, { url: mapped.url, events: ['job.started'], secret: plain });
    const event = meetingStarted(meetingUuid());
    (event.payload.object as { topic: string }).topic = 'Bridge test – Réunion ☕';
    expect((await sendZoomEvent(t.baseUrl, event)).status).toBe(200);
    const started = await arrival(mapped.path, 1);
    expect(started.body.some((byte) => byte > 0x7f)).toBe(true);
    deliveries.push({
      name: 'job.started, non-ASCII secret and body',
      request: started,
      secret: plain,
    });

    const next = `rotated-secret-${randomBytes(8).toString('hex')}`;
    expect((await api('PATCH', `/api/webhooks/${webhook.id}`, { secret: next })).status).toBe(200);
    expect((await api('POST', `/api/webhooks/${webhook.id}/test`)).status).toBe(202);
    const during = await arrival(tested.path, 2);
    expect(during.headers['x-service-signature-previous']).toEqual(expect.any(String));
    deliveries.push({
      name: 'webhook.test during a rotation, new secret',
      request: during,
      secret: next,
    });
    rotated = { request: during, current: next, previous: whsec };
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  /** What a receiver must conclude about each delivery and about forgeries of it. */
  function checks(): Check[] {
    const list: Check[] = [];
    for (const { name, request: r, secret } of deliveries) {
      const header = r.headers['x-service-signature'] as string;
      list.push(
        { name: `${name}: as delivered`, body: r.body, header, secret, expected: true },
        { name: `${name}: tampered body`, body: tamper(r.body), header, secret, expected: false },
        {
          name: `${name}: wrong secret`,
          body: r.body,
          header,
          secret: `${secret}x`,
          expected: false,
        },
        { name: `${name}: no header`, body: r.body, header: undefined, secret, expected: false },
        {
          // A forger controls the header's characters; the answer must still be a plain no.
          name: `${name}: non-ASCII header`,
          body: r.body,
          header: `${header.slice(0, -1)}é`,
          secret,
          expected: false,
        },
      );
    }
    const { request: r, current, previous } = rotated;
    list.push(
      {
        name: 'rotation: x-service-signature-previous with the replaced secret',
        body: r.body,
        header: r.headers['x-service-signature-previous'] as string,
        secret: previous,
        expected: true,
      },
      {
        name: 'rotation: x-service-signature with the replaced secret',
        body: r.body,
        header: r.headers['x-service-signature'] as string,
        secret: previous,
        expected: false,
      },
      {
        name: 'rotation: x-service-signature-previous with the new secret',
        body: r.body,
        header: r.headers['x-service-signature-previous'] as string,
        secret: current,
        expected: false,
      },
    );
    return list;
  }

  it('the ```js block accepts each delivery and refuses a tampered body, a wrong secret, a missing or forged header', () => {
    const block = docBlock('js', 'function signatureMatches');
    const results = checks().map((c) => {
      const headers: IncomingHttpHeaders =
        c.header === undefined ? {} : { 'x-service-signature': c.header };
      const run = runJsBlock(block, { body: c.body, headers }, c.secret);
      // The block's own last line (genuine = …) and its function called directly agree.
      expect(run.genuine).toBe(run.signatureMatches(c.body, c.header, c.secret));
      return [c.name, run.genuine];
    });
    expect(results).toEqual(checks().map((c) => [c.name, c.expected]));
  });

  (havePython ? it : it.skip)(
    'the ```python block accepts each delivery and refuses a tampered body, a wrong secret, a missing or forged header',
    () => {
      const block = docBlock('python', 'def signature_matches');
      const list = checks();
      const results = runPythonBlock(block, list);
      expect(list.map((c, i) => [c.name, results[i]])).toEqual(
        list.map((c) => [c.name, c.expected]),
      );
    },
  );
});

/**
 * Every fenced code block of README.md and docs/*.md, taken from the documents as they stand.
 * The convention (docs/development.md#code-blocks-in-the-docs): each block names its language,
 * one of BLOCK_LANGUAGES; `text` is an output sample or a diagram and is not run; `json` and
 * `yaml` must parse; `js` must compile under node, `python` under python3, `sh` under bash -n. Then they
 * run: the `sh` blocks against a real service started here (those marked `checked-by=<path>`
 * or `by-hand` in the fence excepted), and the Express and Flask receivers of
 * docs/receiving.md, sent signed, repeated, forged and replayed deliveries. The consumers of the
 * destination pages and the by-hand verifiers are run against the real service by
 * destination-docs and receiving-docs.
 */
import { ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { parseDocument } from 'yaml';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { meetingStarted } from '../scripts/platform/zoom-events';
import { TEST_RABBITMQ_URL } from './support/brokers';
import { FakeZoom } from './support/fake-zoom';
import { request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { freePort } from './support/spawn-app';
import { CLIENTS, TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { sendZoomEvent } from './support/zoom-sender';
import { FLASK, Prerequisite, have } from './support/prerequisites';

const execFileAsync = promisify(execFile);

const ROOT = join(__dirname, '..');
const BLOCK_LANGUAGES = ['sh', 'js', 'python', 'json', 'yaml', 'text'] as const;

interface Block {
  where: string;
  lang: string;
  /** The words after the language in the fence's info string (`checked-by=…`, `by-hand`). */
  attrs: string[];
  body: string;
}

const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

function blocksOf(document: string): Block[] {
  const lines = readFileSync(join(ROOT, document), 'utf8').split('\n');
  const blocks: Block[] = [];
  let open: { line: number; lang: string; attrs: string[] } | null = null;
  lines.forEach((line, i) => {
    const fence = /^```(\S*)(.*)$/.exec(line);
    if (!fence) return;
    if (open === null) {
      open = { line: i + 1, lang: fence[1], attrs: fence[2].split(/\s+/).filter(Boolean) };
    } else {
      blocks.push({
        where: `${document}:${open.line}`,
        lang: open.lang,
        attrs: open.attrs,
        body: lines.slice(open.line, i).join('\n'),
      });
      open = null;
    }
  });
  return blocks;
}

const BLOCKS = DOCUMENTS.flatMap(blocksOf);
const of = (lang: string): [string, Block][] =>
  BLOCKS.filter((b) => b.lang === lang).map((b) => [b.where, b]);

const scratch = mkdtempSync(join(tmpdir(), 'meb-doc-blocks-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `command` over the block written to a file; fails with what the tool said. */
function check(block: Block, file: string, command: string, args: string[]): void {
  const path = join(scratch, file);
  writeFileSync(path, `${block.body}\n`);
  const run = spawnSync(command, [...args, path], { encoding: 'utf8' });
  if (run.error) throw run.error;
  expect({ where: block.where, status: run.status, said: run.stderr.trim() }).toEqual({
    where: block.where,
    status: 0,
    said: '',
  });
}

describe('the code blocks of README.md and docs/', () => {
  it('each name a language of the convention', () => {
    expect(BLOCKS.length).toBeGreaterThan(30);
    const unnamed = BLOCKS.filter(
      (b) => !(BLOCK_LANGUAGES as readonly string[]).includes(b.lang),
    ).map((b) => `${b.where} \`\`\`${b.lang}`);
    expect(unnamed).toEqual([]);
  });

  it.each(of('json'))('%s is JSON', (_where, block) => {
    expect(() => JSON.parse(block.body) as unknown).not.toThrow();
  });

  it.each(of('yaml'))('%s is YAML', (_where, block) => {
    expect(parseDocument(block.body).errors).toEqual([]);
  });

  it.each(of('js'))('%s compiles under node', (_where, block) => {
    check(block, 'block.js', process.execPath, ['--check']);
  });

  it.each(of('python'))('%s compiles under python3', (_where, block) => {
    check(block, 'block.py', 'python3', ['-m', 'py_compile']);
  });

  it.each(of('sh'))('%s is sh that bash parses', (_where, block) => {
    check(block, 'block.sh', 'bash', ['-n']);
  });
});

/** What checks a block that is not run here: a spec or CI step (`checked-by=<path>`). */
const checkedBy = (b: Block): string[] =>
  b.attrs.filter((a) => a.startsWith('checked-by=')).map((a) => a.slice('checked-by='.length));

const byHand = (b: Block): boolean => b.attrs.includes('by-hand');

const runsHere = (b: Block): boolean => b.lang === 'sh' && !byHand(b) && checkedBy(b).length === 0;

describe('sh blocks not run against a service here', () => {
  it('are marked by-hand or name what checks them, and that exists', () => {
    const notRun = BLOCKS.filter((b) => b.lang === 'sh' && !runsHere(b));
    const problems = notRun.flatMap((b) => [
      ...b.attrs
        .filter((a) => a !== 'by-hand' && !a.startsWith('checked-by='))
        .map((a) => `${b.where}: unknown attribute ${a}`),
      ...checkedBy(b)
        .filter((path) => !existsSync(join(ROOT, path)))
        .map((path) => `${b.where}: checked-by=${path} does not exist`),
    ]);
    expect(problems).toEqual([]);
    // By hand: the benchmark and the contract tester, each minutes long (docs/development.md).
    expect(notRun.filter(byHand).map((b) => b.body.split('\n')[0])).toHaveLength(2);
  });
});

/** The answers of a block's curl commands, in order, as the curl shim below reports them. */
interface Answer {
  status: number;
  body: string;
}

const STATUS_MARK = /\n?<<doc-block status (\d{3})>>\n/;

function answersOf(stdout: string): Answer[] {
  const parts = stdout.split(STATUS_MARK);
  const answers: Answer[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    answers.push({ body: parts[i], status: Number(parts[i + 1]) });
  }
  return answers;
}

/**
 * What a block says of each curl's answer: the `# → 201 {…}` comment after it (and its
 * continuation lines), or nothing.
 */
function expectationsOf(block: Block): { status?: number; keys: string[] }[] {
  const expectations: { status?: number; keys: string[]; text: string }[] = [];
  let inComment = false;
  for (const line of block.body.split('\n')) {
    if (line.startsWith('curl ')) {
      expectations.push({ keys: [], text: '' });
      inComment = false;
      continue;
    }
    const last = expectations.at(-1);
    const answer = /^# → (\d{3})\b(.*)$/.exec(line);
    if (answer && last) {
      last.status = Number(answer[1]);
      last.text += answer[2];
      inComment = true;
    } else if (inComment && last && /^#\s{2,}/.test(line)) {
      last.text += line;
    } else {
      inComment = false;
    }
  }
  return expectations.map(({ status, text }) => ({
    status,
    keys: [...new Set([...text.matchAll(/"(\w+)":/g)].map((m) => m[1]))],
  }));
}

/** Every property name anywhere in a JSON value. */
function keysIn(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => keysIn(v, into));
  else if (value !== null && typeof value === 'object') {
    for (const [key, sub] of Object.entries(value)) {
      into.add(key);
      keysIn(sub, into);
    }
  }
  return into;
}

const TRACKING_ID = 'v=2.0;clid=aw1;rid=WEB_4f1e3bd0c0e5a';
const MEETING_ID = 85746065432;

/**
 * The `sh` blocks run as written, in document order, against a real service started here, with
 * the variables they expect (TOKEN, the webhook ID, EVENT_ID, FILE_ID) and what they name:
 * the client `crm`, the broker `bus`, the user jchill@example.com and meeting 85746065432 on a
 * fake platform. `curl` is a shim that sends http://localhost:3000 to this service and reports
 * each answer's status; a block must exit 0, each curl must answer 2xx, and where a `# → 201 {…}`
 * comment follows, the status is that one and every key the comment shows is in the answer. A
 * setting a block assigns as JSON (`AUTH_CLIENTS='[…]'`) must parse.
 */
describe('the sh blocks, run against a service', () => {
  let fake: FakeZoom;
  let receiver: Receiver;
  let t: TestApp;
  let env: Record<string, string>;
  const runDir = join(scratch, 'run');

  beforeAll(async () => {
    fake = await FakeZoom.start();
    receiver = await startReceiver();
    t = await startTestApp({
      env: {
        ...fake.env(),
        AUTH_CLIENTS: JSON.stringify([
          ...Object.values(CLIENTS),
          {
            client_id: 'crm',
            client_secret: 'crm-secret-0123456789',
            scopes: 'webhooks:read webhooks:write',
          },
        ]),
        DESTINATION_BROKERS: JSON.stringify([
          { name: 'bus', type: 'rabbitmq', url: TEST_RABBITMQ_URL },
        ]),
        // docs/api.md's replay is `since` 2026-01-01, which must stay within retention.
        RETENTION_DAYS: '3650',
      },
    });
    const token = await t.token();
    const webhook = await createWebhook(t, { url: receiver.route().url, events: ['job.started'] });
    const event = Buffer.from(JSON.stringify(meetingStarted(`doc-blocks-${randomUUID()}`)));
    const sent = await sendZoomEvent(t.baseUrl, event, { trackingId: TRACKING_ID });
    expect(sent.status).toBe(200);
    await waitFor(() => receiver.received.length === 1, { what: 'the event delivered' });
    const found = await request(
      t.baseUrl,
      'GET',
      `/api/events?tracking_id=${encodeURIComponent(TRACKING_ID)}`,
      { token },
    );
    const host = fake.addUser({ email: 'jchill@example.com' });
    const meeting = fake.addMeeting(host.id, { id: MEETING_ID });
    const fileId = 'a1b2c3d4-0001';
    fake.addRecording(meeting, [
      {
        id: fileId,
        file_type: 'MP4',
        file_extension: 'MP4',
        file_size: 4096,
        recording_type: 'shared_screen_with_speaker_view',
        content_type: 'video/mp4',
      },
      {
        id: 'a1b2c3d4-0002',
        file_type: 'TRANSCRIPT',
        file_extension: 'VTT',
        file_size: 512,
        recording_type: 'audio_transcript',
        content_type: 'text/vtt',
      },
    ]);

    const bin = join(scratch, 'bin');
    mkdirSync(bin, { recursive: true });
    mkdirSync(runDir, { recursive: true });
    const realCurl = spawnSync('bash', ['-c', 'command -v curl'], {
      encoding: 'utf8',
    }).stdout.trim();
    writeFileSync(
      join(bin, 'curl'),
      [
        '#!/usr/bin/env bash',
        'args=()',
        'for arg in "$@"; do args+=("${arg//http:\\/\\/localhost:3000/$DOC_BLOCKS_BASE_URL}"); done',
        `exec ${realCurl} -w '\n<<doc-block status %{http_code}>>\n' "\${args[@]}"`,
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    env = {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      HOME: scratch,
      DOC_BLOCKS_BASE_URL: t.baseUrl,
      TOKEN: token,
      ID: webhook.id,
      EVENT_ID: (found.body.data as { id: string }[])[0]?.id ?? 'none found',
      FILE_ID: fileId,
    };
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await fake?.close();
  });

  const runnable = BLOCKS.filter(runsHere).map((b): [string, Block] => [b.where, b]);

  it.each(runnable)('%s runs and answers as it says', async (_where, block) => {
    // A setting the block assigns as JSON (AUTH_CLIENTS='[…]') is printed after it runs.
    const settings = [...block.body.matchAll(/^([A-Z][A-Z0-9_]*)='[[{]/gm)].map((m) => m[1]);
    const file = join(scratch, 'block.sh');
    writeFileSync(
      file,
      [
        block.body,
        ...settings.map(
          (name) => `printf '<<doc-block setting %s>>%s<<end>>\\n' ${name} "$${name}"`,
        ),
        '',
      ].join('\n'),
    );
    // Not spawnSync: the service answering the block runs in this process.
    const run = await execFileAsync('bash', ['-e', file], { cwd: runDir, env }).catch(
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    const stdout = String(run.stdout ?? '');
    expect({ exit: 'code' in run ? run.code : 0, stderr: String(run.stderr ?? '') }).toEqual({
      exit: 0,
      stderr: '',
    });
    for (const name of settings) {
      const value = new RegExp(`<<doc-block setting ${name}>>([\\s\\S]*?)<<end>>`).exec(
        stdout,
      )?.[1];
      expect({ name, json: typeof JSON.parse(value ?? '') }).toEqual({ name, json: 'object' });
    }
    const answers = answersOf(stdout);
    const expectations = expectationsOf(block);
    expect(answers).toHaveLength(expectations.length);
    expectations.forEach((expected, i) => {
      const answer = answers[i];
      const shown = { curl: i + 1, status: answer.status, body: answer.body.slice(0, 400) };
      const as = expected.status
        ? answer.status === expected.status
        : answer.status >= 200 && answer.status < 300;
      expect({ ...shown, as }).toEqual({ ...shown, as: true });
      if (expected.keys.length === 0) return;
      const keys = keysIn(JSON.parse(answer.body));
      expect({ curl: i + 1, missing: expected.keys.filter((k) => !keys.has(k)) }).toEqual({
        curl: i + 1,
        missing: [],
      });
    });
  });
});

/** A receiver of docs/receiving.md, and how a reader starts it. */
interface DocReceiver {
  name: string;
  lang: string;
  marker: string;
  file: string;
  command: string;
  /** What it needs beyond this repository's node_modules. */
  needs?: Prerequisite;
}

const RECEIVERS: DocReceiver[] = [
  {
    name: 'Express',
    lang: 'js',
    marker: "require('express')",
    file: 'receiver.js',
    command: process.execPath,
  },
  // Debian's python3 with its python3-flask package (.ci/run installs it).
  {
    name: 'Flask',
    lang: 'python',
    marker: 'from flask import',
    file: 'receiver.py',
    command: '/usr/bin/python3',
    needs: FLASK,
  },
];

describe.each(RECEIVERS)("docs/receiving.md's $name receiver, run as written", (receiver) => {
  const runnable =
    receiver.needs === undefined ||
    have(receiver.needs, `docs/receiving.md's ${receiver.name} receiver test`);
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });

  (runnable ? it : it.skip)(
    'accepts a signed delivery once, answers its retry 200, and refuses a forged one',
    async () => {
      const block = BLOCKS.find(
        (b) =>
          b.where.startsWith('docs/receiving.md') &&
          b.lang === receiver.lang &&
          b.body.includes(receiver.marker),
      );
      if (!block)
        throw new Error(`docs/receiving.md has no ${receiver.lang} block with ${receiver.marker}`);
      const file = join(scratch, receiver.file);
      writeFileSync(file, block.body);
      const port = await freePort();
      const secret = `whsec_${Buffer.from('a doc-blocks secret of 32 bytes!').toString('base64')}`;
      let output = '';
      child = spawn(receiver.command, [file], {
        // The reader's `npm install express standardwebhooks`: this repository's copies.
        env: {
          PATH: process.env.PATH ?? '',
          NODE_PATH: join(ROOT, 'node_modules'),
          WEBHOOK_SECRET: secret,
          PORT: String(port),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout?.on('data', (c: Buffer) => (output += c.toString('utf8')));
      child.stderr?.on('data', (c: Buffer) => (output += c.toString('utf8')));

      const body = JSON.stringify({ event: 'job.started', data: { meeting_id: 1 } });
      const send = (id: string, signer: Webhook, timestamp = new Date()) =>
        fetch(`http://127.0.0.1:${port}/hook`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
            'webhook-signature': signer.sign(id, timestamp, body),
          },
          body,
        }).then((res) => res.status);
      const genuine = new Webhook(secret);
      const started = child;
      // A receiver that cannot start (an import error) says why on its way out: say it here.
      const first = await waitFor<number | string>(
        () =>
          started.exitCode !== null
            ? `exited ${started.exitCode}`
            : send('msg_doc_1', genuine).catch(() => undefined),
        { what: 'the receiver to answer' },
      ).catch((error: Error) => {
        throw new Error(`${error.message}; its output:\n${output}`);
      });
      if (typeof first === 'string') {
        throw new Error(`the receiver ${first} before answering; its output:\n${output}`);
      }
      expect(first).toBe(200);
      await waitFor(() => output.includes('received job.started'), {
        what: 'the receiver to queue the notification',
      }).catch((error: Error) => {
        throw new Error(`${error.message}; its output:\n${output}`);
      });
      expect(await send('msg_doc_1', genuine)).toBe(200);
      expect(output.match(/received job\.started/g)).toHaveLength(1);
      const forger = new Webhook(
        `whsec_${Buffer.from('not the secret, 32 bytes long!!!').toString('base64')}`,
      );
      expect(await send('msg_doc_2', forger)).toBe(401);
      // Signed, but captured an hour ago and replayed.
      expect(await send('msg_doc_3', genuine, new Date(Date.now() - 3600_000))).toBe(401);
      expect(output.match(/received job\.started/g)).toHaveLength(1);
    },
  );
});

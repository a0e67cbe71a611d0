/**
 * Every fenced code block of README.md and docs/*.md, taken from the documents as they stand.
 * The convention (docs/development.md#code-blocks-in-the-docs): each block names its language,
 * one of BLOCK_LANGUAGES; `text` is an output sample or a diagram and is not run; `json` must
 * parse; `js` must compile under node, `python` under python3, `sh` under bash -n; and whole
 * programs are run: the Express receiver of docs/receiving.md is started and sent signed and
 * forged deliveries here. The consumers of the destination pages and the by-hand verifiers are
 * run against the real service by destination-docs and receiving-docs.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { freePort } from './support/spawn-app';
import { waitFor } from './support/wait-for';

const ROOT = join(__dirname, '..');
const BLOCK_LANGUAGES = ['sh', 'js', 'python', 'json', 'text'] as const;

interface Block {
  where: string;
  lang: string;
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
  let open: { line: number; lang: string } | null = null;
  lines.forEach((line, i) => {
    const fence = /^```(\S*)\s*$/.exec(line);
    if (!fence) return;
    if (open === null) open = { line: i + 1, lang: fence[1] };
    else {
      blocks.push({
        where: `${document}:${open.line}`,
        lang: open.lang,
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

/** A receiver of docs/receiving.md, and how a reader starts it. */
interface Receiver {
  name: string;
  lang: string;
  marker: string;
  file: string;
  command: string;
}

const RECEIVERS: Receiver[] = [
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
  },
];

describe.each(RECEIVERS)("docs/receiving.md's $name receiver, run as written", (receiver) => {
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });

  it('accepts a signed delivery once, answers its retry 200, and refuses a forged one', async () => {
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
    const first = await waitFor(() => send('msg_doc_1', genuine).catch(() => undefined), {
      what: `the receiver to answer; its output: ${output}`,
    });
    expect(first).toBe(200);
    await waitFor(() => output.includes('received job.started'), {
      what: `the receiver to queue the notification; its output: ${output}`,
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
  });
});

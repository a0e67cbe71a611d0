/**
 * Templates and chat messages (docs/templates.md), each beside a same-run baseline.
 *
 * - evaluation: what shaping a delivery costs, through ShapingService as a delivery calls it
 *   (the body as JSON text in, the bytes to send out): each chat tool's built-in message for
 *   every kind (built in the service's process, no evaluator), and the recipes of
 *   docs/templates.md (in the service's process, being of the inline subset; the Slack one also
 *   as the docs write it, with a function of its own, through the template evaluators), SAMPLES
 *   times each (default 2,000), one at a time: p50 and p99 in ms.
 * - evaluators: SAMPLES × 4 jobs of the Slack recording recipe at 50 at once, through
 *   evaluators sent up to 16 jobs a message (the default) and one job a message (the baseline:
 *   how jobs were sent before): jobs/s, and CPU per job of this process and of the evaluators.
 * - burst: EVENTS operation.complete events (default 2,000) published at concurrency 50 to one
 *   http webhook to a local receiver, without a template (the baseline) and with the recording
 *   recipe, after an unmeasured warm-up of each, ROUNDS times each (default 3), which goes first
 *   alternating by round, in one app (role all, every delivery setting at its default).
 *   Deliveries/s from the first publish to the last arrival, the ratio templated ÷ plain per
 *   round and their median, and the CPU of the service's process and of its evaluators per
 *   delivery (less sensitive to a shared machine than the rate).
 *
 *   npx ts-node --transpile-only bench/templates.ts [events=2000] [rounds=3] [samples=2000]
 *
 * The machine may be shared: the load average is printed at the start and the end.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../src/config/config.types';
import { DESTINATIONS } from '../src/destinations/registry';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { ShapingService } from '../src/shaping/shaping.service';
import { TemplateRunner } from '../src/shaping/template-runner';
import { EVENT_EXAMPLES } from '../src/webhooks/event-examples';
import { request } from '../test/support/http';
import { startReceiver } from '../test/support/receiver';
import { TestApp, startTestApp } from '../test/support/test-app';
import { waitFor } from '../test/support/wait-for';
import { cpuSecondsOf, helpIfAsked, percentile } from './support';

helpIfAsked(__filename, '[events=2000] [rounds=3] [samples=2000]');

const arg = (i: number, fallback: number, max: number) => {
  const n = Number(process.argv[2 + i] ?? fallback);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`bench/templates.ts: argument ${i + 1} must be a positive integer (see --help)`);
    process.exit(2);
  }
  return Math.min(n, max);
};
const EVENTS = arg(0, 2000, 50_000);
const ROUNDS = arg(1, 3, 20);
const SAMPLES = arg(2, 2000, 100_000);
const CONCURRENCY = 50;
const SECRET = 'bench-templates-secret-0123456';
/** TEMPLATE_TIMEOUT_MS's default. */
const TIMEOUT_MS = 50;

/** The recipes of docs/templates.md. */
const RECIPES: Record<string, string> = {
  'recording (Slack)':
    '{"text": "Recording ready: " & $replace($replace($replace(data.topic, "&", "&amp;"), "<", "&lt;"), ">", "&gt;"),' +
    ' "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "*Recording ready:* " & ' +
    '$replace($replace($replace(data.topic, "&", "&amp;"), "<", "&lt;"), ">", "&gt;")}}, ' +
    '{"type": "section", "text": {"type": "mrkdwn", "text": $join(data.files.("<" & download_url & "|" & file_type & ">"), "\\n")}}]}',
  'one host (Teams)':
    'data.host_id = "z8yAAAAA8bbbQ" ? {"type": "message", "attachments": [{"contentType": ' +
    '"application/vnd.microsoft.card.adaptive", "content": {"type": "AdaptiveCard", "version": "1.4", ' +
    '"body": [{"type": "TextBlock", "text": "Started: " & data.topic, "wrap": true}]}}]} : {}',
  'recording (http)':
    '{"meeting": data.topic, "files": [data.files.{"type": file_type, "url": download_url}]}',
  'recording (Slack, with $esc)':
    '($esc := function($s) { $replace($replace($replace($s, "&", "&amp;"), "<", "&lt;"), ">", "&gt;") }; ' +
    '{"text": "Recording ready: " & $esc(data.topic), "blocks": [{"type": "section", "text": {"type": "mrkdwn", ' +
    '"text": "*Recording ready:* " & $esc(data.topic)}}, {"type": "section", "text": {"type": "mrkdwn", ' +
    '"text": $join(data.files.("<" & download_url & "|" & file_type & ">"), "\\n")}}]})',
};
const RECIPE_TYPES: Record<string, string> = {
  'recording (Slack)': 'slack',
  'one host (Teams)': 'teams',
  'recording (http)': 'http',
  'recording (Slack, with $esc)': 'slack',
};

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const fmt = (n: number, digits = 0) => n.toFixed(digits);
const ms = (values: number[]) =>
  `p50 ${fmt(percentile(values, 0.5), 3)} ms, p99 ${fmt(percentile(values, 0.99), 3)} ms`;

/** CPU seconds of this process's children (the template evaluators), Linux /proc. */
function childrenCpuSeconds(): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    const children = readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8');
    for (const pid of children.split(' ').filter(Boolean)) total += cpuSecondsOf(Number(pid)) || 0;
  }
  return total;
}
const ownCpuSeconds = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1e6;
};

async function evaluationPhase(): Promise<void> {
  const shaping = new ShapingService({ templateTimeoutMs: TIMEOUT_MS } as AppConfig);
  const bodies = Object.values(EVENT_EXAMPLES).map((b) => JSON.stringify(b));
  try {
    for (const type of DESTINATIONS.chatTypes) {
      const times: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const t0 = performance.now();
        const out = await shaping.output({ destinationType: type }, bodies[i % bodies.length]);
        times.push(performance.now() - t0);
        if (!out.ok) throw new Error(`${type}: ${out.error}`);
      }
      console.log(`built-in ${type} (every kind, in process): ${ms(times)}`);
    }
    const body = JSON.stringify(EVENT_EXAMPLES['operation.complete']);
    for (const [name, template] of Object.entries(RECIPES)) {
      const rules = { destinationType: RECIPE_TYPES[name], template };
      await shaping.output(rules, body);
      const times: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const t0 = performance.now();
        const out = await shaping.output(rules, body);
        times.push(performance.now() - t0);
        if (!out.ok) throw new Error(`${name}: ${out.error}`);
      }
      const where = name.includes('$esc') ? 'evaluator round trip' : "in the service's process";
      console.log(`template ${name} (${where}): ${ms(times)}`);
    }
  } finally {
    await shaping.onApplicationShutdown();
  }
}

async function evaluatorsPhase(): Promise<void> {
  const body = JSON.stringify(EVENT_EXAMPLES['operation.complete']);
  const template = RECIPES['recording (Slack)'];
  const jobs = SAMPLES * 4;
  const rate = async (batch: number) => {
    const runner = new TemplateRunner(TIMEOUT_MS, 2, batch);
    try {
      await Promise.all(Array.from({ length: 4 }, () => runner.render(template, body)));
      let next = 0;
      let failed = 0;
      const own0 = ownCpuSeconds();
      const children0 = childrenCpuSeconds();
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next++ < jobs) {
            // On a loaded machine a job may overrun TEMPLATE_TIMEOUT_MS: counted, not fatal.
            if (!(await runner.render(template, body)).ok) failed++;
          }
        }),
      );
      return {
        rate: jobs / ((performance.now() - t0) / 1000),
        failed,
        ownMs: ((ownCpuSeconds() - own0) * 1000) / jobs,
        evaluatorsMs: ((childrenCpuSeconds() - children0) * 1000) / jobs,
      };
    } finally {
      await runner.close();
    }
  };
  for (let round = 1; round <= 2; round++) {
    const batched = await rate(16);
    const single = await rate(1);
    console.log(
      `evaluators, ${jobs} jobs at ${CONCURRENCY} at once, round ${round}: batched (default) ` +
        `${fmt(batched.rate)}/s, one job a message ${fmt(single.rate)}/s, ` +
        `${fmt(batched.rate / single.rate, 2)}x; CPU per job (this process + evaluators): ` +
        `${fmt(batched.ownMs, 3)} + ${fmt(batched.evaluatorsMs, 3)} ms and ` +
        `${fmt(single.ownMs, 3)} + ${fmt(single.evaluatorsMs, 3)} ms; overran ${TIMEOUT_MS} ms: ` +
        `${batched.failed} and ${single.failed}`,
    );
  }
}

interface Burst {
  rate: number;
  /** CPU ms per delivery: the service's process, and its evaluators. */
  ownMs: number;
  evaluatorsMs: number;
}

async function burst(
  t: TestApp,
  webhookId: string,
  seen: () => Set<string>,
  events: number,
): Promise<Burst> {
  await t.app.get(DataSource).query(`UPDATE webhooks SET active = (id = $1)`, [webhookId]);
  const dispatcher = t.app.get(DispatcherService);
  const example = EVENT_EXAMPLES['operation.complete'];
  const ids: string[] = [];
  const own0 = ownCpuSeconds();
  const children0 = childrenCpuSeconds();
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < events) {
        next++;
        const { deliveryIds } = await dispatcher.publish({
          kind: 'operation.complete',
          data: example.data,
          source: example.source as never,
        });
        ids.push(deliveryIds[0]);
      }
    }),
  );
  await waitFor(
    () => {
      const arrived = seen();
      return ids.every((id) => arrived.has(id));
    },
    { timeoutMs: 10 * 60_000, intervalMs: 50, what: 'every delivery to arrive' },
  );
  const rate = events / ((performance.now() - start) / 1000);
  return {
    rate,
    ownMs: ((ownCpuSeconds() - own0) * 1000) / events,
    evaluatorsMs: ((childrenCpuSeconds() - children0) * 1000) / events,
  };
}

async function burstPhase(): Promise<void> {
  const receiver = await startReceiver();
  const t = await startTestApp({ env: { LOG_LEVEL: 'warn' } });
  try {
    const token = await t.token('alpha');
    const create = async (path: string, template: string | null) => {
      const res = await request(t.baseUrl, 'POST', '/api/webhooks', {
        token,
        body: { url: path, events: ['operation.complete'], secret: SECRET, template },
      });
      if (res.status !== 201) throw new Error(`webhook: ${res.status} ${res.text}`);
      return res.body.id as string;
    };
    const plainRoute = receiver.route({}, 'plain');
    const templatedRoute = receiver.route({ shaped: true }, 'templated');
    const plain = await create(plainRoute.url, null);
    const templated = await create(templatedRoute.url, RECIPES['recording (http)']);
    const seenOf = (path: string) => () =>
      new Set(receiver.requests(path).map((r) => String(r.headers['x-service-delivery'])));
    const run = (templatedToo: boolean, events: number) =>
      templatedToo
        ? burst(t, templated, seenOf(templatedRoute.path), events)
        : burst(t, plain, seenOf(plainRoute.path), events);
    // Unmeasured: connections, prepared statements, the JIT, the template evaluators.
    const warm = Math.max(50, Math.round(EVENTS / 4));
    await run(false, warm);
    await run(true, warm);
    const ratios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Which goes first alternates, so that a machine growing busier favours neither.
      const first = await run(round % 2 === 0, EVENTS);
      const second = await run(round % 2 !== 0, EVENTS);
      const [a, b] = round % 2 === 0 ? [second, first] : [first, second];
      ratios.push(b.rate / a.rate);
      console.log(
        `round ${round} (${round % 2 === 0 ? 'templated' : 'plain'} first, ${EVENTS} events each): ` +
          `plain ${fmt(a.rate)}/s, templated ${fmt(b.rate)}/s, ratio ${fmt(b.rate / a.rate, 2)}x; ` +
          `CPU per delivery: plain ${fmt(a.ownMs, 2)} ms, templated ${fmt(b.ownMs, 2)} ms + ` +
          `${fmt(b.evaluatorsMs, 2)} ms in the evaluators`,
      );
    }
    console.log(`burst ratio, median of ${ROUNDS} rounds: ${fmt(percentile(ratios, 0.5), 2)}x`);
  } finally {
    await t.close();
    await receiver.close();
  }
}

async function main(): Promise<void> {
  // The evaluators keep no process alive (template-runner.ts): this one waits for them.
  setInterval(() => undefined, 60_000);
  console.log(`load average at start: ${load()}`);
  await evaluationPhase();
  await evaluatorsPhase();
  await burstPhase();
  console.log(`load average at end: ${load()}`);
  process.exit(0);
}

void main();

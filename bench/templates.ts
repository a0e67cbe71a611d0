/**
 * Templates (docs/templates.md), beside a same-run baseline.
 *
 * - burst: EVENTS operation.complete events (default 2,000) published at concurrency 50 to one
 *   http webhook to a local receiver, alternately without a template (the baseline) and with
 *   the recording recipe of docs/templates.md, ROUNDS times each (default 2), in one app (role
 *   all, every delivery setting at its default). Deliveries/s from the first publish to the
 *   last arrival; the ratio templated ÷ plain per round.
 * - evaluation: each chat tool's built-in message for every kind, and the recipes of
 *   docs/templates.md through the template workers, SAMPLES times each (default 2,000), one at a
 *   time: p50 and p99 in ms.
 *
 *   npx ts-node --transpile-only bench/templates.ts [events=2000] [rounds=2] [samples=2000]
 *
 * The machine may be shared: the load average is printed at the start and the end.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { builtInMessage } from '../src/destinations/chat/chat-tool';
import { DESTINATIONS } from '../src/destinations/registry';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { TemplateRunner } from '../src/shaping/template-runner';
import { EVENT_EXAMPLES } from '../src/webhooks/event-examples';
import { request } from '../test/support/http';
import { startReceiver } from '../test/support/receiver';
import { TestApp, startTestApp } from '../test/support/test-app';
import { waitFor } from '../test/support/wait-for';
import { percentile } from './support';

const EVENTS = Math.min(Number(process.argv[2] ?? 2000), 50_000);
const ROUNDS = Math.min(Number(process.argv[3] ?? 2), 20);
const SAMPLES = Math.min(Number(process.argv[4] ?? 2000), 100_000);
const CONCURRENCY = 50;
const SECRET = 'bench-templates-secret-0123456';

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
};

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const fmt = (n: number, digits = 0) => n.toFixed(digits);

async function burst(t: TestApp, webhookId: string, seen: () => Set<string>): Promise<number> {
  await t.app.get(DataSource).query(`UPDATE webhooks SET active = (id = $1)`, [webhookId]);
  const dispatcher = t.app.get(DispatcherService);
  const example = EVENT_EXAMPLES['operation.complete'];
  const ids: string[] = [];
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < EVENTS) {
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
    { timeoutMs: 5 * 60_000, intervalMs: 50, what: 'every delivery to arrive' },
  );
  return EVENTS / ((performance.now() - start) / 1000);
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
    // A warm-up of each, unmeasured: connections, prepared statements, the template workers.
    const saved = EVENTS;
    for (let round = 1; round <= ROUNDS; round++) {
      const a = await burst(t, plain, seenOf(plainRoute.path));
      const b = await burst(t, templated, seenOf(templatedRoute.path));
      console.log(
        `round ${round}: plain ${fmt(a)}/s, templated ${fmt(b)}/s, ratio ${fmt(b / a, 2)}x (${saved} events each)`,
      );
    }
  } finally {
    await t.close();
    await receiver.close();
  }
}

async function evaluationPhase(): Promise<void> {
  for (const type of DESTINATIONS.chatTypes) {
    const tool = DESTINATIONS.chat(type)!;
    const times: number[] = [];
    const kinds = Object.values(EVENT_EXAMPLES);
    for (let i = 0; i < SAMPLES; i++) {
      const body = kinds[i % kinds.length];
      const t0 = performance.now();
      JSON.stringify(builtInMessage(tool, JSON.parse(JSON.stringify(body))));
      times.push(performance.now() - t0);
    }
    console.log(
      `built-in ${type}: p50 ${fmt(percentile(times, 0.5), 3)} ms, p99 ${fmt(percentile(times, 0.99), 3)} ms`,
    );
  }
  const runner = new TemplateRunner(50);
  try {
    const body = JSON.stringify(EVENT_EXAMPLES['operation.complete']);
    for (const [name, template] of Object.entries(RECIPES)) {
      await runner.render(template, body);
      const times: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const t0 = performance.now();
        const r = await runner.render(template, body);
        times.push(performance.now() - t0);
        if (!r.ok) throw new Error(`${name}: ${r.error}`);
      }
      console.log(
        `template ${name} (worker round trip): p50 ${fmt(percentile(times, 0.5), 3)} ms, p99 ${fmt(percentile(times, 0.99), 3)} ms`,
      );
    }
  } finally {
    await runner.close();
  }
}

async function main(): Promise<void> {
  console.log(`load average at start: ${load()}`);
  await evaluationPhase();
  await burstPhase();
  console.log(`load average at end: ${load()}`);
  process.exit(0);
}

void main();

import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { DataSource } from 'typeorm';
import {
  ZoomEvent,
  asWebinar,
  meetingEnded,
  meetingStarted,
  meetingUuid,
  participantJoined,
  participantLeft,
  recordingCompleted,
  registrationCancelled,
  registrationCreated,
} from '../scripts/platform/zoom-events';
import { parsePrecise, stringifyPrecise } from '../src/common/precise-json';
import {
  EVENT_MAPPING,
  asRecord,
  mappingRuleOf,
  unmappableReason,
} from '../src/inbound/event-mapping';
import { fuzzSettings } from './support/fuzz-settings';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { sendZoomEvent } from './support/zoom-sender';

/**
 * Structure-aware fuzzing of the inbound path (docs/api.md#platform-events-post-zoomevents, issue 27): a signed event of every
 * mapped type, with values at any of its paths replaced by what the platform might send (null,
 * nothing, another type, U+0000, an unpaired surrogate, 1e400, 2^63, huge strings and arrays),
 * or renamed to an event nobody maps. Properties: each gets 200 (413 only past 1 MiB); each
 * 200 has its stored row; a mapped event that is published in the request keeps its data
 * exactly; every stored event ends processed, and no worker retries a failure that the
 * event's content makes certain.
 *
 * The suite runs 120 cases from seed 27; `npm run fuzz` more, as fuzzSettings says.
 */
const { runs, seed, path: fuzzPath } = fuzzSettings(120, 27);
const BODY_LIMIT = 1024 * 1024;

jest.setTimeout(Math.max(180_000, runs * 600));

/** One event of each mapped type, fresh identities each time (so cases never collide). */
function baseEvent(type: string): ZoomEvent {
  const uuid = meetingUuid();
  const n = Math.floor(Math.random() * 1e9);
  const family = type.startsWith('webinar.') ? asWebinar : (e: ZoomEvent) => e;
  const name = type.replace(/^webinar\./, 'meeting.');
  const build: Record<string, () => ZoomEvent> = {
    'meeting.started': () => meetingStarted(uuid),
    'meeting.ended': () => meetingEnded(uuid),
    'meeting.participant_joined': () => participantJoined(uuid, n),
    'meeting.participant_left': () => participantLeft(uuid, n),
    'meeting.registration_created': () => registrationCreated(uuid, n),
    'meeting.registration_approved': () => registrationCreated(uuid, n),
    'meeting.registration_denied': () => registrationCancelled(uuid, n),
    'meeting.registration_cancelled': () => registrationCancelled(uuid, n),
    'recording.completed': () => recordingCompleted(uuid, `dl-${n}`),
    'recording.transcript_completed': () => recordingCompleted(uuid, `dl-${n}`),
  };
  const event = family(build[name]());
  (event.payload.object as Record<string, unknown>).id = 10_000_000_000 + n;
  return { ...event, event: type };
}

type Path = (string | number)[];

/** Every path in the event but the envelope's own (`event`, `payload`): those name the event. */
function pathsOf(value: unknown, at: Path = []): Path[] {
  const here = at.length > 1 || (at.length === 1 && at[0] !== 'event' && at[0] !== 'payload');
  const below =
    typeof value === 'object' && value !== null
      ? Object.entries(value).flatMap(([key, child]) =>
          pathsOf(child, [...at, Array.isArray(value) ? Number(key) : key]),
        )
      : [];
  return here ? [at, ...below] : below;
}

// Numbers JSON.stringify cannot write go in as marked strings, replaced in the text.
const number = (text: string) => `@@number:${text}@@`;
const MUTATIONS = {
  delete: () => undefined,
  null: () => null,
  wrongType: (v: unknown) =>
    typeof v === 'string' ? 42 : typeof v === 'number' ? '42' : Array.isArray(v) ? {} : [v],
  nul: (v: unknown) => (typeof v === 'string' ? `${v}\u0000` : 'a\u0000b'),
  surrogate: (v: unknown) => (typeof v === 'string' ? `${v}\udc00` : '\ud800x'),
  huge: () => number('1e400'),
  big: () => number('9223372036854775808'),
  hugeString: () => 'x'.repeat(200_000),
  hugeArray: () => Array.from({ length: 20_000 }, (_, i) => i),
  tooLarge: () => 'y'.repeat(BODY_LIMIT + 10),
};
type Mutation = keyof typeof MUTATIONS;

function mutate(event: ZoomEvent, path: Path, mutation: Mutation): void {
  let parent: unknown = event;
  for (const key of path.slice(0, -1)) {
    parent = (parent as Record<string | number, unknown>)[key];
    if (typeof parent !== 'object' || parent === null) return; // an earlier mutation removed it
  }
  const container = parent as Record<string | number, unknown>;
  const last = path[path.length - 1];
  const value = MUTATIONS[mutation](container[last]);
  if (value === undefined) {
    if (Array.isArray(container)) container.splice(Number(last), 1);
    else delete container[last];
  } else {
    container[last] = value;
  }
}

const TYPES = Object.keys(EVENT_MAPPING);
const fuzzCase = fc.record({
  type: fc.constantFrom(...TYPES),
  mutations: fc.array(
    fc.record({
      at: fc.nat(),
      what: fc.oneof(
        { arbitrary: fc.constantFrom<Mutation>('delete', 'null', 'wrongType'), weight: 6 },
        { arbitrary: fc.constantFrom<Mutation>('nul', 'surrogate', 'huge', 'big'), weight: 6 },
        { arbitrary: fc.constantFrom<Mutation>('hugeString', 'hugeArray'), weight: 1 },
        { arbitrary: fc.constant<Mutation>('tooLarge'), weight: 1 },
      ),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  unknownEvent: fc.nat(9).map((x) => x === 0),
});

interface Sent {
  trackingId: string;
  text: string;
  type: string;
}

describe('fuzz: every signed platform event is stored, whatever it holds (docs/api.md#platform-events-post-zoomevents)', () => {
  let t: TestApp;
  const accepted: Sent[] = [];
  const statuses = new Map<string, number>();
  const db = <T>(sql: string, params: unknown[] = []) =>
    t.app.get(DataSource).query(sql, params) as Promise<T[]>;

  beforeAll(async () => {
    t = await startTestApp({
      env: {
        // A retry would wait this long: none may be needed for the events to end processed.
        RECORDING_AUTOMATION_BACKOFF_MS: '600000',
        INBOUND_SWEEP_INTERVAL_MS: '3600000',
      },
    });
  });
  afterAll(() => t?.close());

  it(`answers ${runs} mutated signed events with 200 and stores each (seed ${seed})`, async () => {
    if (process.env.FUZZ_RUNS)
      process.stdout.write(`inbound fuzz: ${runs} runs, FUZZ_SEED=${seed}\n`);
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fuzzCase, async ({ type, mutations, unknownEvent }) => {
        const event = baseEvent(type);
        for (const { at, what } of mutations) {
          const paths = pathsOf(event);
          if (paths.length > 0) mutate(event, paths[at % paths.length], what);
        }
        if (unknownEvent) event.event = 'meeting.fuzzed_unknown';
        const text = JSON.stringify(event).replace(/"@@number:([^@]+)@@"/g, '$1');
        const body = Buffer.from(text, 'utf8');
        const trackingId = `fuzz-${seed}-${++n}-${randomBytes(4).toString('hex')}`;
        const res = await sendZoomEvent(t.baseUrl, body, { trackingId });
        const answer = res.text;
        statuses.set(String(res.status), (statuses.get(String(res.status)) ?? 0) + 1);
        const label = `${event.event}: ${res.status} ${answer.slice(0, 300)}`;
        if (body.length > BODY_LIMIT) {
          if (res.status !== 413) throw new Error(label);
          return;
        }
        if (res.status !== 200) throw new Error(label);
        if ((JSON.parse(answer) as { status: string }).status !== 'accepted') return;
        const rows = await db(`SELECT 1 FROM inbound_events WHERE tracking_id = $1`, [trackingId]);
        if (rows.length !== 1) throw new Error(`${label}: no stored row`);
        accepted.push({ trackingId, text, type: event.event });
      }),
      { numRuns: runs, seed, path: fuzzPath, verbose: fc.VerbosityLevel.None },
    );
    if (process.env.FUZZ_RUNS) {
      process.stdout.write(
        `inbound fuzz: statuses ${JSON.stringify(Object.fromEntries(statuses))}\n`,
      );
    }
    expect(accepted.length).toBeGreaterThan(runs / 3);
  });

  it('publishes each mapped event with the data it came with', async () => {
    let checked = 0;
    for (const sent of accepted) {
      const rule = mappingRuleOf(sent.type);
      const envelope = asRecord(parsePrecise(sent.text));
      if (!rule || 'automation' in rule || rule.approval) continue;
      if (unmappableReason(rule, envelope.payload) !== null) continue;
      const [row] = await db<{ body: string }>(
        `SELECT body FROM events WHERE source->>'tracking_id' = $1`,
        [sent.trackingId],
      );
      expect(row).toBeDefined();
      const data = asRecord(parsePrecise(row.body)).data;
      const expected = rule.data(asRecord(asRecord(envelope.payload).object));
      expect(stringifyPrecise(data)).toBe(stringifyPrecise(expected));
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('ends every stored event processed, with no retry of a certain failure', async () => {
    const ids = accepted.map((s) => s.trackingId);
    const unprocessed = () =>
      db<{ event: string; tracking_id: string; process_error: string | null }>(
        `SELECT event, tracking_id, process_error FROM inbound_events
         WHERE tracking_id = ANY($1::text[]) AND processed_at IS NULL`,
        [ids],
      );
    const retried = () => t.logs.filter((line) => line.includes('will retry'));
    await waitFor(async () => (await unprocessed()).length === 0 || retried().length > 0, {
      timeoutMs: 60_000,
      what: 'every fuzzed event processed',
    }).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${JSON.stringify(await unprocessed(), null, 1)}`);
    });
    expect(retried()).toEqual([]);
    expect(await unprocessed()).toEqual([]);
  });
});

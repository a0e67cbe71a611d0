/**
 * `npm run send-event -- <platform event>… [--url http://localhost:3000] [--secret …]`: sends
 * sample platform (Zoom) events to the service's /zoom/events, signed as the platform signs
 * them, each about a new meeting so none is taken for a redelivery.
 *
 * `--via websocket [--platform-url http://127.0.0.1:4100]`: has the fake platform of
 * `npm run tryout -- --fake-platform` push them over the event socket the service holds.
 */
import { parseArgs } from 'node:util';
import {
  ZoomEvent,
  asWebinar,
  meetingEnded,
  meetingStarted,
  meetingUpdated,
  meetingUuid,
  participantJoined,
  participantLeft,
  recordingCompleted,
  registrationCancelled,
  registrationCreated,
  urlValidation,
} from './platform/zoom-events';
import { postZoomEvent } from './platform/zoom-sender';
import { TRYOUT } from './tryout-settings';

const meetingSamples: Record<string, (uuid: string) => ZoomEvent> = {
  'meeting.started': (uuid) => meetingStarted(uuid),
  'meeting.ended': meetingEnded,
  'meeting.participant_joined': (uuid) => participantJoined(uuid),
  'meeting.participant_left': (uuid) => participantLeft(uuid),
  'meeting.registration_created': (uuid) => registrationCreated(uuid),
  'meeting.registration_cancelled': (uuid) => registrationCancelled(uuid),
};
const SAMPLES: Record<string, (uuid: string) => ZoomEvent> = {
  ...meetingSamples,
  ...Object.fromEntries(
    Object.entries(meetingSamples).map(([name, build]) => [
      name.replace(/^meeting\./, 'webinar.'),
      (uuid: string) => asWebinar(build(uuid)),
    ]),
  ),
  'recording.completed': (uuid) => recordingCompleted(uuid),
  'meeting.updated': () => meetingUpdated(),
  'endpoint.url_validation': () => urlValidation(),
};

const VIAS = ['webhook', 'websocket'];

/** Has the try-out's fake platform push `event` over its socket; the answer's status and text. */
async function pushOverSocket(
  platformUrl: string,
  event: ZoomEvent,
): Promise<{ status: number; text: string }> {
  const res = await fetch(`${platformUrl}${TRYOUT.socketEventsPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  }).catch((error: Error & { cause?: Error }) => {
    throw new Error(
      `could not reach the fake platform at ${platformUrl} (${error.cause?.message ?? error.message}): ` +
        'is the service running with npm run tryout -- --fake-platform?',
    );
  });
  return { status: res.status, text: (await res.text()).trim() };
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string', default: `http://localhost:${TRYOUT.servicePort}` },
      secret: { type: 'string', default: TRYOUT.zoomSecretToken },
      via: { type: 'string', default: 'webhook' },
      'platform-url': { type: 'string', default: `http://127.0.0.1:${TRYOUT.fakePlatformPort}` },
    },
  });
  const unknown = positionals.filter((name) => !SAMPLES[name]);
  const badVia = VIAS.includes(values.via) ? '' : `No way ${values.via}: webhook or websocket. `;
  if (positionals.length === 0 || unknown.length > 0 || badVia) {
    const mistaken = unknown.length > 0 || badVia !== '';
    (mistaken ? process.stderr : process.stdout).write(
      `${badVia}${unknown.length > 0 ? `No sample for ${unknown.join(', ')}. ` : ''}` +
        `Usage: npm run send-event -- <event>… [--url ${values.url}] [--secret …]\n` +
        `       npm run send-event -- --via websocket <event>… [--platform-url ${values['platform-url']}]\n` +
        '         (over the socket of npm run tryout -- --fake-platform)\n' +
        `Events: ${Object.keys(SAMPLES).join(', ')}\n`,
    );
    // Asking with no event is asking for the list; naming an unknown one is a mistake.
    return mistaken ? 2 : 0;
  }
  let failed = 0;
  for (const name of positionals) {
    // A fresh meeting and event time each run: the service would drop a repeat as a redelivery.
    const event = { ...SAMPLES[name](meetingUuid()), event_ts: Date.now() };
    if (values.via === 'websocket') {
      const pushed = await pushOverSocket(values['platform-url'], event);
      process.stdout.write(
        pushed.status === 202
          ? `${name} → pushed over the platform's socket\n`
          : `${name} → not pushed: ${pushed.status} ${pushed.text}\n`,
      );
      if (pushed.status !== 202) failed += 1;
      continue;
    }
    const sent = await postZoomEvent(values.url, event, { secret: values.secret }).catch(
      (error: Error & { cause?: Error }) => {
        throw new Error(
          `could not reach ${values.url}/zoom/events (${error.cause?.message ?? error.message}): ` +
            'is the service running (npm run tryout)?',
        );
      },
    );
    process.stdout.write(`${name} → ${sent.status} ${sent.text}\n`);
    if (sent.status !== 200) failed += 1;
  }
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `send-event failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);

/**
 * `npm run send-event -- <platform event>… [--url http://localhost:3000] [--secret …]`: sends
 * sample platform (Zoom) events to the service's /zoom/events, signed as the platform signs
 * them, each about a new meeting so none is taken for a redelivery.
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

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string', default: `http://localhost:${TRYOUT.servicePort}` },
      secret: { type: 'string', default: TRYOUT.zoomSecretToken },
    },
  });
  const unknown = positionals.filter((name) => !SAMPLES[name]);
  if (positionals.length === 0 || unknown.length > 0) {
    (unknown.length > 0 ? process.stderr : process.stdout).write(
      `${unknown.length > 0 ? `No sample for ${unknown.join(', ')}. ` : ''}` +
        `Usage: npm run send-event -- <event>… [--url ${values.url}] [--secret …]\n` +
        `Events: ${Object.keys(SAMPLES).join(', ')}\n`,
    );
    // Asking with no event is asking for the list; naming an unknown one is a mistake.
    return unknown.length > 0 ? 2 : 0;
  }
  let failed = 0;
  for (const name of positionals) {
    // A fresh meeting and event time each run: the service would drop a repeat as a redelivery.
    const event = { ...SAMPLES[name](meetingUuid()), event_ts: Date.now() };
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

import type { SampleEvent } from './sample-event';

export type { SampleEvent } from './sample-event';
import endpointUrlValidation from './endpoint.url_validation';
import meetingCreated from './meeting.created';
import meetingEnded from './meeting.ended';
import participantJoined from './meeting.participant_joined';
import participantLeft from './meeting.participant_left';
import registrationApproved from './meeting.registration_approved';
import registrationCancelled from './meeting.registration_cancelled';
import registrationCreated from './meeting.registration_created';
import registrationDenied from './meeting.registration_denied';
import meetingStarted from './meeting.started';
import meetingUpdated from './meeting.updated';
import recordingCompleted from './recording.completed';
import recordingTranscriptCompleted from './recording.transcript_completed';
import recordingTrashed from './recording.trashed';

/**
 * The one corpus of platform (Zoom) webhook bodies, each naming where its shape comes from:
 * the Swagger examples, `npm run send-event`'s events and the tests all start from these. It
 * lives in src/ (not test/) because the Swagger examples ship in the built image.
 */
export const SAMPLE_EVENTS = {
  'endpoint.url_validation': endpointUrlValidation,
  'meeting.created': meetingCreated,
  'meeting.started': meetingStarted,
  'meeting.ended': meetingEnded,
  'meeting.updated': meetingUpdated,
  'meeting.participant_joined': participantJoined,
  'meeting.participant_left': participantLeft,
  'meeting.registration_created': registrationCreated,
  'meeting.registration_approved': registrationApproved,
  'meeting.registration_denied': registrationDenied,
  'meeting.registration_cancelled': registrationCancelled,
  'recording.completed': recordingCompleted,
  'recording.transcript_completed': recordingTranscriptCompleted,
  'recording.trashed': recordingTrashed,
} satisfies Record<string, SampleEvent>;

export type SampleBody = SampleEvent['body'];

/**
 * The webinar.* counterpart of a meeting.* body: the platform sends webinars the same shapes,
 * on an object of webinar `type` 5. A copy: `body` is left as it was.
 */
export function webinarOf<T extends { event: string; payload: Record<string, unknown> }>(
  body: T,
): T {
  const object = body.payload.object as Record<string, unknown> | undefined;
  return {
    ...body,
    event: body.event.replace(/^meeting\./, 'webinar.'),
    payload: { ...body.payload, ...(object ? { object: { ...object, type: 5 } } : {}) },
  } as T;
}

/**
 * Each sample as JSON text, made at its first use: parsing it is the cheapest deep copy, and
 * the benchmarks build thousands of events in a burst.
 */
const SAMPLE_TEXTS = new Map<string, string>();

/**
 * A deep copy of the sample of `event`, for the meeting `uuid` if given (recording files name
 * it too). A webinar.* name takes the meeting.* sample of the same suffix (webinarOf).
 */
export function sampleEvent(event: string, uuid?: string): SampleBody {
  const webinar = event.startsWith('webinar.');
  const name = webinar ? event.replace(/^webinar\./, 'meeting.') : event;
  const sample = (SAMPLE_EVENTS as Record<string, SampleEvent>)[name];
  if (!sample) throw new Error(`no sample of ${event} in src/inbound/sample-events`);
  let text = SAMPLE_TEXTS.get(name);
  if (text === undefined) SAMPLE_TEXTS.set(name, (text = JSON.stringify(sample.body)));
  const body = JSON.parse(text) as SampleBody;
  const object = body.payload.object;
  if (uuid !== undefined && object) {
    object.uuid = uuid;
    const files = object.recording_files as Record<string, unknown>[] | undefined;
    files?.forEach((file) => (file.meeting_id = uuid));
  }
  return webinar ? webinarOf(body) : body;
}

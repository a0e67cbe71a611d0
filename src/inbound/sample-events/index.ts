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
 * A deep copy of the sample of `event`, for the meeting `uuid` if given (recording files name
 * it too). A webinar.* name takes the meeting.* sample of the same suffix, on a webinar object
 * (`type` 5): the platform sends webinars the same shapes.
 */
export function sampleEvent(event: string, uuid?: string): SampleBody {
  const webinar = event.startsWith('webinar.');
  const name = webinar ? event.replace(/^webinar\./, 'meeting.') : event;
  const sample = (SAMPLE_EVENTS as Record<string, SampleEvent>)[name];
  if (!sample) throw new Error(`no sample of ${event} in src/inbound/sample-events`);
  const body = structuredClone(sample.body);
  body.event = event;
  const object = body.payload.object;
  if (object) {
    if (uuid !== undefined) object.uuid = uuid;
    if (webinar) object.type = 5;
    const files = object.recording_files as Record<string, unknown>[] | undefined;
    if (uuid !== undefined) files?.forEach((file) => (file.meeting_id = uuid));
  }
  return body;
}

import type { ExamplesObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { mappingRuleOf } from '../event-mapping';
import { sampleEvent } from '../sample-events';

/**
 * What the platform sends, as the Swagger page shows it. What subscribers receive is shown by
 * the event catalog's own examples (src/webhooks/event-examples.ts), one list for GET
 * /api/event-types, Swagger and the template preview.
 */

type Example = { summary: string; value: unknown };

/** "meeting.started → job.started", read from the mapping so the two cannot drift apart. */
function summaryOf(event: string): string {
  const rule = mappingRuleOf(event);
  if (!rule) return event;
  if ('kind' in rule && rule.approval) {
    return rule.approval === 'withdrawn'
      ? `${event} → ${rule.kind}, if the registrant had been gained`
      : `${event} → ${rule.kind}, once per registrant and meeting, when approved`;
  }
  return 'kind' in rule
    ? `${event} → ${rule.kind}`
    : `${event} → recording automation → operation.complete / operation.failed`;
}

/** The meeting and registration events; the webinar.* ones have the same shapes. */
const MEETING_LIKE_EVENTS = [
  'started',
  'ended',
  'participant_joined',
  'participant_left',
  'registration_created',
  'registration_approved',
  'registration_denied',
  'registration_cancelled',
];

/** The platform events the Swagger page shows, from the sample-event corpus. */
const EXAMPLE_EVENTS = [
  'endpoint.url_validation',
  ...MEETING_LIKE_EVENTS.map((suffix) => `meeting.${suffix}`),
  ...MEETING_LIKE_EVENTS.map((suffix) => `webinar.${suffix}`),
  'recording.completed',
  'recording.transcript_completed',
];

const examples: Record<string, Example> = Object.fromEntries(
  EXAMPLE_EVENTS.map((event) => [
    event,
    {
      summary:
        event === 'endpoint.url_validation'
          ? 'URL validation (answered with plainToken and encryptedToken)'
          : summaryOf(event),
      value: sampleEvent(event),
    },
  ]),
);

export const PLATFORM_EVENT_EXAMPLES: ExamplesObject = examples;

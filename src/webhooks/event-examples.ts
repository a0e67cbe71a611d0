/**
 * An example notification body of every kind of the event catalog (GET /api/event-types), as
 * the service sends it: what POST /api/templates/render, the console's preview and
 * `meb templates render` evaluate a template on when given no body of their own
 * (docs/templates.md). event-catalog.spec.ts checks each against its kind's schema.
 */
import { VIA } from '../common/inbound-via';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const CREATED = '2026-01-01T10:00:05.123Z';
const SOURCE = {
  platform: 'zoom',
  event: 'meeting.started',
  event_ts: 1767261605123,
  account_id: 'AbCdEfGhIjKlMnOp',
  tracking_id: null,
  via: VIA.webhook,
};
const MEETING = {
  id: '85746065432',
  uuid: '4444AAAiAAAAAiAiAiiAii==',
  topic: 'Quarterly all-hands',
  host_id: 'z8yAAAAA8bbbQ',
  type: 2,
  duration: 60,
  timezone: 'Europe/Berlin',
  start_time: '2026-01-01T10:00:00Z',
};
const PARTICIPANT = {
  user_id: '16778240',
  participant_uuid: 'A1B2C3D4E5F6',
  user_name: 'Jill Chill',
  email: 'jill@example.com',
};
const BASE = 'https://bridge.example.com/api/recordings/85746065432/files';
const ATTENDANCE = {
  id: '85746065432',
  uuid: '4444AAAiAAAAAiAiAiiAii==',
  revision: 1,
  topic: 'Onboarding training',
  host_id: 'x1yCzABCDEfg23HiJKl4mN',
  start_time: '2025-01-01T10:00:00Z',
  end_time: '2025-01-01T11:00:00Z',
  duration_seconds: 3600,
  participants_count: 1,
  participants: [
    {
      user_id: '16778240',
      user_name: 'Jill Chill',
      email: 'jchill@example.com',
      registrant_id: null,
      customer_key: 'crm-4711',
      sessions: [
        { join_time: '2025-01-01T10:01:40Z', leave_time: '2025-01-01T10:20:00Z' },
        { join_time: '2025-01-01T10:25:00Z', leave_time: '2025-01-01T11:00:00Z', open: true },
      ],
      first_join: '2025-01-01T10:01:40Z',
      last_leave: '2025-01-01T11:00:00Z',
      duration_seconds: 3200,
    },
  ],
};

const body = (event: string, data: unknown, source: object | null = SOURCE) => ({
  id: ID,
  event,
  created_at: CREATED,
  data,
  source,
});

const sourceOf = (event: string) => ({ ...SOURCE, event });

export const EVENT_EXAMPLES: Record<string, Record<string, unknown>> = {
  'job.started': body('job.started', MEETING),
  'job.completed': body(
    'job.completed',
    { ...MEETING, end_time: '2026-01-01T11:02:00Z' },
    sourceOf('meeting.ended'),
  ),
  'follower.gained': body(
    'follower.gained',
    {
      ...MEETING,
      participant: { ...PARTICIPANT, join_time: '2026-01-01T10:01:12Z' },
    },
    sourceOf('meeting.participant_joined'),
  ),
  'follower.lost': body(
    'follower.lost',
    {
      ...MEETING,
      participant: {
        ...PARTICIPANT,
        leave_time: '2026-01-01T10:55:40Z',
        leave_reason: 'left the meeting',
      },
    },
    sourceOf('meeting.participant_left'),
  ),
  'operation.complete': body(
    'operation.complete',
    {
      ...MEETING,
      files: [
        {
          id: 'f1a2b3c4',
          file_type: 'MP4',
          file_extension: 'MP4',
          file_size: 246560,
          recording_type: 'shared_screen_with_speaker_view',
          recording_start: '2026-01-01T10:00:10Z',
          recording_end: '2026-01-01T11:01:50Z',
          status: 'completed',
          download_url: `${BASE}/f1a2b3c4/download`,
        },
        {
          id: 'f5e6d7c8',
          file_type: 'TRANSCRIPT',
          file_extension: 'VTT',
          file_size: 1820,
          recording_type: 'audio_transcript',
          recording_start: '2026-01-01T10:00:10Z',
          recording_end: '2026-01-01T11:01:50Z',
          status: 'completed',
          download_url: `${BASE}/f5e6d7c8/download`,
        },
      ],
    },
    sourceOf('recording.completed'),
  ),
  'operation.failed': body(
    'operation.failed',
    { ...MEETING, error: 'the platform answered 404 for every file of the recording' },
    sourceOf('recording.completed'),
  ),
  'meeting.attendance': body('meeting.attendance', ATTENDANCE, sourceOf('meeting.ended')),
  'webhook.test': body(
    'webhook.test',
    {
      webhook_id: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
      message: 'This is a test delivery from the meeting event bridge',
    },
    null,
  ),
  'zoom.*': body(
    'zoom.meeting.created',
    {
      account_id: 'AbCdEfGhIjKlMnOp',
      operator: 'admin@example.com',
      object: {
        id: 85746065432,
        uuid: '4444AAAiAAAAAiAiAiiAii==',
        host_id: 'z8yAAAAA8bbbQ',
        topic: 'Quarterly all-hands',
        type: 2,
        start_time: '2026-01-01T10:00:00Z',
        duration: 60,
        timezone: 'Europe/Berlin',
      },
    },
    sourceOf('meeting.created'),
  ),
  'bridge.webhook.disabled': body(
    'bridge.webhook.disabled',
    {
      webhook_id: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
      url: 'https://receiver.example.com/hooks/meetings',
      reason: 'gone',
      disabled_at: '2026-01-01T10:00:05.000Z',
    },
    null,
  ),
  'bridge.delivery.failed': body(
    'bridge.delivery.failed',
    {
      delivery_id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427',
      webhook_id: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
      event: 'job.started',
      event_id: ID,
      attempt_count: 4,
      last_status_code: 503,
      last_error: 'HTTP 503',
    },
    null,
  ),
  'bridge.account.disconnected': body(
    'bridge.account.disconnected',
    { account_id: 'AbCdEfGhIjKlMnOp', reason: 'Invalid Token!' },
    null,
  ),
  'bridge.account.deauthorized': body(
    'bridge.account.deauthorized',
    {
      account_id: 'AbCdEfGhIjKlMnOp',
      reason: 'app_deauthorized',
      deauthorized_at: '2026-01-01T14:59:58.000Z',
    },
    null,
  ),
  'bridge.reconciliation.completed': body(
    'bridge.reconciliation.completed',
    {
      id: '6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b',
      trigger: 'schedule',
      since: '2026-01-01T08:00:00.000Z',
      until: '2026-01-01T10:00:00.000Z',
      status: 'succeeded',
      created: { 'meeting.ended': 1, 'meeting.participant_left': 3 },
    },
    null,
  ),
};

/** The example of `kind`: its own, or the zoom.* family's for a platform event. */
export function exampleOf(kind: string): Record<string, unknown> | null {
  const example = EVENT_EXAMPLES[kind];
  if (example) return example;
  if (/^zoom\.[a-z0-9_]+\.[a-z0-9_]+$/.test(kind)) {
    const family = EVENT_EXAMPLES['zoom.*'];
    return {
      ...family,
      event: kind,
      source: { ...(family.source as object), event: kind.slice(5) },
    };
  }
  return null;
}

import { ACCOUNT_ID, OPERATOR, SampleEvent } from './sample-event';

/** An event the bridge does not map: stored, and delivered only as it came (`zoom.*`). */
export default {
  source:
    'Zoom Meeting API webhook reference, meeting.updated example: operator fields, the ' +
    'changed fields only in object and old_object, and time_stamp',
  body: {
    event: 'meeting.updated',
    event_ts: 1735720000000,
    payload: {
      account_id: ACCOUNT_ID,
      ...OPERATOR,
      object: { id: 85746065432, topic: 'Renamed' },
      old_object: { id: 85746065432, topic: 'Bridge test' },
      time_stamp: 1735720000000,
    },
  },
} satisfies SampleEvent;

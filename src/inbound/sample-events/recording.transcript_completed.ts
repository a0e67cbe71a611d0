import { ACCOUNT_ID, SampleEvent, meeting } from './sample-event';

export default {
  source:
    'Zoom Cloud Recording webhook reference, recording.transcript_completed example: the ' +
    'recording event shape, naming only the new transcript file, with the top-level ' +
    'download_token',
  body: {
    event: 'recording.transcript_completed',
    event_ts: 1735731000000,
    download_token: 'eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.fixture.token',
    payload: {
      account_id: ACCOUNT_ID,
      object: {
        ...meeting(85746065432),
        total_size: 95663,
        recording_count: 1,
        recording_files: [
          {
            id: 'a1b2c3d4-0005',
            meeting_id: '4444AAAiAAAAAiAiAiiAii==',
            recording_start: '2025-01-01T10:00:10Z',
            recording_end: '2025-01-01T10:29:50Z',
            file_type: 'TRANSCRIPT',
            file_extension: 'VTT',
            file_size: 95663,
            download_url: 'https://example.zoom.us/rec/download/t',
            status: 'completed',
            recording_type: 'audio_transcript',
          },
        ],
      },
    },
  },
} satisfies SampleEvent;

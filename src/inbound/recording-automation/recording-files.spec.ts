import { recordingCompleted } from '../../../scripts/platform/zoom-events';
import { ZoomMeetingRecording } from '../../zoom/zoom.types';
import { notifiedFiles } from './recording-files';

const UUID = '/ab+cd//ef==';
const recording = recordingCompleted(UUID).payload.object as ZoomMeetingRecording;
const base = 'https://bridge.example.com';
const link = (fileId: string) =>
  `${base}/api/meetings/%2Fab%2Bcd%2F%2Fef%3D%3D/recordings/${fileId}/download`;

describe('notifiedFiles', () => {
  it('lists every file with an id, pointing at this service, never at the platform', () => {
    const files = notifiedFiles(recording, UUID, { types: null, publicBaseUrl: base });
    expect(files).toEqual([
      {
        id: 'a1b2c3d4-0001',
        file_type: 'MP4',
        file_size: 3400000,
        download_url: link('a1b2c3d4-0001'),
      },
      {
        id: 'a1b2c3d4-0002',
        file_type: 'M4A',
        file_size: 95663,
        download_url: link('a1b2c3d4-0002'),
      },
      {
        id: 'a1b2c3d4-0003',
        file_type: 'TRANSCRIPT',
        file_size: 1204,
        download_url: link('a1b2c3d4-0003'),
      },
      {
        id: 'a1b2c3d4-0004',
        file_type: 'CHAT',
        file_size: 512,
        download_url: link('a1b2c3d4-0004'),
      },
    ]);
    expect(JSON.stringify(files)).not.toContain('zoom.us');
  });

  it('keeps only RECORDING_FILE_TYPES', () => {
    const files = notifiedFiles(recording, UUID, {
      types: ['MP4', 'TRANSCRIPT'],
      publicBaseUrl: base,
    });
    expect(files.map((f) => f.file_type)).toEqual(['MP4', 'TRANSCRIPT']);
  });

  it('leaves out files without an id (CC, TIMELINE): the download route cannot name them', () => {
    const files = notifiedFiles(recording, UUID, { types: ['CC'], publicBaseUrl: base });
    expect(files).toEqual([]);
  });

  it('includes participant audio files, and reports an unknown size as null', () => {
    const withAudio: ZoomMeetingRecording = {
      recording_files: [],
      participant_audio_files: [{ id: 'pa-1', file_type: 'M4A', download_url: 'https://x' }],
    };
    expect(notifiedFiles(withAudio, '123', { types: null, publicBaseUrl: base })).toEqual([
      {
        id: 'pa-1',
        file_type: 'M4A',
        file_size: null,
        download_url: `${base}/api/meetings/123/recordings/pa-1/download`,
      },
    ]);
  });
});

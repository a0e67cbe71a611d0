import { recordingCompleted } from '../../../scripts/platform/zoom-events';
import { ZoomMeetingRecording } from '../../zoom/zoom.types';
import { fileRef } from '../../zoom/zoom-recordings';
import { notifiedFiles } from './recording-files';

const UUID = '/ab+cd//ef==';
const recording = recordingCompleted(UUID).payload.object as ZoomMeetingRecording;
const base = 'https://bridge.example.com';
const link = (fileId: string) =>
  `${base}/api/meetings/%2Fab%2Bcd%2F%2Fef%3D%3D/recordings/${fileId}/download`;

describe('notifiedFiles', () => {
  const described = (id: string | null, type: string, size: number, ext: string, kind: string) => ({
    id,
    file_type: type,
    file_extension: ext,
    file_size: size,
    recording_type: kind,
    recording_start: '2025-01-01T10:00:10Z',
    recording_end: '2025-01-01T10:29:50Z',
    status: 'completed',
  });

  it('lists every file, with what the platform says of it, pointing at this service', () => {
    const files = notifiedFiles(recording, UUID, { types: null, publicBaseUrl: base });
    const [cc, timeline] = ['CC', 'TIMELINE'].map((type) =>
      recording.recording_files!.find((f) => f.file_type === type)!,
    );
    expect(files).toEqual([
      {
        ...described('a1b2c3d4-0001', 'MP4', 3400000, 'MP4', 'shared_screen_with_speaker_view'),
        download_url: link('a1b2c3d4-0001'),
      },
      {
        ...described('a1b2c3d4-0002', 'M4A', 95663, 'M4A', 'audio_only'),
        download_url: link('a1b2c3d4-0002'),
      },
      {
        ...described(null, 'CC', 1304, 'VTT', 'closed_caption'),
        download_url: link(fileRef(cc)),
      },
      {
        ...described(null, 'TIMELINE', 33, 'JSON', 'timeline'),
        download_url: link(fileRef(timeline)),
      },
    ]);
    expect(JSON.stringify(files)).not.toContain('zoom.us');
  });

  it('keeps only RECORDING_FILE_TYPES', () => {
    const files = notifiedFiles(recording, UUID, {
      types: ['MP4', 'TIMELINE'],
      publicBaseUrl: base,
    });
    expect(files.map((f) => f.file_type)).toEqual(['MP4', 'TIMELINE']);
  });

  it('names a file without an id (CC, TIMELINE) the same way in every event', () => {
    const [cc] = notifiedFiles(recording, UUID, { types: ['CC'], publicBaseUrl: base });
    expect(cc.id).toBeNull();
    expect(cc.download_url).toMatch(/\/recordings\/cc-[0-9a-f]{24}\/download$/);
    const again = recordingCompleted(UUID, 'another-token').payload.object as ZoomMeetingRecording;
    again.recording_files!.forEach((f) => (f.download_url += '?other=1'));
    expect(notifiedFiles(again, UUID, { types: ['CC'], publicBaseUrl: base })[0]).toEqual(cc);
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
        file_extension: null,
        file_size: null,
        recording_type: null,
        recording_start: null,
        recording_end: null,
        status: null,
        download_url: `${base}/api/meetings/123/recordings/pa-1/download`,
      },
    ]);
  });
});

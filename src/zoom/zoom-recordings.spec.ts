import { filterRecordingFiles, filterRecordingList, recordingFilesOf } from './zoom-recordings';
import { ZoomMeetingRecording } from './zoom.types';

const recording = (uuid: string, types: string[]): ZoomMeetingRecording => ({
  uuid,
  recording_count: types.length,
  total_size: 100,
  recording_files: types.map((file_type, i) => ({ id: `${uuid}-${i}`, file_type })),
  participant_audio_files: [{ id: `${uuid}-p`, file_type: 'M4A' }],
});

describe('recording file filters', () => {
  it('keeps only the listed types, case-insensitively, in both file lists', () => {
    const filtered = filterRecordingFiles(recording('a', ['MP4', 'M4A', 'CHAT']), ['m4a']);
    expect(filtered.recording_files?.map((f) => f.file_type)).toEqual(['M4A']);
    expect(filtered.participant_audio_files).toHaveLength(1);
    expect(filtered.recording_count).toBe(3); // the platform's own totals stay as sent
  });

  it('keeps everything for null and does not touch the input', () => {
    const input = recording('a', ['MP4', 'CHAT']);
    expect(filterRecordingFiles(input, null)).toBe(input);
    filterRecordingFiles(input, ['CHAT']);
    expect(input.recording_files).toHaveLength(2);
  });

  it('drops meetings left without a matching file from a list', () => {
    const list = { meetings: [recording('a', ['MP4']), recording('b', ['TRANSCRIPT'])] };
    const filtered = filterRecordingList(list, ['TRANSCRIPT']);
    expect(filtered.meetings?.map((m) => m.uuid)).toEqual(['b']);
  });

  it('lists the files of both lists', () => {
    expect(recordingFilesOf(recording('a', ['MP4'])).map((f) => f.id)).toEqual(['a-0', 'a-p']);
    expect(recordingFilesOf({})).toEqual([]);
  });
});

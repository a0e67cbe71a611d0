import { recordingCompleted } from '../../../scripts/platform/zoom-events';
import { TestContext, newTestService } from '../../../test/fakes/new-test-service';
import { ZoomMeetingRecording } from '../../zoom/zoom.types';
import { InboundEventEntity } from '../inbound-event.entity';
import { automationOutcomeKey } from '../inbound-job';
import { RecordingAutomationService } from './recording-automation.service';

const UUID = 'rec-uuid==';
const recording = recordingCompleted(UUID).payload.object as ZoomMeetingRecording;
const FILES = recording.recording_files!;
const WHAT = 'recording automation (unit test)';

describe('RecordingAutomationService', () => {
  let t: TestContext<RecordingAutomationService>;
  let row: InboundEventEntity;

  beforeEach(async () => {
    t = await newTestService(RecordingAutomationService, {
      PUBLIC_BASE_URL: 'https://bridge.example.com',
    });
    t.tables.addWebhook({ events: ['operation.complete', 'operation.failed'] });
    const event = recordingCompleted(UUID);
    row = t.tables.addInboundEvent({ event: event.event, payload: { ...event } });
  });

  const outcomes = () => [...t.tables.events.values()].map((e) => e.kind);

  it('publishes operation.complete with the files from the event, and marks the event processed', async () => {
    await t.sut.complete(row.id, false, WHAT);

    expect(outcomes()).toEqual(['operation.complete']);
    const published = await t.dispatcher.published(automationOutcomeKey(row));
    expect(published?.data.files).toHaveLength(FILES.length);
    expect(row.processedAt).toBeInstanceOf(Date);
    expect(row.processError).toBeNull();
  });

  it('keeps the event download token (still encrypted) per file for an event-only deployment', async () => {
    const encrypted = t.cipher.encrypt('the-download-token', 'recording-download-token');
    row.downloadTokenEncrypted = encrypted;

    await t.sut.complete(row.id, false, WHAT);

    const links = [...t.tables.recordingDownloads.entries()];
    expect(links).toHaveLength(FILES.length);
    const [key, link] = links[0];
    expect(JSON.parse(key)).toEqual([UUID, 'a1b2c3d4-0001']);
    expect(link.downloadTokenEncrypted).toBe(encrypted);
    expect(link.downloadUrl).toBe(FILES[0].download_url);
    expect(link.expiresAt.getTime()).toBe(row.receivedAt.getTime() + 24 * 3600 * 1000);
    // Processed: the event's own copy of the token is dropped.
    expect(row.downloadTokenEncrypted).toBeNull();
  });

  it('throws before the last attempt when the files cannot be collected, publishing nothing', async () => {
    t.zoom.configured = true;
    t.zoom.recordings = () => Promise.reject(new Error('platform unavailable'));

    await expect(t.sut.complete(row.id, false, WHAT)).rejects.toThrow('platform unavailable');
    expect(outcomes()).toEqual([]);
    expect(row.processedAt).toBeNull();
  });

  it('publishes operation.failed at once when the event itself makes the failure certain', async () => {
    const event = recordingCompleted(UUID);
    const object = event.payload.object as Record<string, unknown>;
    delete object.recording_files;
    const bare = t.tables.addInboundEvent({ event: event.event, payload: { ...event } });

    await t.sut.complete(bare.id, false, WHAT);

    expect(outcomes()).toEqual(['operation.failed']);
    expect(bare.processError).toMatch(/has no recording_files list/);
  });

  it.each(['.', '..'])(
    'publishes operation.failed at once for a meeting uuid %j: never put in a path',
    async (uuid) => {
      t.zoom.configured = true;
      t.zoom.recordings = () => Promise.reject(new Error('the platform was asked'));
      const event = recordingCompleted(uuid);
      const dotted = t.tables.addInboundEvent({ event: event.event, payload: { ...event } });

      await t.sut.complete(dotted.id, false, WHAT);

      expect(outcomes()).toEqual(['operation.failed']);
      expect(dotted.processError).toContain(`${JSON.stringify(uuid)} cannot be put in a path`);
    },
  );

  it('skips what is not a file in the list (a null), keeping the others', async () => {
    const event = recordingCompleted(UUID);
    const object = event.payload.object as { recording_files: unknown[] };
    object.recording_files = [null, 'x', ...object.recording_files, 7];
    const odd = t.tables.addInboundEvent({ event: event.event, payload: { ...event } });

    await t.sut.complete(odd.id, false, WHAT);

    const published = await t.dispatcher.published(automationOutcomeKey(odd));
    expect(published?.kind).toBe('operation.complete');
    expect(published?.data.files).toHaveLength(FILES.length);
  });

  it('publishes operation.failed with the reason on the last attempt', async () => {
    t.zoom.configured = true;
    t.zoom.recordings = () => Promise.reject(new Error('platform unavailable'));

    await t.sut.complete(row.id, true, WHAT);

    expect(outcomes()).toEqual(['operation.failed']);
    expect(row.processError).toBe('platform unavailable');
  });

  describe('the earlier outcome stands', () => {
    it('adopts an operation.failed published before instead of publishing operation.complete', async () => {
      // An earlier run published its outcome, then failed to mark the event processed.
      await t.dispatcher.publish({
        kind: 'operation.failed',
        data: { error: 'the earlier reason' },
        idempotencyKey: automationOutcomeKey(row),
      });
      const deliveries = t.tables.deliveries.size;

      await t.sut.complete(row.id, false, WHAT);

      expect(outcomes()).toEqual(['operation.failed']);
      expect(t.tables.deliveries.size).toBe(deliveries);
      // Not even asked: the files are not collected again.
      expect(t.zoom.calls).toEqual([]);
      expect(row.processedAt).toBeInstanceOf(Date);
      expect(row.processError).toBe('the earlier reason');
    });

    it('adopts an operation.complete published before, even on the last attempt', async () => {
      await t.dispatcher.publish({
        kind: 'operation.complete',
        data: { files: [] },
        idempotencyKey: automationOutcomeKey(row),
      });
      t.zoom.configured = true;

      await t.sut.complete(row.id, true, WHAT);

      expect(outcomes()).toEqual(['operation.complete']);
      expect(t.zoom.calls).toEqual([]);
      expect(row.processError).toBeNull();
    });

    it('keeps the outcome of a concurrent run that published first', async () => {
      t.zoom.configured = true;
      // While this run asks the platform for the files, another run of the same event gives
      // up and publishes operation.failed.
      t.zoom.recordings = async () => {
        await t.dispatcher.publish({
          kind: 'operation.failed',
          data: { error: 'the other run gave up' },
          idempotencyKey: automationOutcomeKey(row),
        });
        return recording;
      };

      await t.sut.complete(row.id, false, WHAT);

      expect(outcomes()).toEqual(['operation.failed']);
      expect(row.processError).toBe('the other run gave up');
    });
  });

  it('does nothing for an event already processed', async () => {
    row.processedAt = new Date();

    await t.sut.complete(row.id, true, WHAT);

    expect(outcomes()).toEqual([]);
  });
});

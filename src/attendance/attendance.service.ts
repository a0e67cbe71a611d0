import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { DispatcherService } from '../dispatcher/publish/dispatcher.service';
import type { InboundVia } from '../inbound/inbound-via';
import { ATTENDANCE_EVENT } from '../webhooks/subscription-events';
import { Attendance, AttendanceBuilder } from './attendance';
import { AttendanceState, AttendanceStore } from './attendance.store';

/** `data` of meeting.attendance: the attendance with its revision, in the catalog's order. */
export function attendanceData(attendance: Attendance, revision: number): object {
  const { id, uuid, ...rest } = attendance;
  return { id, uuid, revision, ...rest };
}

/**
 * Computes an occurrence's attendance from every stored participant event, stores it as a new
 * revision when it differs from the last, and publishes it as meeting.attendance
 * (docs/attendance.md). Safe to run twice at once: a revision is stored only over the one it
 * was computed after, and its publication is idempotent per revision.
 */
@Injectable()
export class AttendanceService {
  private readonly logger = new Logger(AttendanceService.name);

  constructor(
    private readonly store: AttendanceStore,
    private readonly dispatcher: DispatcherService,
  ) {}

  /** Brings one occurrence up to date; resolves to the revision it published, if any. */
  async settle(uuid: string): Promise<number | null> {
    const state = await this.store.state(uuid);
    if (!state) return null;
    if (BigInt(state.changes) > BigInt(state.computedChanges)) await this.compute(state);
    return this.publishPending(uuid);
  }

  private async compute(state: AttendanceState): Promise<void> {
    const ended = await this.store.occurrence(state.uuid);
    if (!ended) {
      // Its ended event was deleted (retention) before the wait ended: nothing to count from.
      await this.store.saveUnchanged(state.uuid, state.changes);
      return;
    }
    const builder = new AttendanceBuilder();
    for await (const page of this.store.inputs(state.uuid)) {
      for (const input of page) builder.add(input);
    }
    const attendance = builder.build({ ...ended.occurrence, uuid: state.uuid });
    if (builder.skipped > 0) {
      this.logger.warn(
        `attendance of ${state.uuid}: ${builder.skipped} participant event(s) without a time skipped`,
      );
    }
    const digest = createHash('sha256').update(JSON.stringify(attendance)).digest('hex');
    if (digest === state.digest) {
      await this.store.saveUnchanged(state.uuid, state.changes);
      return;
    }
    const revision = state.revision + 1;
    const end = attendance.end_time ?? null;
    await this.store.save(state, {
      revision,
      digest,
      data: attendanceData(attendance, revision),
      endTime: end === null ? new Date() : new Date(end),
      changes: state.changes,
    });
  }

  /** Publishes the latest revision when it has not been, with its ended event as the source. */
  private async publishPending(uuid: string): Promise<number | null> {
    const state = await this.store.state(uuid);
    if (!state || state.revision <= state.publishedRevision || state.data === null) return null;
    const ended = await this.store.occurrence(uuid);
    await this.dispatcher.publish({
      kind: ATTENDANCE_EVENT,
      data: state.data,
      source: ended && {
        platform: 'zoom',
        event: ended.event,
        event_ts: ended.eventTs ?? 0,
        account_id: state.accountId ?? '',
        tracking_id: ended.trackingId,
        via: ended.via as InboundVia,
      },
      // One event per revision, however often a crash makes this run again.
      idempotencyKey: `attendance:${state.revision}:${uuid}`,
      orderKey: uuid,
    });
    await this.store.published(uuid, state.revision);
    return state.revision;
  }
}

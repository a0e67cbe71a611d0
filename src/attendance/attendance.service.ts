import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { DispatcherService } from '../dispatcher/publish/dispatcher.service';
import type { InboundVia } from '../common/inbound-via';
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
    if (BigInt(state.changes) > BigInt(state.computedChanges)) {
      const computed = await this.compute(state);
      // Published from memory: reading 10,000 participants back would double the peak. A
      // backfilled occurrence's first revision counts as published already
      // (docs/attendance.md#occurrences-that-ended-before-attendance): stored, not sent.
      if (computed) {
        return computed.revision > state.publishedRevision
          ? this.publish(state, computed.revision, computed.data)
          : null;
      }
    }
    if (state.revision <= state.publishedRevision) return null;
    const data = await this.store.latest(uuid);
    return data === null ? null : this.publish(state, state.revision, data);
  }

  /** The new revision and its data, or null when nothing changed (or another run stored one). */
  private async compute(
    state: AttendanceState,
  ): Promise<{ revision: number; data: object } | null> {
    const ended = await this.store.occurrence(state.uuid);
    if (!ended) {
      // Its ended event was deleted (retention) before the wait ended: nothing to count from.
      await this.store.saveUnchanged(state.uuid, state.changes);
      return null;
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
    // One serialisation serves the comparison and the stored text: the digest is of the data
    // at revision 0, so an unchanged attendance has the digest of the last. The data's JSON is
    // its head, the revision and the rest: a 10,000-participant text is written once, not
    // copied to set its revision.
    const revision = state.revision + 1;
    const data = attendanceData(attendance, revision);
    const { id, uuid, ...rest } = attendance;
    const head = `{"id":${JSON.stringify(id)},"uuid":${JSON.stringify(uuid)},"revision":`;
    const tail = `,${JSON.stringify(rest).slice(1)}`;
    const digest = createHash('sha256').update(head).update('0').update(tail).digest('hex');
    if (digest === state.digest) {
      await this.store.saveUnchanged(state.uuid, state.changes);
      return null;
    }
    const end = attendance.end_time;
    const saved = await this.store.save(state, {
      revision,
      digest,
      json: `${head}${revision}${tail}`,
      summary: { ...attendance, participants: undefined },
      endTime: end === null ? new Date() : new Date(end),
      changes: state.changes,
    });
    return saved ? { revision, data } : null;
  }

  /** Publishes `revision` with its ended event as the source; once per revision. */
  private async publish(state: AttendanceState, revision: number, data: object): Promise<number> {
    const uuid = state.uuid;
    const ended = await this.store.occurrence(uuid);
    await this.dispatcher.publish({
      kind: ATTENDANCE_EVENT,
      data,
      source: ended && {
        platform: 'zoom',
        event: ended.event,
        event_ts: ended.eventTs ?? 0,
        account_id: state.accountId ?? '',
        tracking_id: ended.trackingId,
        via: ended.via as InboundVia,
      },
      // One event per revision, however often a crash makes this run again.
      idempotencyKey: `attendance:${revision}:${uuid}`,
      orderKey: uuid,
    });
    await this.store.published(uuid, revision);
    return revision;
  }
}

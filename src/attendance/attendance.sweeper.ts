import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { JOBS, QUEUES, recordJob } from '../queue/queue.constants';
import { Sweeper } from '../queue/sweeper';
import { AttendanceStore } from './attendance.store';

/** Bounds one sweep; more due occurrences are taken over the following sweeps, longest waiting first. */
const BATCH = 100;
/** Sweeps this much more often than the settle time, so an attendance goes out at most ~1/10 late. */
const SWEEPS_PER_SETTLE = 10;
const MIN_INTERVAL_MS = 100;
const MAX_INTERVAL_MS = 10_000;

export interface AttendanceJobData {
  uuid: string;
}

/** The job that brings one occurrence's attendance up to date; one per occurrence at a time. */
export const attendanceJob = (uuid: string) =>
  recordJob<AttendanceJobData>(JOBS.computeAttendance, `attendance:${uuid}`, { uuid });

export const attendanceSweepIntervalMs = (settleMs: number): number =>
  Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, Math.round(settleMs / SWEEPS_PER_SETTLE)));

/**
 * The settle timer (docs/attendance.md): PostgreSQL holds when each occurrence's wait began
 * (attendance.settle_from, set by the statement that stored its last input), so a restart loses
 * no timer. Every worker looks for occurrences whose wait has passed, or whose latest revision
 * is not yet published, and queues their job; Bull holds one job per occurrence.
 */
@Injectable()
export class AttendanceSweeper extends Sweeper {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectQueue(QUEUES.inbound) private readonly queue: Queue<AttendanceJobData>,
    private readonly store: AttendanceStore,
  ) {
    super({
      what: 'meeting attendances',
      why: 'whose settle time has passed',
      intervalMs: attendanceSweepIntervalMs(config.attendance.settleMs),
      level: 'log',
    });
  }

  async sweep(): Promise<number> {
    const due = await this.store.due(this.config.attendance.settleMs, BATCH);
    return this.requeue(
      this.queue,
      due.map((row) => attendanceJob(row.uuid)),
    );
  }
}

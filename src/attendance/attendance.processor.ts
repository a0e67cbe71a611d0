import { Injectable } from '@nestjs/common';
import type { Job } from 'bull';
import { OnJob } from '../queue/on-job.decorator';
import { JOBS, QUEUES } from '../queue/queue.constants';
import { AttendanceService } from './attendance.service';
import type { AttendanceJobData } from './attendance.sweeper';

/** Works the compute-attendance jobs that AttendanceSweeper queues (worker role). */
@Injectable()
export class AttendanceProcessor {
  constructor(private readonly attendance: AttendanceService) {}

  // A large meeting reads tens of thousands of rows: a few at a time per process.
  @OnJob({
    queue: QUEUES.inbound,
    job: JOBS.computeAttendance,
    concurrency: 2,
    whenFinal: 'the attendance sweeper queues it again while it is due',
  })
  async compute(job: Job<AttendanceJobData>): Promise<void> {
    await this.attendance.settle(job.data.uuid);
  }
}

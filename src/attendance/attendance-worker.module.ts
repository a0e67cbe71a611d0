import { Module } from '@nestjs/common';
import { DispatcherModule } from '../dispatcher/publish/dispatcher.module';
import { AttendanceProcessor } from './attendance.processor';
import { AttendanceService } from './attendance.service';
import { AttendanceStore } from './attendance.store';
import { AttendanceSweeper } from './attendance.sweeper';

/** Worker role: the settle timer's sweeps, and the computation and delivery of attendance. */
@Module({
  imports: [DispatcherModule],
  providers: [AttendanceStore, AttendanceService, AttendanceSweeper, AttendanceProcessor],
})
export class AttendanceWorkerModule {}

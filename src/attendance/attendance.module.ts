import { Module } from '@nestjs/common';
import { AttendanceController } from './attendance.controller';
import { AttendanceStore } from './attendance.store';

/** /api/attendance (API role): reads what the worker computed. */
@Module({
  controllers: [AttendanceController],
  providers: [AttendanceStore],
})
export class AttendanceModule {}

import { Module } from '@nestjs/common';
import { AccountsCoreModule } from '../accounts/accounts-core.module';
import { AttendanceController } from './attendance.controller';
import { AttendanceStore } from './attendance.store';

/** /api/attendance (API role): reads what the worker computed. */
@Module({
  imports: [AccountsCoreModule],
  controllers: [AttendanceController],
  providers: [AttendanceStore],
})
export class AttendanceModule {}

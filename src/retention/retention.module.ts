import { Module } from '@nestjs/common';
import { AttendanceStore } from '../attendance/attendance.store';
import { DeliveryRecordModule } from '../delivery-record/delivery-record.module';
import { RetentionService } from './retention.service';
import { PgRetentionStore, RetentionStore } from './retention.store';

/** Worker role: the periodic retention job. */
@Module({
  imports: [DeliveryRecordModule],
  providers: [
    RetentionService,
    AttendanceStore,
    { provide: RetentionStore, useClass: PgRetentionStore },
  ],
})
export class RetentionModule {}

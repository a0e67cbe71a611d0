import { Module } from '@nestjs/common';
import { RetentionService } from './retention.service';
import { PgRetentionStore, RetentionStore } from './retention.store';

/** Worker role: the periodic retention job. */
@Module({
  providers: [RetentionService, { provide: RetentionStore, useClass: PgRetentionStore }],
})
export class RetentionModule {}

import { Module } from '@nestjs/common';
import { ReconciliationController } from './reconciliation.controller';
import { ReconciliationStore } from './reconciliation.store';

/** /api/reconciliations (API role): runs are queued here and run by a worker process. */
@Module({
  controllers: [ReconciliationController],
  providers: [ReconciliationStore],
})
export class ReconciliationModule {}

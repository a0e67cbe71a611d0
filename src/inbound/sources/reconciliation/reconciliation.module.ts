import { TypeOrmModule } from '@nestjs/typeorm';
import { ReconciliationRunEntity } from './reconciliation-run.entity';
import { Module } from '@nestjs/common';
import { AccountsCoreModule } from '../../../accounts/accounts-core.module';
import { ReconciliationController } from './reconciliation.controller';
import { ReconciliationStore } from './reconciliation.store';

/** /api/reconciliations (API role): runs are queued here and run by a worker process. */
@Module({
  imports: [TypeOrmModule.forFeature([ReconciliationRunEntity]), AccountsCoreModule],
  controllers: [ReconciliationController],
  providers: [ReconciliationStore],
})
export class ReconciliationModule {}

import { TypeOrmModule } from '@nestjs/typeorm';
import { ReconciliationRunEntity } from './reconciliation-run.entity';
import { Module } from '@nestjs/common';
import { AccountsCoreModule } from '../../../accounts/accounts-core.module';
import { DispatcherModule } from '../../../dispatcher/publish/dispatcher.module';
import { OperationalEventsService } from '../../../dispatcher/operational-events/operational-events.service';
import {
  OperationalEventStore,
  PgOperationalEventStore,
} from '../../../delivery-record/operational-events.store';
import { ZoomModule } from '../../../zoom/zoom.module';
import { InboundStoreModule } from '../../inbound-store.module';
import { InboundService } from '../../inbound.service';
import { ReconcileRedis } from './reconcile-redis';
import { ReconciliationRunner } from './reconciliation.runner';
import { ReconciliationStore } from './reconciliation.store';
import { RunExecutor } from './run-executor';

/**
 * Worker role: the runner (one per deployment through its lease) and what a run needs: the
 * platform client (the same token cache as passthrough), and the one ingest every source
 * stores through.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([ReconciliationRunEntity]),
    InboundStoreModule,
    DispatcherModule,
    ZoomModule,
    AccountsCoreModule,
  ],
  providers: [
    InboundService,
    ReconcileRedis,
    ReconciliationStore,
    RunExecutor,
    ReconciliationRunner,
    OperationalEventsService,
    { provide: OperationalEventStore, useClass: PgOperationalEventStore },
  ],
})
export class ReconciliationWorkerModule {}

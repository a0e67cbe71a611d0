import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WebhookEntity } from '../webhooks/webhook.entity';
import { DeliveryAttemptEntity } from './delivery-attempt.entity';
import { DeliveryControlStore, PgDeliveryControlStore } from './delivery-control.store';
import { DeliveryLogStore } from './delivery-log.store';
import { DeliveryOrderStore, PgDeliveryOrderStore } from './delivery-order.store';
import { DeliverySweepStore } from './delivery-sweep.store';
import { DeliveryEntity } from './delivery.entity';
import { DeliveryStore, PgDeliveryStore } from './delivery.store';
import { EventLookupStore, PgEventLookupStore } from './event-lookup.store';
import { EventEntity } from './event.entity';
import { EventStore, PgEventStore } from './event.store';
import { OperationalEventStore, PgOperationalEventStore } from './operational-events.store';
import { PgReceiverHealthStore, ReceiverHealthStore } from './receiver-health.store';
import { RecordRetentionStore } from './record-retention.store';

const STORES = [
  { provide: EventStore, useClass: PgEventStore },
  { provide: DeliveryStore, useClass: PgDeliveryStore },
  { provide: DeliveryOrderStore, useClass: PgDeliveryOrderStore },
  { provide: DeliveryControlStore, useClass: PgDeliveryControlStore },
  { provide: OperationalEventStore, useClass: PgOperationalEventStore },
  { provide: ReceiverHealthStore, useClass: PgReceiverHealthStore },
  { provide: EventLookupStore, useClass: PgEventLookupStore },
  DeliverySweepStore,
  RecordRetentionStore,
  DeliveryLogStore,
];

/**
 * The delivery record (docs/architecture.md): events, deliveries and delivery_attempts, and
 * every statement on them, each kept as PostgreSQL runs it in queries/. No other module runs
 * SQL on these tables (record-owner.spec.ts); inbound's ingest statement composes the fan-out
 * insert as a part (fan-out-part.ts). Every role that reads or writes the record imports this.
 */
@Module({
  // WebhookEntity: the deliveries' relation needs its metadata in whichever role imports this.
  imports: [
    TypeOrmModule.forFeature([EventEntity, DeliveryEntity, DeliveryAttemptEntity, WebhookEntity]),
  ],
  providers: STORES,
  exports: [...STORES.map((s) => ('provide' in s ? s.provide : s)), TypeOrmModule],
})
export class DeliveryRecordModule {}

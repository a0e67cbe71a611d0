import { getQueueToken } from '@nestjs/bull';
import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { createBullBoard } from '@bull-board/api';
import { BullAdapter } from '@bull-board/api/bullAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bull';
import { QueueDashboardAuthMiddleware } from './queue-dashboard-auth.middleware';
import { QUEUES } from './queue.constants';

export const QUEUE_DASHBOARD_PATH = 'admin/queues';

/**
 * bull-board for operators at /admin/queues (API role): every queue's waiting, active,
 * delayed, completed and failed jobs, with retry and clean. Removing or retrying a delivery
 * job here never loses or doubles a delivery: PostgreSQL holds its state and the sweeper
 * queues again what is due.
 */
@Module({ providers: [QueueDashboardAuthMiddleware] })
export class QueueDashboardModule implements NestModule {
  constructor(private readonly moduleRef: ModuleRef) {}

  configure(consumer: MiddlewareConsumer): void {
    const adapter = new ExpressAdapter().setBasePath(`/${QUEUE_DASHBOARD_PATH}`);
    createBullBoard({
      queues: Object.values(QUEUES).map(
        (name) =>
          new BullAdapter(this.moduleRef.get<Queue>(getQueueToken(name), { strict: false })),
      ),
      serverAdapter: adapter,
      options: { uiConfig: { boardTitle: 'Meeting Event Bridge' } },
    });
    consumer
      .apply(QueueDashboardAuthMiddleware, adapter.getRouter())
      .forRoutes(QUEUE_DASHBOARD_PATH);
  }
}

import { getQueueToken } from '@nestjs/bull';
import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { createBullBoard } from '@bull-board/api';
import { BullAdapter } from '@bull-board/api/bullAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bull';
import type { Express, NextFunction, Request, Response } from 'express';
import { QueueDashboardAuthMiddleware } from './queue-dashboard-auth.middleware';
import { QUEUES } from './queue.constants';

export const QUEUE_DASHBOARD_PATH = 'admin/queues';

/**
 * The dashboard's buttons change state with the operator's cached Basic credentials, so no
 * other site may frame it (clickjacking). Set before authentication, so 401s carry them too.
 */
function denyFraming(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('content-security-policy', "frame-ancestors 'none'");
  next();
}

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
    const board = adapter.getRouter() as Express;
    // bull-board serves from an Express app of its own, which has its own settings: the
    // app's x-powered-by switch (src/bootstrap.ts) does not reach it.
    board.disable('x-powered-by');
    consumer
      .apply(denyFraming, QueueDashboardAuthMiddleware, board)
      .forRoutes(QUEUE_DASHBOARD_PATH);
  }
}

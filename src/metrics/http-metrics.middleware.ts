import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { MetricsService } from './metrics.service';

/** Counts every response by its route pattern (never the raw path, which would explode labels). */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: MetricsService) {}

  use(req: Request, res: Response, next: NextFunction): void {
    res.on('finish', () => {
      const path = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : '';
      // Unknown URLs only ever match the catch-all middleware route: one label for all of them.
      const route = path && !path.includes('*') ? path : 'unmatched';
      this.metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  }
}

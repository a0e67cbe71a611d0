import { InjectQueue } from '@nestjs/bull';
import { Controller, Get, HttpStatus, Inject, Logger } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  HealthCheckService,
  HealthIndicatorFunction,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import type { Queue } from 'bull';
import { ApiError } from '../common/api-error';
import { ApiErrorResponse } from '../common/error-response';
import { withTimeout } from '../common/with-timeout';
import { DestinationSenders } from '../destinations/destination-senders';
import type { BrokerStatus } from '../destinations/destination-provider';
import { QUEUES } from '../queue/queue.constants';
import { QueueProcessors } from '../queue/queue-processors';
import { pingRedis } from '../redis/redis-connection';
import { SocketState, SocketStateName } from '../inbound/sources/websocket/socket-state';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';

const CHECK_TIMEOUT_MS = 1500;

const logger = new Logger('Health');

@ApiTags('health')
@Controller('health')
export class HealthController {
  /** The last readiness answered: 'ready', or why not. Logged when it changes, not per probe. */
  private lastState = 'ready';
  /** What was logged of lastState, its details with it. */
  private lastSaid = 'ready';

  constructor(
    private readonly health: HealthCheckService,
    private readonly indicator: HealthIndicatorService,
    private readonly db: TypeOrmHealthIndicator,
    @InjectQueue(QUEUES.deliveries) private readonly queue: Queue,
    private readonly processors: QueueProcessors,
    private readonly destinations: DestinationSenders,
    private readonly socket: SocketState,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('live')
  @ApiOperation({
    summary: 'Liveness: the process is up',
    description:
      'Answers 200 while the process runs, whatever its dependencies: restart it if not.',
  })
  @ApiOkResponse({ schema: { example: { status: 'ok' } } })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    summary: 'Readiness: PostgreSQL and Redis answer, and no queue processor has stopped',
    description:
      'With DESTINATION_BROKERS set, `brokers` shows how each connection stands in this ' +
      'process (a worker connects as it starts; an API-only process never does), with a ' +
      'general reason while it is not connected (`connection refused`): never where a broker ' +
      'is, which the log shows. A broker that is down never makes the process unready: its ' +
      'deliveries fail and are retried. ' +
      "With ZOOM_WS_SUBSCRIPTION_ID set, `websocket.state` is this process's view of the " +
      "platform's event socket (`connected` or `connecting` on the process holding it, " +
      '`standby` on the others, `off` in an API-only process); it never makes the process ' +
      'unready (docs/inbound-sources.md).',
  })
  @ApiOkResponse({
    schema: {
      example: {
        status: 'ok',
        checks: { database: 'up', redis: 'up' },
        brokers: { bus: { type: 'rabbitmq', state: 'connected' } },
        websocket: { state: 'connected' },
      },
    },
  })
  @ApiErrorResponse(503, {
    description: 'details name what is down',
    example: {
      message: 'Not ready: redis unreachable',
      details: [{ field: 'redis', message: 'redis connection is reconnecting' }],
    },
  })
  async ready(): Promise<{
    status: 'ok';
    checks: Record<string, 'up'>;
    brokers?: Record<string, BrokerStatus>;
    websocket?: { state: SocketStateName };
  }> {
    const indicators: HealthIndicatorFunction[] = [
      () => this.db.pingCheck('database', { timeout: CHECK_TIMEOUT_MS }),
      () => this.redis('redis'),
    ];
    // Named only once one has stopped, so a healthy process answers as it always did.
    if (this.processors.failures().length > 0) indicators.push(() => this.stoppedProcessors());
    const result = await this.health
      .check(indicators)
      .catch((error: { response?: { error?: Record<string, { message?: string }> } }) => {
        const failed = Object.entries(error.response?.error ?? {});
        const unreachable = failed.map(([name]) => name).filter((name) => name !== 'processors');
        const reasons = [
          ...(unreachable.length > 0 ? [`${unreachable.join(', ')} unreachable`] : []),
          ...(failed.some(([name]) => name === 'processors') ? ['queue processors stopped'] : []),
        ];
        const details = failed.map(([field, info]) => ({
          field,
          message: info.message ?? `${field} is down`,
        }));
        const message = `Not ready: ${reasons.join('; ') || 'unknown'}`;
        // A change is in what is down, not in how a client says it (connecting, reconnecting).
        this.changedTo(
          message,
          `${message} (${details.map((d) => `${d.field}: ${d.message}`).join('; ')})`,
        );
        // Logged above once per change; a probe every few seconds must not log a stack each time.
        throw new ApiError(HttpStatus.SERVICE_UNAVAILABLE, message, { details, quiet: true });
      });
    this.changedTo('ready');
    const checks = Object.fromEntries(
      Object.keys(result.info ?? {}).map((k) => [k, 'up' as const]),
    );
    const brokers = this.destinations.statuses();
    return {
      status: 'ok',
      checks,
      ...(Object.keys(brokers).length > 0 ? { brokers } : {}),
      ...(this.config.zoom.ws.subscriptionId !== null
        ? { websocket: { state: this.socket.current } }
        : {}),
    };
  }

  private changedTo(state: string, said = state): void {
    if (state === this.lastState) return;
    if (state === 'ready') logger.log(`Ready again (was: ${this.lastSaid})`);
    else logger.warn(said);
    this.lastState = state;
    this.lastSaid = said;
  }

  /** A worker whose processor stopped takes no jobs: it must not look ready. */
  private stoppedProcessors() {
    return this.indicator
      .check('processors')
      .down({ message: this.processors.failures().join('; ') });
  }

  private async redis(key: string) {
    const check = this.indicator.check(key);
    const client = this.queue.client;
    if (client.status !== 'ready')
      return check.down({ message: `redis connection is ${client.status}` });
    try {
      await withTimeout(pingRedis(client), CHECK_TIMEOUT_MS, 'redis ping timed out');
      return check.up();
    } catch (error) {
      return check.down({ message: (error as Error).message });
    }
  }
}

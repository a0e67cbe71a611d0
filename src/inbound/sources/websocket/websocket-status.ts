import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../../../config/config.module';
import { AppConfig } from '../../../config/config.types';
import type { SourceStatusReader } from '../inbound-source';
import { WebsocketSourceStatus } from './dto/websocket-status.response';
import { SocketLease } from './socket-lease';
import { SocketRecord, SocketRecordStore } from './socket-record.store';
import { SocketStateName } from './socket-state';
import { websocketConfigured } from './websocket-source.service';

/** How many gaps the status shows. */
export const STATUS_GAPS = 20;

const iso = (at: Date | null): string | null => (at === null ? null : at.toISOString());

/**
 * The socket's part of the inbound status, as any process sees it: its record in PostgreSQL
 * (written by its holder) checked against the lease in Redis, so a holder that died is not
 * shown `connected` for the seconds before another takes over.
 */
@Injectable()
export class WebsocketStatus implements SourceStatusReader<WebsocketSourceStatus> {
  private readonly logger = new Logger(WebsocketStatus.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly record: SocketRecordStore,
    private readonly lease: SocketLease,
  ) {}

  async read(): Promise<WebsocketSourceStatus> {
    const configured = websocketConfigured(this.config);
    const [record, gaps, holder] = await Promise.all([
      this.record.read(),
      this.record.latestGaps(STATUS_GAPS),
      configured ? this.holder() : Promise.resolve(null),
    ]);
    const state = configured ? this.stateOf(record, holder) : 'off';
    return {
      configured,
      state,
      connected_since: state === 'connected' ? iso(record?.connectedSince ?? null) : null,
      last_frame_at: iso(record?.lastFrameAt ?? null),
      reconnects: record?.reconnects ?? 0,
      gaps: gaps.map((g) => ({
        from: g.from.toISOString(),
        until: iso(g.until),
        reconciliation_id: g.reconciliationId,
      })),
    };
  }

  /** The lease's holder; undefined when Redis cannot say (the record alone is shown then). */
  private async holder(): Promise<string | null | undefined> {
    try {
      return await this.lease.currentHolder();
    } catch (error) {
      this.logger.warn(`cannot read the socket lease: ${(error as Error).message}`);
      return undefined;
    }
  }

  private stateOf(record: SocketRecord | null, holder: string | null | undefined): SocketStateName {
    if (holder === null) return 'standby';
    if (record === null) return 'connecting';
    if (holder !== undefined && record.holder !== holder) return 'connecting';
    return record.state;
  }
}

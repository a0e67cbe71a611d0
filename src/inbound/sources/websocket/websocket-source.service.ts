import { VIA } from '../../../common/inbound-via';
import {
  BeforeApplicationShutdown,
  HttpStatus,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { ApiError } from '../../../common/api-error';
import { timerDelayMs } from '../../../common/timer-delay';
import { APP_CONFIG } from '../../../config/config.module';
import { AppConfig } from '../../../config/config.types';
import { MetricsService } from '../../../metrics/metrics.service';
import { Tracing } from '../../../telemetry/tracing';
import {
  ZoomToken,
  ZoomTokenProvider,
  missingZoomCredentials,
} from '../../../zoom/zoom-token.provider';
import { InboundService } from '../../inbound.service';
import { PlatformSocket, SocketEnd } from './platform-socket';
import { reconnectDelayMs } from './reconnect-backoff';
import { RENEW_EVERY_MS, SocketLease, TAKE_EVERY_MS } from './socket-lease';
import { SocketRecordStore } from './socket-record.store';
import { SocketState } from './socket-state';
import { unreadableFrameEnvelope } from './unreadable-frame';

/** The last frame's time is written at most this often (a gap after a crash starts there). */
const FRAME_WRITE_EVERY_MS = 2_000;
/**
 * The fresh token's socket opens this long after the token cache stops handing out the held
 * token (its `renewAt`, normally a minute before its expiry, never sooner than a minute after
 * it came): the cache then fetches a new one, and the held token still has most of a minute
 * left should the new socket need retries.
 */
const TOKEN_SWAP_AFTER_RENEWAL_MS = 1_000;
/** An event the database could not take is tried again after this, doubling, up to the cap. */
const INGEST_RETRY_MS = 1_000;
const INGEST_RETRY_MAX_MS = 30_000;
const ORIGIN = { via: VIA.websocket, trackingId: null };

/** True when the WebSocket source is set up: a subscription and the server-to-server credentials. */
export function websocketConfigured(config: AppConfig): boolean {
  return config.zoom.ws.subscriptionId !== null && missingZoomCredentials(config).length === 0;
}

/**
 * The platform's events over its WebSocket (docs/inbound-sources.md), in processes of role
 * `all` or `worker`: one of them holds the lease (SocketLease) and with it the one socket,
 * the others stand by and take over when the lease comes free. The holder feeds every event
 * to the same ingest as a verified webhook, replaces a socket that dies (backoff 1 s → 60 s),
 * swaps to a fresh token before the held one runs out (the new socket opens before the old
 * closes: the platform closes the older itself), and records gaps in PostgreSQL.
 */
@Injectable()
export class WebsocketSource implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebsocketSource.name);
  private current: PlatformSocket | null = null;
  /** The socket with a fresh token that will replace `current` once acknowledged. */
  private next: PlatformSocket | null = null;
  private loop: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private swap: NodeJS.Timeout | undefined;
  private failures = 0;
  /** The latest frame of any socket this process held, and the latest written to PostgreSQL. */
  private lastFrameAt: Date | null = null;
  private lastFrameWritten = 0;
  /** The next socket replaces another (the count and metric of reconnects). */
  private replacing = false;
  private stopped = false;
  private readonly ingesting = new Set<Promise<void>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly lease: SocketLease,
    private readonly record: SocketRecordStore,
    private readonly state: SocketState,
    private readonly tokens: ZoomTokenProvider,
    private readonly inbound: InboundService,
    private readonly metrics: MetricsService,
    @Optional() private readonly tracing: Tracing = Tracing.off,
  ) {}

  onApplicationBootstrap(): void {
    if (!websocketConfigured(this.config)) {
      if (this.config.zoom.ws.subscriptionId !== null) {
        this.logger.warn(
          'ZOOM_WS_SUBSCRIPTION_ID is set but the server-to-server credentials are not ' +
            `(${missingZoomCredentials(this.config).join(', ')}): the platform socket stays off`,
        );
      }
      return;
    }
    this.state.current = 'standby';
    this.metrics.platformWsConnected.set(0);
    this.lease.onLost((reason) => this.letGo(reason));
    this.tick(0);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.loop);
    if (this.lease.holding || this.current !== null) await this.letGo('the process is stopping');
    await this.lease.release();
    await Promise.allSettled([...this.ingesting]);
  }

  /** One turn of the lease loop: renew while holding, else try to take it. */
  private tick(delayMs: number): void {
    if (this.stopped) return;
    this.loop = setTimeout(() => {
      void this.turn().finally(() =>
        this.tick(this.lease.holding ? RENEW_EVERY_MS : TAKE_EVERY_MS),
      );
    }, delayMs);
  }

  private async turn(): Promise<void> {
    if (this.lease.holding) {
      await this.lease.renew();
      return;
    }
    const taken = await this.lease.take().catch((error: Error) => {
      this.logger.debug(`could not ask for the socket lease: ${error.message}`);
      return false;
    });
    if (!taken || this.stopped) return;
    this.logger.log('holds the platform socket lease: connecting');
    const previous = await this.record.read().catch(() => null);
    this.replacing = previous?.lastFrameAt != null;
    this.failures = 0;
    // Its former holder may have died without a word: the gap runs from its last frame.
    await this.record
      .openGapFromLastFrame()
      .catch((error: Error) => this.logger.error(`could not record a gap: ${error.message}`));
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped || !this.lease.holding) return;
    this.state.current = 'connecting';
    if (this.replacing) this.metrics.platformWsReconnects.inc({ cause: 'replaced' });
    await this.record
      .connecting(this.lease.holder, this.replacing)
      .catch((error: Error) =>
        this.logger.warn(`could not record the socket state: ${error.message}`),
      );
    this.replacing = true;
    let token: ZoomToken;
    try {
      token = await this.tokens.get();
    } catch (error) {
      this.logger.warn(`no platform token for the socket: ${(error as Error).message}`);
      this.retryLater();
      return;
    }
    if (this.stopped || !this.lease.holding) return;
    this.current = this.open(token);
  }

  private open(token: ZoomToken): PlatformSocket {
    const url = new URL(this.config.zoom.ws.url);
    url.searchParams.set('subscriptionId', this.config.zoom.ws.subscriptionId as string);
    url.searchParams.set('access_token', token.accessToken);
    const socket: PlatformSocket = new PlatformSocket(
      url.toString(),
      token.accessToken,
      this.config.zoom.ws.heartbeatMs,
      {
        acknowledged: (at) => void this.acknowledged(socket, token, at),
        frame: (at) => this.frameAt(at),
        event: (content, frame) => this.keep(content, frame),
        other: (what) => this.logger.debug(`platform socket frame ignored: ${what}`),
        fault: (error, frame) => this.fault(error, frame),
        ended: (end) => this.ended(socket, token, end),
      },
    );
    return socket;
  }

  private async acknowledged(socket: PlatformSocket, token: ZoomToken, at: Date): Promise<void> {
    if (socket === this.next) {
      const old = this.current;
      this.current = socket;
      this.next = null;
      old?.close('a socket with a fresh token took over');
    }
    if (socket !== this.current) return;
    // The backoff is reset only once the socket has lived a heartbeat (ended): one the
    // platform acknowledges and closes at once must not be reopened every second.
    this.state.current = 'connected';
    this.metrics.platformWsConnected.set(1);
    this.lastFrameAt = at;
    this.lastFrameWritten = at.getTime();
    this.scheduleSwap(token);
    this.logger.log('platform socket connected');
    try {
      await this.record.connected(this.lease.holder, at);
      await this.record.endGap(at);
    } catch (error) {
      this.logger.error(`could not record the socket's connection: ${(error as Error).message}`);
    }
  }

  private ended(socket: PlatformSocket, token: ZoomToken, end: SocketEnd): void {
    if (end.kind === 'refused') this.tokens.invalidate(token);
    if (socket === this.next) {
      this.next = null;
      this.logger.warn(`the fresh token's socket failed (${end.kind}: ${end.detail}); retrying`);
      this.swap = setTimeout(() => this.openNext(), reconnectDelayMs(++this.failures));
      return;
    }
    if (socket !== this.current) return;
    this.current = null;
    this.metrics.platformWsConnected.set(0);
    // The platform closes the older socket once the fresh token's opens: that one goes on.
    if (this.next !== null) {
      this.current = this.next;
      this.next = null;
      return;
    }
    clearTimeout(this.swap);
    if (end.kind === 'stopped' || this.stopped) return;
    if (end.kind === 'too_large') this.metrics.platformWsFramesRefused.inc({ reason: 'too_large' });
    const acknowledgedAt = socket.acknowledgedAt;
    if (acknowledgedAt !== null && Date.now() - acknowledgedAt > this.config.zoom.ws.heartbeatMs) {
      this.failures = 0;
    }
    this.logger.warn(`platform socket ended (${end.kind}: ${end.detail}); reconnecting`);
    this.metrics.platformWsReconnects.inc({ cause: end.kind });
    void this.openGap();
    this.retryLater();
  }

  private retryLater(): void {
    if (this.stopped || !this.lease.holding) return;
    this.state.current = 'connecting';
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.connect(), reconnectDelayMs(++this.failures));
  }

  /** Opens the fresh token's socket a little before the held token would be renewed. */
  private scheduleSwap(token: ZoomToken): void {
    clearTimeout(this.swap);
    const due = token.renewAt + TOKEN_SWAP_AFTER_RENEWAL_MS - Date.now();
    this.swap = setTimeout(() => this.openNext(), timerDelayMs(due));
  }

  private openNext(): void {
    if (this.stopped || !this.lease.holding || this.current === null || this.next !== null) return;
    const held = this.current;
    this.tokens
      .get()
      .then((token) => {
        if (this.current === held && this.next === null && this.lease.holding) {
          this.next = this.open(token);
          this.metrics.platformWsReconnects.inc({ cause: 'token' });
        }
      })
      .catch((error: Error) => {
        this.logger.warn(`no fresh platform token for the socket: ${error.message}`);
        this.swap = setTimeout(() => this.openNext(), reconnectDelayMs(++this.failures));
      });
  }

  /** Lease lost or the process stopping: the sockets close at once, a gap opens. */
  private async letGo(reason: string): Promise<void> {
    clearTimeout(this.retry);
    clearTimeout(this.swap);
    const had = this.current !== null || this.next !== null;
    this.next?.close(reason);
    this.next = null;
    this.current?.close(reason);
    this.current = null;
    this.metrics.platformWsConnected.set(0);
    this.state.current = this.stopped ? 'off' : 'standby';
    if (had) this.logger.warn(`platform socket closed: ${reason}`);
    await this.openGap();
  }

  private async openGap(): Promise<void> {
    const from = this.lastFrameAt;
    if (from === null) return;
    await this.record
      .frameSeen(from)
      .then(() => this.record.openGap(from, this.lease.holder))
      .then((outcome) => {
        if (outcome === 'held') {
          this.logger.warn('no gap recorded: another process holds an acknowledged socket');
        }
      })
      .catch((error: Error) => this.logger.error(`could not record a gap: ${error.message}`));
  }

  private frameAt(at: Date): void {
    this.lastFrameAt = at;
    if (at.getTime() - this.lastFrameWritten < FRAME_WRITE_EVERY_MS) return;
    this.lastFrameWritten = at.getTime();
    this.record
      .frameSeen(at)
      .catch((error: Error) =>
        this.logger.warn(`could not record the last frame: ${error.message}`),
      );
  }

  /** A frame the socket failed to read: logged and counted as the bug it is, and kept. */
  private fault(error: unknown, frame: string | Buffer): void {
    this.reportFault('a platform socket frame could not be read', error);
    this.keep(null, frame);
  }

  private reportFault(what: string, error: unknown): void {
    this.metrics.platformWsFrameErrors.inc();
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    this.logger.error(`${what} (${detail}); kept as it came`);
  }

  /** Every event read is stored: until the database takes it, it is tried again. */
  private keep(content: string | null, frame: string | Buffer): void {
    const done = this.store(content, frame).finally(() => this.ingesting.delete(done));
    this.ingesting.add(done);
  }

  private async store(content: string | null, frame: string | Buffer): Promise<void> {
    for (let wait = INGEST_RETRY_MS; ; wait = Math.min(2 * wait, INGEST_RETRY_MAX_MS)) {
      const span = this.tracing.root('zoom.websocket.message', { 'bridge.via': VIA.websocket });
      try {
        await this.ingestOne(content, frame, span);
        return;
      } catch (error) {
        this.tracing.failed(span, error);
        if (this.stopped) {
          // Shutdown cannot wait for a database that is gone; reconciliation covers the rest.
          this.logger.error(
            `an event from the platform socket could not be stored before shutdown: ${(error as Error).message}`,
          );
          return;
        }
        this.logger.error(
          `an event from the platform socket could not be stored (${(error as Error).message}); ` +
            `trying again in ${wait} ms`,
        );
        await new Promise((resolve) => setTimeout(resolve, wait));
      } finally {
        span?.end();
      }
    }
  }

  private async ingestOne(
    content: string | null,
    frame: string | Buffer,
    span: ReturnType<Tracing['root']>,
  ): Promise<void> {
    if (content !== null) {
      try {
        await this.inbound.ingest(Buffer.from(content, 'utf8'), ORIGIN, span);
        return;
      } catch (error) {
        // Only the database being out of reach is worth trying again; anything else (a
        // refusal, or a bug reading the event) would fail the same way every time.
        const unavailable =
          error instanceof ApiError && error.getStatus() === HttpStatus.SERVICE_UNAVAILABLE;
        if (unavailable) throw error;
        if (!(error instanceof ApiError)) {
          this.reportFault('an event from the platform socket could not be ingested', error);
        }
      }
    }
    // Not an event the ingest can read: kept whole, as an unmappable event of its own.
    const kept = unreadableFrameEnvelope(content ?? frame, content === null ? 'frame' : 'content');
    this.logger.warn(`a platform socket frame is not an event; kept as ${kept.event}`);
    await this.inbound.ingest(kept.body, ORIGIN, span);
  }
}

import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../../../config/config.module';
import { AppConfig } from '../../../config/config.types';
import { ZoomClient } from '../../../zoom/zoom.client';
import { dedupeKey } from '../../dedupe-key';
import { InboundService } from '../../inbound.service';
import {
  PlatformReports,
  PlatformUnreachable,
  ReportMissing,
  SourceName,
  SourceRefused,
} from './platform-reports';
import { ReconcileRedis } from './reconcile-redis';
import { Run, RunProgress, RunStatus, ReconciliationStore } from './reconciliation.store';
import {
  Family,
  ReconciledEvent,
  Window,
  meetingEvents,
  participantEvents,
  recordingEvent,
  timeOf,
} from './report-events';

/** How often a run's counters are written while it goes on. */
const PROGRESS_EVERY_MS = 2000;
const DAY_MS = 86_400_000;

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * How many meetings a run reads at once: enough to keep RECONCILE_MAX_RPS busy while each
 * request waits on the platform (a few hundred ms each), few enough that a run holds little.
 */
export const meetingsInFlight = (maxRps: number): number =>
  Math.min(16, Math.max(1, Math.ceil(maxRps / 2)));

/**
 * Runs tasks with at most `size` under way; `add` waits for room. The first failure is kept
 * and thrown by the next `add` or by `drain`, once every task under way has ended.
 */
export class MeetingPool {
  private readonly running = new Set<Promise<void>>();
  private failure: { error: unknown } | null = null;

  constructor(private readonly size: number) {}

  async add(task: () => Promise<void>): Promise<void> {
    if (this.failure) await this.drain();
    const running: Promise<void> = task()
      .catch((error: unknown) => {
        this.failure ??= { error };
      })
      .finally(() => this.running.delete(running));
    this.running.add(running);
    while (this.running.size >= this.size) await Promise.race(this.running);
    if (this.failure) await this.drain();
  }

  /** Waits for every task under way; throws the first failure. */
  async drain(): Promise<void> {
    await this.settle();
    if (this.failure) throw this.failure.error;
  }

  /** Waits for every task under way, whatever they end in. */
  async settle(): Promise<void> {
    while (this.running.size > 0) await Promise.race(this.running);
  }
}

/** Counters and errors of one run, kept in memory and written as it goes. */
class Tally implements RunProgress {
  checked = { meetings: 0, webinars: 0, participants: 0, recordings: 0 };
  missing: Record<string, number>;
  created: Record<string, number>;
  errors: RunProgress['errors'];
  readonly refused = new Set<SourceName>();

  constructor(run: Run) {
    // A resumed run keeps what it found and created before its process died (what it created
    // is then found stored); a dry run created nothing, so it counts again from nothing.
    this.missing = run.dryRun ? {} : { ...run.missing };
    this.created = { ...run.created };
    this.errors = [...run.errors];
    for (const e of run.errors) this.refused.add(e.source as SourceName);
  }

  add(counter: Record<string, number>, event: string): void {
    counter[event] = (counter[event] ?? 0) + 1;
  }

  refuse(error: SourceRefused): void {
    if (this.refused.has(error.source)) return;
    this.refused.add(error.source);
    this.errors.push({ source: error.source, status: error.status, message: error.message });
  }
}

/**
 * One run over its window (docs/reconciliation.md): lists the meetings and webinars the
 * platform's dashboard knows (past and live), their participants, and the recordings of those
 * that had one; turns each occurrence in the window into the platform event its webhook would
 * have been; stores those not stored yet through the one ingest (via `reconciliation`), whose
 * de-duplication keeps an occurrence received before or after from being delivered twice.
 * A dry run only counts them.
 */
@Injectable()
export class RunExecutor {
  private readonly logger = new Logger(RunExecutor.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly zoom: ZoomClient,
    private readonly budget: ReconcileRedis,
    private readonly store: ReconciliationStore,
    private readonly inbound: InboundService,
  ) {}

  async execute(run: Run, signal: AbortSignal): Promise<{ status: RunStatus; tally: RunProgress }> {
    const reports = new PlatformReports(
      this.zoom,
      this.budget,
      this.config.reconcile.maxRps,
      signal,
    );
    const tally = new Tally(run);
    const window: Window = { since: run.since.getTime(), until: run.until.getTime() };
    let written = Date.now();
    const flush = async (force = false) => {
      if (!force && Date.now() - written < PROGRESS_EVERY_MS) return;
      written = Date.now();
      await this.store.progress(run.id, tally);
    };
    const accountId = this.config.zoom.accountId ?? '';
    let status: RunStatus = 'succeeded';
    try {
      for (const family of ['meeting', 'webinar'] as const) {
        await this.family(family, run, window, accountId, reports, tally, flush);
      }
      if (tally.errors.length > 0) status = 'partial';
    } catch (error) {
      if (!(error instanceof PlatformUnreachable)) throw error;
      tally.errors.push({ source: error.source, status: error.status, message: error.message });
      status = 'failed';
    }
    this.logger.log(
      `reconciliation ${run.id} ${status}: ${reports.requests} platform requests, checked ` +
        `${JSON.stringify(tally.checked)}, created ${JSON.stringify(tally.created)}`,
    );
    return { status, tally };
  }

  private async family(
    family: Family,
    run: Run,
    window: Window,
    accountId: string,
    reports: PlatformReports,
    tally: Tally,
    flush: (force?: boolean) => Promise<void>,
  ): Promise<void> {
    const list: SourceName = family === 'meeting' ? 'meetings' : 'webinars';
    if (tally.refused.has(list)) return;
    // Dates, not times: a meeting that started the day before the window may end in it.
    const query = {
      from: day(window.since - DAY_MS),
      to: day(window.until - 1),
    };
    const seen = new Set<string>();
    // Meetings are read side by side, so that the platform's latency does not leave the
    // request budget idle: the budget alone decides the rate (docs/reconciliation.md).
    const pool = new MeetingPool(meetingsInFlight(this.config.reconcile.maxRps));
    try {
      for (const type of ['past', 'live'] as const) {
        for await (const page of reports.rows(list, list, { type, ...query })) {
          for (const meeting of page) {
            const uuid = typeof meeting.uuid === 'string' ? meeting.uuid : null;
            if (uuid === null || seen.has(uuid)) continue;
            const start = timeOf(meeting.start_time);
            const end = timeOf(meeting.end_time);
            // Outside the window altogether: nothing of it can be in the window.
            if ((start !== null && start >= window.until) || (end !== null && end < window.since))
              continue;
            seen.add(uuid);
            tally.checked[list]++;
            await pool.add(async () => {
              const events = meetingEvents(family, meeting, accountId, window);
              events.push(
                ...(await this.participants(
                  family,
                  type,
                  meeting,
                  uuid,
                  window,
                  accountId,
                  reports,
                  tally,
                )),
              );
              if (meeting.has_recording === true && type === 'past') {
                events.push(...(await this.recording(uuid, accountId, reports, tally)));
              }
              await this.reconcile(run, events, tally);
              await flush();
            });
          }
        }
      }
      await pool.drain();
    } catch (error) {
      // Whatever stopped the listing, the meetings under way end first (each one's error is
      // the pool's to report), so nothing runs on after the run is recorded.
      await pool.settle();
      if (!(error instanceof SourceRefused)) throw error;
      tally.refuse(error);
    }
    await flush(true);
  }

  private async participants(
    family: Family,
    type: 'past' | 'live',
    meeting: Record<string, unknown>,
    uuid: string,
    window: Window,
    accountId: string,
    reports: PlatformReports,
    tally: Tally,
  ): Promise<ReconciledEvent[]> {
    const source: SourceName =
      family === 'meeting' ? 'meeting_participants' : 'webinar_participants';
    if (tally.refused.has(source)) return [];
    const params: Record<string, string> =
      family === 'meeting' ? { meetingId: uuid } : { webinarId: uuid };
    const events: ReconciledEvent[] = [];
    try {
      for await (const page of reports.rows(source, 'participants', { type }, params)) {
        for (const row of page) {
          tally.checked.participants++;
          events.push(...participantEvents(family, meeting, row, accountId, window));
        }
      }
    } catch (error) {
      if (error instanceof ReportMissing) return events;
      if (!(error instanceof SourceRefused)) throw error;
      tally.refuse(error);
    }
    return events;
  }

  private async recording(
    uuid: string,
    accountId: string,
    reports: PlatformReports,
    tally: Tally,
  ): Promise<ReconciledEvent[]> {
    if (tally.refused.has('recordings')) return [];
    try {
      const recording = await reports.get('recordings', { meetingId: uuid });
      tally.checked.recordings++;
      const event = recordingEvent(recording, accountId);
      return event ? [event] : [];
    } catch (error) {
      if (error instanceof ReportMissing) return [];
      if (!(error instanceof SourceRefused)) throw error;
      tally.refuse(error);
      return [];
    }
  }

  /** Counts what is not stored yet; outside a dry run, stores it through the ingest. */
  private async reconcile(run: Run, events: ReconciledEvent[], tally: Tally): Promise<void> {
    const keyed = events.map((event) => ({ event, key: dedupeKey(event) }));
    const stored = await this.store.storedKeys(keyed.map((k) => k.key));
    const missing = keyed.filter(({ key }) => !stored.has(key)).map(({ event }) => event);
    for (const event of missing) tally.add(tally.missing, event.event);
    if (run.dryRun) return;
    // Together: the ingest stores concurrent events in one statement.
    const acks = await Promise.all(
      missing.map((event) =>
        this.inbound.ingest(Buffer.from(JSON.stringify(event)), {
          via: 'reconciliation',
          trackingId: null,
        }),
      ),
    );
    // A webhook that came in meanwhile was first: it is the one delivered.
    acks.forEach(
      (ack, i) => ack.status === 'accepted' && tally.add(tally.created, missing[i].event),
    );
  }
}

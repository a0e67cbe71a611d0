import { VIA } from '../../../common/inbound-via';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AccountTokens } from '../../../accounts/account-tokens.service';
import { APP_CONFIG } from '../../../config/config.module';
import { AppConfig } from '../../../config/config.types';
import { ZoomClient } from '../../../zoom/zoom.client';
import { dedupeKey, participantWho } from '../../dedupe-key';
import { InboundService } from '../../inbound.service';
import {
  PlatformReports,
  PlatformUnreachable,
  ReportsAccount,
  SourceName,
  SourceRefused,
  SourceUntrusted,
} from './platform-reports';
import { ReconcileRedis } from './reconcile-redis';
import {
  Run,
  RunProgress,
  RunStatus,
  ReconciliationStore,
  runAccountKey,
} from './reconciliation.store';
import {
  Family,
  ReconciledEvent,
  Window,
  meetingEvents,
  participantEvents,
  recordingEvent,
  rowMark,
  timeOf,
} from './report-events';

/** How often a run's counters are written while it goes on. */
const PROGRESS_EVERY_MS = 2000;
const DAY_MS = 86_400_000;

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Most events of a run being stored at once, across all its meetings: enough for the ingest to
 * gather them into full statements (its own bound is 6 statements of up to 100 rows,
 * src/inbound/inbound-event.store.ts), few enough that a page of 600 events, or 40,000, never
 * holds more than this many promises, jobs and connections (docs/reconciliation.md#bounds).
 */
export const INGESTS_IN_FLIGHT = 64;
/** Errors a run lists; more are counted in the last one (docs/reconciliation.md). */
export const MAX_RUN_ERRORS = 20;
/** Longest message of one error (the platform may send any). */
const MAX_MESSAGE = 500;

/** The entry a run's interruption leaves in its errors (ReconciliationStore.interrupted). */
export const isInterruption = (e: { source: string; message: string }): boolean =>
  e.source === 'run' && e.message.startsWith('interrupted: ');

/** An event with the identity key it is checked and stored under. */
interface Keyed {
  event: ReconciledEvent;
  key: string;
}

/** At most `size` tasks under way; the others wait their turn. */
export class Gate {
  private readonly waiting: (() => void)[] = [];

  constructor(private free: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    while (this.free === 0) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.free--;
    try {
      return await task();
    } finally {
      this.free++;
      this.waiting.shift()?.();
    }
  }
}

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
    // Sources the credentials were refused (a 4xx other than 404); not a meeting's 404, nor
    // what a listing or the run itself could not trust (no status).
    for (const e of run.errors)
      if (e.status !== null && e.status !== 404) this.refused.add(e.source as SourceName);
  }

  add(counter: Record<string, number>, event: string): void {
    counter[event] = (counter[event] ?? 0) + 1;
  }

  refuse(error: SourceRefused): void {
    if (this.refused.has(error.source)) return;
    this.refused.add(error.source);
    this.note(error);
  }

  /**
   * Records an error once (the same source, status and message, say a 404 of many meetings, is
   * one entry); past MAX_RUN_ERRORS, the last entry counts the rest.
   */
  note(error: { source: string; status: number | null; message: string }): void {
    const { source, status } = error;
    // The platform's message is the platform's: kept short whatever it sent.
    const message =
      error.message.length > MAX_MESSAGE
        ? `${error.message.slice(0, MAX_MESSAGE)}…`
        : error.message;
    if (
      this.errors.some((e) => e.source === source && e.status === status && e.message === message)
    )
      return;
    if (this.errors.length < MAX_RUN_ERRORS - 1) {
      this.errors.push({ source, status, message });
      return;
    }
    const more = this.errors[MAX_RUN_ERRORS - 1];
    const n = more ? Number(/^(\d+) more/.exec(more.message)?.[1] ?? 0) + 1 : 1;
    this.errors[MAX_RUN_ERRORS - 1] = {
      source: 'run',
      status: null,
      message: `${n} more errors not listed, the last: ${source} ${status ?? ''} ${message}`,
    };
  }

  /** Whether the platform's answers left something unread (the run ends `partial`). */
  incomplete(): boolean {
    return this.errors.some((e) => !isInterruption(e));
  }
}

/**
 * One run over its window (docs/reconciliation.md): lists the meetings and webinars the
 * platform's dashboard knows (past and live), their participants, and the recordings of those
 * that had one; turns each occurrence in the window into the platform event its webhook would
 * have been; stores those not stored yet through the one ingest (via `reconciliation`), whose
 * de-duplication keeps an occurrence received before or after from being delivered twice.
 * A dry run only counts them. Reports are read a page at a time and each page is reconciled
 * before the next is asked for, so a run holds a few pages whatever the reports' size.
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
    private readonly accountTokens: AccountTokens,
  ) {}

  /**
   * Whose reports `run` reads (docs/reconciliation.md#accounts): an installed account's, with
   * its own tokens and request budget, or the server-to-server account's.
   */
  private account(run: Run): ReportsAccount {
    const accountId = run.accountId;
    if (accountId === null) return { key: runAccountKey(run) };
    return {
      key: runAccountKey(run),
      tokens: {
        get: () => this.accountTokens.get(accountId),
        invalidate: (token) => this.accountTokens.invalidate(accountId, token),
      },
    };
  }

  async execute(run: Run, signal: AbortSignal): Promise<{ status: RunStatus; tally: RunProgress }> {
    const reports = new PlatformReports(
      this.zoom,
      this.budget,
      this.config.reconcile.maxRps,
      signal,
      this.account(run),
    );
    const tally = new Tally(run);
    let written = Date.now();
    const flush = async (force = false) => {
      if (!force && Date.now() - written < PROGRESS_EVERY_MS) return;
      written = Date.now();
      await this.store.progress(run.id, tally);
    };
    const context: RunContext = {
      run,
      window: { since: run.since.getTime(), until: run.until.getTime() },
      // The events it creates name the account, so that they reach only its holders.
      accountId: run.accountId ?? this.config.zoom.accountId ?? '',
      reports,
      tally,
      flush,
      ingests: new Gate(INGESTS_IN_FLIGHT),
      signal,
    };
    let status: RunStatus = 'succeeded';
    try {
      for (const family of ['meeting', 'webinar'] as const) await this.family(family, context);
      if (tally.incomplete()) status = 'partial';
    } catch (error) {
      if (!(error instanceof PlatformUnreachable)) throw error;
      tally.note(error);
      status = 'failed';
    }
    this.logger.log(
      `reconciliation ${run.id} ${status}: ${reports.requests} platform requests, checked ` +
        `${JSON.stringify(tally.checked)}, created ${JSON.stringify(tally.created)}`,
    );
    return { status, tally };
  }

  private async family(family: Family, c: RunContext): Promise<void> {
    const list: SourceName = family === 'meeting' ? 'meetings' : 'webinars';
    if (c.tally.refused.has(list)) return;
    // Dates, not times: a meeting that started the day before the window may end in it.
    const query = {
      from: day(c.window.since - DAY_MS),
      to: day(c.window.until - 1),
    };
    // At most MAX_PAGES pages of uuids (the listing ends there): bounded.
    const seen = new Set<string>();
    // Meetings are read side by side, so that the platform's latency does not leave the
    // request budget idle: the budget alone decides the rate (docs/reconciliation.md).
    const pool = new MeetingPool(meetingsInFlight(this.config.reconcile.maxRps));
    try {
      for (const type of ['past', 'live'] as const) {
        try {
          for await (const page of c.reports.rows(list, list, { type, ...query })) {
            for (const meeting of page) {
              const uuid = typeof meeting.uuid === 'string' ? meeting.uuid : null;
              if (uuid === null || seen.has(uuid)) continue;
              const start = timeOf(meeting.start_time);
              const end = timeOf(meeting.end_time);
              // Outside the window altogether: nothing of it can be in the window.
              if (
                (start !== null && start >= c.window.until) ||
                (end !== null && end < c.window.since)
              )
                continue;
              seen.add(uuid);
              c.tally.checked[list]++;
              await pool.add(() => this.meeting({ family, type, row: meeting, uuid }, c));
            }
          }
        } catch (error) {
          // The listing is not believed past here (a repeated token, too many pages, a 404):
          // recorded, and the meetings it gave are still reconciled.
          if (!(error instanceof SourceUntrusted)) throw error;
          c.tally.note(error);
        }
      }
      await pool.drain();
    } catch (error) {
      // Whatever stopped the listing, the meetings under way end first (each one's error is
      // the pool's to report), so nothing runs on after the run is recorded.
      await pool.settle();
      if (!(error instanceof SourceRefused)) throw error;
      c.tally.refuse(error);
    }
    await c.flush(true);
  }

  /** One meeting of the listing: its own events, its participants, its recording. */
  private async meeting(listed: Listed, c: RunContext): Promise<void> {
    c.signal.throwIfAborted();
    const own = meetingEvents(listed.family, listed.row, c.accountId, c.window);
    await this.reconcile(
      c,
      own.map((event) => ({ event, key: dedupeKey(event) })),
    );
    await this.participants(listed, c);
    if (listed.row.has_recording === true && listed.type === 'past')
      await this.recording(listed.uuid, c);
    await c.flush();
  }

  /** The meeting's participant report, reconciled a page at a time. */
  private async participants(
    { family, type, row: meeting, uuid }: Listed,
    c: RunContext,
  ): Promise<void> {
    const source: SourceName =
      family === 'meeting' ? 'meeting_participants' : 'webinar_participants';
    if (c.tally.refused.has(source)) return;
    const params: Record<string, string> =
      family === 'meeting' ? { meetingId: uuid } : { webinarId: uuid };
    const marks = new RowMarks();
    try {
      for await (const page of c.reports.rows(source, 'participants', { type }, params)) {
        const keyed: Keyed[] = [];
        for (const row of page) {
          c.tally.checked.participants++;
          const mark = marks.of(row);
          for (const event of participantEvents(family, meeting, row, c.accountId, c.window))
            keyed.push({ event, key: keyOf(event, mark) });
        }
        await this.reconcile(c, keyed);
        await c.flush();
      }
    } catch (error) {
      if (error instanceof SourceUntrusted) c.tally.note(error);
      else if (error instanceof SourceRefused) c.tally.refuse(error);
      else throw error;
    }
  }

  private async recording(uuid: string, c: RunContext): Promise<void> {
    if (c.tally.refused.has('recordings')) return;
    try {
      // One answer, at most MAX_JSON_BYTES (src/zoom/zoom-http.ts): over it, SourceUntrusted.
      const recording = await c.reports.get('recordings', { meetingId: uuid });
      c.tally.checked.recordings++;
      const event = recordingEvent(recording, c.accountId);
      if (event) await this.reconcile(c, [{ event, key: dedupeKey(event) }]);
    } catch (error) {
      if (error instanceof SourceUntrusted) c.tally.note(error);
      else if (error instanceof SourceRefused) c.tally.refuse(error);
      else throw error;
    }
  }

  /**
   * Counts what is not stored yet; outside a dry run, stores it through the ingest, at most
   * INGESTS_IN_FLIGHT at once across the run. Every event is stored or the run is not done: a
   * failed ingest fails the meeting, and the run with it (never counted as created).
   */
  private async reconcile(c: RunContext, keyed: Keyed[]): Promise<void> {
    if (keyed.length === 0) return;
    const stored = await this.store.storedKeys(keyed.map((k) => k.key));
    const missing = keyed.filter(({ key }) => !stored.has(key));
    for (const { event } of missing) c.tally.add(c.tally.missing, event.event);
    if (c.run.dryRun) return;
    const results = await Promise.allSettled(
      missing.map(({ event, key }) =>
        c.ingests.run(() =>
          this.inbound.ingest(Buffer.from(JSON.stringify(event)), {
            via: VIA.reconciliation,
            trackingId: null,
            identityKey: key,
          }),
        ),
      ),
    );
    // A webhook that came in meanwhile was first: it is the one delivered.
    results.forEach(
      (r, i) =>
        r.status === 'fulfilled' &&
        r.value.status === 'accepted' &&
        c.tally.add(c.tally.created, missing[i].event.event),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/** A meeting or webinar as its listing gave it. */
interface Listed {
  family: Family;
  type: 'past' | 'live';
  row: Record<string, unknown>;
  uuid: string;
}

/** What the steps of one run share. */
interface RunContext {
  run: Run;
  window: Window;
  accountId: string;
  reports: PlatformReports;
  tally: Tally;
  flush: (force?: boolean) => Promise<void>;
  ingests: Gate;
  signal: AbortSignal;
}

/**
 * Marks of one participant report's rows that name no participant (participantWho is ''): the
 * row's rowMark, and how many rows with that mark came before it, so two guests alike in every
 * field stay two stays, and a later read of the report marks them the same
 * (docs/reconciliation.md#identity). Holds one entry per such row of the report.
 */
class RowMarks {
  private readonly seen = new Map<string, number>();

  of(row: Record<string, unknown>): string | null {
    if (participantWho(row) !== '') return null;
    const mark = rowMark(row);
    const n = (this.seen.get(mark) ?? 0) + 1;
    this.seen.set(mark, n);
    return `report-row:${mark}:${n}`;
  }
}

/**
 * The identity key of a reconciled event; for a row that names no participant, the key the
 * event would have if `mark` were its participant's identity (never stored in the event: the
 * webhook's object has no such field).
 */
function keyOf(event: ReconciledEvent, mark: string | null): string {
  if (mark === null) return dedupeKey(event);
  const object = event.payload.object;
  const participant = object.participant as Record<string, unknown>;
  return dedupeKey({
    ...event,
    payload: {
      ...event.payload,
      object: { ...object, participant: { ...participant, participant_uuid: mark } },
    },
  });
}

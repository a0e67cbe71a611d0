/**
 * Meeting attendance from stored participant events (docs/attendance.md): a pure computation.
 * Inputs may come in any order, twice, or not at all; the result depends only on the set of
 * inputs, never on the order they were added in, so a recomputation over the same events gives
 * the same attendance (and sends nothing).
 */

/** A participant event of the occurrence, as the store reads it (docs/attendance.md#inputs). */
export interface ParticipantInput {
  kind: 'joined' | 'left';
  /** `join_time` of a join, `leave_time` of a leave, as sent. */
  time: string | null;
  /** The envelope's `event_ts` (ms): the time of a leave the platform sent without leave_time. */
  eventTs: number | null;
  user_id: string | null;
  participant_user_id: string | null;
  email: string | null;
  user_name: string | null;
  registrant_id: string | null;
  customer_key: string | null;
  participant_uuid: string | null;
}

/** The occurrence as its `*.ended` event (or, for what it lacks, a participant event) gives it. */
export interface OccurrenceInput {
  id: string | null;
  uuid: string;
  topic: string | null;
  host_id: string | null;
  start_time: string | null;
  end_time: string | null;
  /** `event_ts` of the ended event: its end where the object has no end_time. */
  eventTs: number | null;
}

export interface AttendanceSession {
  join_time: string;
  leave_time: string;
  /** No leave came: the session ends at the occurrence's end. */
  open?: true;
  /** A leave came with no join before it: the session starts at the occurrence's start. */
  join_missing?: true;
}

export interface AttendanceParticipant {
  user_id: string | null;
  user_name: string | null;
  email: string | null;
  registrant_id: string | null;
  customer_key: string | null;
  sessions: AttendanceSession[];
  first_join: string;
  last_leave: string;
  duration_seconds: number;
}

/** `data` of `meeting.attendance` without its `revision`. */
export interface Attendance {
  id: string | null;
  uuid: string;
  topic: string | null;
  host_id: string | null;
  start_time: string | null;
  end_time: string | null;
  duration_seconds: number | null;
  participants_count: number;
  participants: AttendanceParticipant[];
}

const FIELDS = ['user_id', 'user_name', 'email', 'registrant_id', 'customer_key'] as const;

const nonEmpty = (value: string | null | undefined): string | null =>
  typeof value === 'string' && value !== '' ? value : null;

/** Milliseconds of a platform time, or null when it is none. */
export function instantOf(value: string | null | undefined): number | null {
  if (!nonEmpty(value)) return null;
  const ms = Date.parse(value as string);
  return Number.isNaN(ms) ? null : ms;
}

/** ISO 8601 UTC with Z, without fractions when there are none (as the platform writes times). */
export function isoOf(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

/**
 * The participant's identity (the service's de-duplication identity): `user_id`; where empty
 * `participant_user_id`, else `email`, else `user_name`; else `participant_uuid`. Prefixed by
 * the field, so an email never meets a user id of the same text.
 */
export function participantKey(p: ParticipantInput): string {
  for (const field of [
    'user_id',
    'participant_user_id',
    'email',
    'user_name',
    'participant_uuid',
  ] as const) {
    const value = nonEmpty(p[field]);
    if (value !== null) return `${field}:${value}`;
  }
  return 'unknown';
}

interface Span {
  join: number;
  leave: number;
  open?: true;
  joinMissing?: true;
}

/** Pairs one participant's joins and leaves into sessions, by join (docs/attendance.md#sessions). */
function sessionsOf(
  joins: number[],
  leaves: number[],
  start: number | null,
  end: number | null,
): Span[] {
  const sessions: Span[] = [];
  // Joins whose leave has not come yet, earliest first: a leave closes the earliest.
  const open: number[] = [];
  let openHead = 0;
  let j = 0;
  let l = 0;
  while (j < joins.length || l < leaves.length) {
    const t = Math.min(joins[j] ?? Infinity, leaves[l] ?? Infinity);
    const join = joins[j] === t;
    const leave = leaves[l] === t;
    if (join) j++;
    if (leave) l++;
    // At one instant a leave ends a session already open before a join starts one; with
    // nothing open, a join and a leave at the same instant are one session of no length.
    if (leave && openHead < open.length) {
      sessions.push({ join: open[openHead++], leave: t });
      if (join) open.push(t);
    } else if (leave && join) {
      sessions.push({ join: t, leave: t });
    } else if (leave) {
      sessions.push({ join: start !== null && start < t ? start : t, leave: t, joinMissing: true });
    } else {
      open.push(t);
    }
  }
  for (let i = openHead; i < open.length; i++) {
    const join = open[i];
    sessions.push({ join, leave: end !== null && end > join ? end : join, open: true });
  }
  return sessions.sort((a, b) => a.join - b.join || a.leave - b.leave);
}

/**
 * isoOf remembering what it wrote: a meeting's times repeat (every open session ends at its
 * end, participants join together), and one string per instant is less to write and to keep.
 */
function isoWriter(): (ms: number) => string {
  const written = new Map<number, string>();
  return (ms) => {
    let iso = written.get(ms);
    if (iso === undefined) {
      iso = isoOf(ms);
      written.set(ms, iso);
    }
    return iso;
  };
}

const sessionOut = (s: Span, iso: (ms: number) => string): AttendanceSession => {
  const out: AttendanceSession = { join_time: iso(s.join), leave_time: iso(s.leave) };
  if (s.open) out.open = true;
  if (s.joinMissing) out.join_missing = true;
  return out;
};

/** Time covered by sessions sorted by join, each moment counted once: milliseconds. */
function coveredMs(sessions: { join: number; leave: number }[]): number {
  let total = 0;
  let from = -Infinity;
  let to = -Infinity;
  for (const s of sessions) {
    if (s.join > to) {
      if (to > from) total += to - from;
      from = s.join;
      to = s.leave;
    } else if (s.leave > to) {
      to = s.leave;
    }
  }
  if (to > from) total += to - from;
  return total;
}

/** Typed arrays twice as long, the first `used` entries kept. */
function grown<T extends Float64Array | Int32Array | Uint8Array>(
  array: T,
  make: (n: number) => T,
): T {
  const next = make(array.length * 2);
  next.set(array);
  return next;
}

/**
 * Gathers an occurrence's participant events one at a time (so a store can stream them) and
 * gives its attendance. Events it cannot place (no time at all) are counted in `skipped`.
 *
 * Built for meetings of tens of thousands (docs/benchmarks.md): an event is kept as three
 * numbers in typed arrays (its participant, its time, join or leave), and a participant as its
 * key and, per field, the earliest value with its time; nothing per event lives on the heap.
 */
export class AttendanceBuilder {
  private readonly numbers = new Map<string, number>();
  private readonly keys: string[] = [];
  /** Per participant and field (FIELDS.length a participant): the earliest value and its time. */
  private readonly values: (string | null)[] = [];
  private readonly valueAts: number[] = [];
  private owners = new Int32Array(1024);
  private times = new Float64Array(1024);
  private lefts = new Uint8Array(1024);
  private count = 0;
  skipped = 0;

  add(input: ParticipantInput): void {
    const at = instantOf(input.time) ?? input.eventTs;
    if (at === null || !Number.isFinite(at)) {
      this.skipped++;
      return;
    }
    const key = participantKey(input);
    let number = this.numbers.get(key);
    if (number === undefined) {
      number = this.keys.length;
      this.numbers.set(key, number);
      this.keys.push(key);
      for (let f = 0; f < FIELDS.length; f++) {
        this.values.push(null);
        this.valueAts.push(0);
      }
    }
    if (this.count === this.owners.length) {
      this.owners = grown(this.owners, (n) => new Int32Array(n));
      this.times = grown(this.times, (n) => new Float64Array(n));
      this.lefts = grown(this.lefts, (n) => new Uint8Array(n));
    }
    this.owners[this.count] = number;
    this.times[this.count] = at;
    this.lefts[this.count] = input.kind === 'joined' ? 0 : 1;
    this.count++;
    // The earliest event's value wins; at one instant the least value, so order never matters.
    for (let f = 0; f < FIELDS.length; f++) {
      const value = nonEmpty(input[FIELDS[f]]);
      if (value === null) continue;
      const slot = number * FIELDS.length + f;
      const kept = this.values[slot];
      const keptAt = this.valueAts[slot];
      if (kept === null || at < keptAt || (at === keptAt && value < kept)) {
        this.values[slot] = value;
        this.valueAts[slot] = at;
      }
    }
  }

  build(occurrence: OccurrenceInput): Attendance {
    const start = instantOf(occurrence.start_time);
    const end = instantOf(occurrence.end_time) ?? occurrence.eventTs;
    const people = this.keys.length;
    // The events grouped by participant (a counting sort): participant n's are
    // order[from[n]] .. order[from[n + 1] - 1].
    const from = new Int32Array(people + 1);
    for (let i = 0; i < this.count; i++) from[this.owners[i] + 1]++;
    for (let n = 0; n < people; n++) from[n + 1] += from[n];
    const order = new Int32Array(this.count);
    const next = from.slice(0, people);
    for (let i = 0; i < this.count; i++) order[next[this.owners[i]]++] = i;

    const iso = isoWriter();
    const firsts = new Float64Array(people);
    const results: AttendanceParticipant[] = new Array<AttendanceParticipant>(people);
    for (let n = 0; n < people; n++) {
      const joins: number[] = [];
      const leaves: number[] = [];
      for (let k = from[n]; k < from[n + 1]; k++) {
        const i = order[k];
        (this.lefts[i] ? leaves : joins).push(this.times[i]);
      }
      const spans = sessionsOf(distinctSorted(joins), distinctSorted(leaves), start, end);
      let last = -Infinity;
      for (const s of spans) if (s.leave > last) last = s.leave;
      const field = (f: number) => this.values[n * FIELDS.length + f];
      firsts[n] = spans[0].join;
      results[n] = {
        user_id: field(0),
        user_name: field(1),
        email: field(2),
        registrant_id: field(3),
        customer_key: field(4),
        sessions: spans.map((span) => sessionOut(span, iso)),
        first_join: iso(spans[0].join),
        last_leave: iso(last),
        duration_seconds: Math.round(coveredMs(spans) / 1000),
      };
    }
    const keys = this.keys;
    const byFirstJoin = Array.from({ length: people }, (_, n) => n).sort(
      (a, b) => firsts[a] - firsts[b] || (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : 0),
    );
    return {
      id: occurrence.id,
      uuid: occurrence.uuid,
      topic: occurrence.topic,
      host_id: occurrence.host_id,
      start_time: start === null ? null : isoOf(start),
      end_time: end === null ? null : isoOf(end),
      duration_seconds:
        start !== null && end !== null ? Math.max(0, Math.round((end - start) / 1000)) : null,
      participants_count: people,
      participants: byFirstJoin.map((n) => results[n]),
    };
  }
}

/** The numbers in ascending order, each once (a participant's joins or leaves). */
function distinctSorted(times: number[]): number[] {
  if (times.length < 2) return times;
  times.sort((a, b) => a - b);
  let kept = 1;
  for (let i = 1; i < times.length; i++) if (times[i] !== times[kept - 1]) times[kept++] = times[i];
  times.length = kept;
  return times;
}

/** The attendance of `occurrence` from `inputs`, in any order. */
export function computeAttendance(
  occurrence: OccurrenceInput,
  inputs: Iterable<ParticipantInput>,
): Attendance {
  const builder = new AttendanceBuilder();
  for (const input of inputs) builder.add(input);
  return builder.build(occurrence);
}

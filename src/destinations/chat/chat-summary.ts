/**
 * What a chat message says of a notification (docs/destinations.md#chat-tools), before any
 * tool's format: one line naming what happened and to what, facts, and links. Every string
 * here that came from the platform or a person is raw: each tool's builder escapes it.
 */
export interface ChatSummary {
  /** One line: what happened, and to what. */
  title: string;
  facts: ChatFact[];
  links: ChatLink[];
}

export interface ChatFact {
  name: string;
  value: string;
}

export interface ChatLink {
  label: string;
  url: string;
}

type Obj = Record<string, unknown>;

const obj = (value: unknown): Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : {};
const str = (value: unknown): string | null =>
  typeof value === 'string' && value !== ''
    ? value
    : typeof value === 'number' || typeof value === 'bigint'
      ? String(value)
      : null;

/** Facts whose value is known, in order. */
const facts = (...pairs: [string, unknown][]): ChatFact[] =>
  pairs.flatMap(([name, value]) => {
    const text = str(value);
    return text === null ? [] : [{ name, value: text }];
  });

/** "Quarterly all-hands" or, without a topic, "meeting 85746065432". */
const meetingName = (data: Obj): string => {
  const topic = str(data.topic);
  if (topic !== null) return `"${topic}"`;
  const id = str(data.id);
  return id === null ? 'a meeting' : `meeting ${id}`;
};

const when = (data: Obj, key: string): string | null => {
  const at = str(data[key]);
  if (at === null) return null;
  const zone = str(data.timezone);
  return zone === null ? at : `${at} (${zone})`;
};

const meetingFacts = (data: Obj): ChatFact[] =>
  facts(['Topic', data.topic], ['Meeting ID', data.id], ['Start time', when(data, 'start_time')]);

const personOf = (data: Obj): { who: string; person: Obj; registrant: boolean } => {
  const participant = obj(data.participant);
  const registrant = obj(data.registrant);
  const isRegistrant = Object.keys(participant).length === 0 && Object.keys(registrant).length > 0;
  const person = isRegistrant ? registrant : participant;
  const named =
    str(person.user_name) ??
    ([str(person.first_name), str(person.last_name)].filter(Boolean).join(' ') || null);
  return { who: named ?? str(person.email) ?? 'Someone', person, registrant: isRegistrant };
};

const isLink = (url: string): boolean => /^https?:\/\/[^\s]+$/i.test(url);

const SUMMARIES: Record<
  string,
  (data: Obj) => Omit<ChatSummary, 'links'> & { links?: ChatLink[] }
> = {
  'job.started': (data) => ({
    title: `Meeting started: ${meetingName(data)}`,
    facts: meetingFacts(data),
  }),
  'job.completed': (data) => ({
    title: `Meeting ended: ${meetingName(data)}`,
    facts: [...meetingFacts(data), ...facts(['End time', when(data, 'end_time')])],
  }),
  'follower.gained': (data) => {
    const { who, person, registrant } = personOf(data);
    return {
      title: registrant
        ? `${who} registered for ${meetingName(data)}`
        : `${who} joined ${meetingName(data)}`,
      facts: [
        ...facts(['Name', who], ['Email', person.email]),
        ...meetingFacts(data),
        ...facts(['Joined at', person.join_time]),
      ],
    };
  },
  'follower.lost': (data) => {
    const { who, person, registrant } = personOf(data);
    return {
      title: registrant
        ? `${who}'s registration for ${meetingName(data)} was withdrawn`
        : `${who} left ${meetingName(data)}`,
      facts: [
        ...facts(['Name', who], ['Email', person.email]),
        ...meetingFacts(data),
        ...facts(['Left at', person.leave_time], ['Reason', person.leave_reason]),
      ],
    };
  },
  'operation.complete': (data) => {
    const files = Array.isArray(data.files) ? data.files.map(obj) : [];
    return {
      title: `Recording ready: ${meetingName(data)} (${files.length} file${files.length === 1 ? '' : 's'})`,
      facts: meetingFacts(data),
      links: files.flatMap((file) => {
        const url = str(file.download_url);
        if (url === null || !isLink(url)) return [];
        const kind = [str(file.file_type), str(file.recording_type)].filter(Boolean).join(' ');
        return [{ label: kind || 'file', url }];
      }),
    };
  },
  'operation.failed': (data) => ({
    title: `Recording could not be collected: ${meetingName(data)}`,
    facts: [...meetingFacts(data), ...facts(['Reason', data.error])],
  }),
  'webhook.test': (data) => ({
    title: 'Test message from the meeting event bridge',
    facts: facts(['Webhook', data.webhook_id], ['Note', data.message]),
  }),
  'bridge.webhook.disabled': (data) => ({
    title: `A webhook was disabled (${str(data.reason) ?? 'unknown reason'})`,
    facts: facts(
      ['Webhook', data.webhook_id],
      ['URL', data.url],
      ['Reason', data.reason],
      ['Disabled at', data.disabled_at],
    ),
  }),
  'bridge.delivery.failed': (data) => ({
    title: `A delivery of ${str(data.event) ?? 'an event'} failed`,
    facts: facts(
      ['Webhook', data.webhook_id],
      ['Delivery', data.delivery_id],
      ['Attempts', data.attempt_count],
      ['Last status', data.last_status_code],
      ['Last error', data.last_error],
    ),
  }),
  'bridge.account.disconnected': (data) => ({
    title: `Platform account ${str(data.account_id) ?? ''} needs installing again`,
    facts: facts(['Account', data.account_id], ['Reason', data.reason]),
  }),
  'bridge.account.deauthorized': (data) => ({
    title: `Platform account ${str(data.account_id) ?? ''} removed the app`,
    facts: facts(['Account', data.account_id], ['When', data.deauthorized_at]),
  }),
  'meeting.attendance': (data) => ({
    title: `Attendance of ${meetingName(data)}: ${str(data.participants_count) ?? '0'} participants`,
    facts: facts(
      ['Revision', data.revision],
      ['Started', data.start_time],
      ['Ended', data.end_time],
      ...(Array.isArray(data.participants) ? data.participants : []).slice(0, 20).map((p) => {
        const person = obj(p);
        return [
          str(person.user_name) ?? str(person.email) ?? 'Someone',
          `${str(person.duration_seconds) ?? '0'} s`,
        ] as [string, unknown];
      }),
    ),
  }),
  'bridge.reconciliation.completed': (data) => ({
    title: `Reconciliation ${str(data.status) ?? 'ended'}`,
    facts: facts(
      ['Run', data.id],
      ['Trigger', data.trigger],
      ['Since', data.since],
      ['Until', data.until],
      ...Object.entries(obj(data.created)).map(
        ([event, n]) => [`Created ${event}`, n] as [string, unknown],
      ),
    ),
  }),
};

/** A platform event as it is: its name, and the object's topic or id. */
function platformSummary(kind: string, data: Obj): Omit<ChatSummary, 'links'> {
  const object = obj(data.object);
  const what = str(object.topic) !== null ? `"${str(object.topic)}"` : str(object.id);
  return {
    title: `Platform event ${kind.slice('zoom.'.length)}${what === null ? '' : `: ${what}`}`,
    facts: facts(
      ['Event', kind.slice('zoom.'.length)],
      ['Topic', object.topic],
      ['ID', object.id],
      ['Operator', data.operator],
    ),
  };
}

/** The summary of a notification body (docs/api.md#notifications). */
export function summarize(body: unknown): ChatSummary {
  const b = obj(body);
  const kind = str(b.event) ?? 'unknown';
  const data = obj(b.data);
  const made = SUMMARIES[kind]?.(data) ??
    (kind.startsWith('zoom.') ? platformSummary(kind, data) : null) ?? {
      title: `Event ${kind}`,
      facts: [],
    };
  return { links: [], ...made };
}

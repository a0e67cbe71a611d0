import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { CliError, EXIT, ExitCode } from './exit-codes';
import { DEFAULT_WIDTH, Output, record, table } from './output';
import { ProfileStore } from './profiles';
import { EventSummary, Schemas, ServiceClient, call, serviceClient } from './service-client';
import { parsePrecise, stringifyPrecise } from '../common/precise-json';

export const DEFAULT_URL = 'http://127.0.0.1:3000';

export interface CliContext {
  store: ProfileStore;
  output: Output;
  /** Resolves when the user interrupts a command that runs until stopped (`tail`). */
  interrupted?: Promise<void>;
}

interface GlobalOptions {
  url?: string;
  profile: string;
  json?: boolean;
}

type Webhook = Schemas['WebhookResponse'];
type Delivery = Schemas['DeliveryResponse'];

const WEBHOOK_COLUMNS = [
  'id',
  'url',
  'events',
  'active',
  'disabled_reason',
  'secret_hint',
  'created_at',
];
const DELIVERY_COLUMNS = [
  'id',
  'event',
  'status',
  'attempt_count',
  'last_status_code',
  'created_at',
  'completed_at',
];

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number');
  return n;
};

const list = (value: string): string[] =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

const bool = (value: string): boolean => {
  if (value === 'true' || value === 'false') return value === 'true';
  throw new InvalidArgumentError('must be true or false');
};

/** `--field name=value`: a body field the CLI has no option for; the value is JSON when it parses. */
const field = (value: string, previous: Record<string, unknown> = {}): Record<string, unknown> => {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('must be name=value');
  const raw = value.slice(at + 1);
  let parsed: unknown = raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = raw;
  }
  return { ...previous, [value.slice(0, at)]: parsed };
};

/**
 * A signing secret made here when none is given: 32 random bytes, shown once, in standard
 * padded base64, which the Standard Webhooks libraries decode (docs/receiving.md); they refuse
 * the URL-safe alphabet and a missing `=`.
 */
const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

function readSecret(value: string): string {
  // `-` reads it from stdin, so it stays out of the shell's history and the process list.
  const secret = value === '-' ? readFileSync(0, 'utf8').trim() : value;
  if (!secret) throw new CliError('the client secret is empty', EXIT.usage);
  return secret;
}

/** The CLI: every command, built over one context (tests pass their own store and output). */
export function buildProgram(ctx: CliContext): Command {
  const { output, store } = ctx;
  // Tables fit the terminal (a 100-column one when the output is not a terminal).
  const fitTable = (rows: Record<string, unknown>[], columns: string[]) =>
    table(rows, columns, output.columns ?? DEFAULT_WIDTH);
  const fitRecord = (value: Record<string, unknown>, fields?: string[]) =>
    record(value, fields, output.columns ?? DEFAULT_WIDTH);
  const program = new Command('meb')
    .description('Meeting Event Bridge from the command line: webhooks, deliveries, events')
    .option('--url <url>', `the service (default: the profile's, else ${DEFAULT_URL})`)
    .option('--profile <name>', 'profile whose token to use', 'default')
    .option('--json', 'print the service’s JSON instead of tables (for scripts)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => output.out(text.replace(/\n$/, '')),
      writeErr: (text) => output.err(text.replace(/\n$/, '')),
    })
    .showHelpAfterError('(add --help for usage)');

  const globals = (cmd: Command) => cmd.optsWithGlobals<GlobalOptions>();
  const urlOf = (opts: GlobalOptions) =>
    (opts.url ?? store.get(opts.profile)?.url ?? DEFAULT_URL).replace(/\/+$/, '');

  /** The signed-in client for this command: the profile's token, if it is for this URL and alive. */
  const client = (cmd: Command): { api: ServiceClient; url: string } => {
    const opts = globals(cmd);
    const url = urlOf(opts);
    const profile = store.get(opts.profile);
    const login = `meb login --url ${url}${opts.profile === 'default' ? '' : ` --profile ${opts.profile}`}`;
    if (!profile || profile.url !== url) {
      throw new CliError(`not logged in to ${url}: run \`${login}\``, EXIT.unauthenticated);
    }
    if (Date.parse(profile.expires_at) <= Date.now()) {
      throw new CliError(
        `the token for ${url} expired at ${profile.expires_at}: run \`${login}\``,
        EXIT.unauthenticated,
      );
    }
    return { api: serviceClient(url, profile.access_token), url };
  };

  /** Prints `data` as JSON (`--json`) or as the table `human` makes of it. */
  const show = <T>(cmd: Command, data: T, human: (data: T) => string) =>
    output.out(globals(cmd).json ? stringifyPrecise(data, 2) : human(data));

  const showWebhook = (cmd: Command, webhook: Webhook, secret?: string) => {
    show(cmd, secret ? { ...webhook, secret } : webhook, (w) =>
      fitRecord(w as Record<string, unknown>),
    );
    // Said once, on stderr: a script reading --json finds it as `secret` instead.
    if (secret && !globals(cmd).json) {
      output.err(`signing secret (shown once, keep it for your receiver): ${secret}`);
    }
  };

  program
    .command('login')
    .description('sign in with client credentials; the token is kept per profile (mode 0600)')
    .requiredOption('--client-id <id>', 'API client id')
    .requiredOption('--client-secret <secret>', 'API client secret, or - to read it from stdin')
    .option('--scope <scopes>', 'space-separated subset of the client’s scopes')
    .action(
      async (opts: { clientId: string; clientSecret: string; scope?: string }, cmd: Command) => {
        const global = globals(cmd);
        const url = urlOf(global);
        const secret = readSecret(opts.clientSecret);
        const basic = Buffer.from(`${opts.clientId}:${secret}`).toString('base64');
        const token = await call(
          url,
          serviceClient(url).POST('/oauth/token', {
            headers: { authorization: `Basic ${basic}` },
            body: {
              grant_type: 'client_credentials',
              ...(opts.scope ? { scope: opts.scope } : {}),
            },
          }),
        );
        const expiresAt = new Date(Date.now() + token.expires_in * 1000).toISOString();
        store.set(global.profile, {
          url,
          client_id: opts.clientId,
          access_token: token.access_token,
          expires_at: expiresAt,
          scope: token.scope,
        });
        show(
          cmd,
          { url, profile: global.profile, scope: token.scope, expires_at: expiresAt },
          (s) =>
            `logged in to ${s.url} as ${opts.clientId} (profile ${s.profile}, until ${s.expires_at})\nscopes: ${s.scope}`,
        );
      },
    );

  program
    .command('logout')
    .description('forget the profile’s token')
    .action((_opts, cmd: Command) => {
      store.set(globals(cmd).profile, undefined);
      if (!globals(cmd).json) output.out(`logged out (profile ${globals(cmd).profile})`);
    });

  const webhooks = program.command('webhooks').description('your webhook subscriptions');

  webhooks
    .command('list')
    .description('your webhooks, newest first (every page)')
    .option('--limit <n>', 'at most this many', positiveInt)
    .action(async (opts: { limit?: number }, cmd: Command) => {
      const { api, url } = client(cmd);
      const all: Webhook[] = [];
      let cursor: string | undefined;
      do {
        const page = await call(
          url,
          api.GET('/api/webhooks', { params: { query: { limit: 100, cursor } } }),
        );
        all.push(...page.data);
        cursor = page.next_cursor ?? undefined;
      } while (cursor && (opts.limit === undefined || all.length < opts.limit));
      const shown = opts.limit === undefined ? all : all.slice(0, opts.limit);
      show(cmd, shown, (rows) => fitTable(rows as Record<string, unknown>[], WEBHOOK_COLUMNS));
    });

  webhooks
    .command('get <id>')
    .description('one webhook')
    .action(async (id: string, _opts, cmd: Command) => {
      const { api, url } = client(cmd);
      showWebhook(
        cmd,
        await call(url, api.GET('/api/webhooks/{id}', { params: { path: { id } } })),
      );
    });

  webhooks
    .command('create <receiverUrl>')
    .description('subscribe a receiver URL to events (a signing secret is made when none is given)')
    .requiredOption('--events <list>', 'comma-separated event kinds (meb event-types)', list)
    .option('--secret <secret>', 'signing secret (16 to 256 characters)')
    .option('--field <name=value>', 'any other body field (JSON value), repeatable', field)
    .action(
      async (
        receiverUrl: string,
        opts: { events: string[]; secret?: string; field?: Record<string, unknown> },
        cmd: Command,
      ) => {
        const { api, url } = client(cmd);
        const secret = opts.secret ?? newSecret();
        const body = { ...opts.field, url: receiverUrl, events: opts.events, secret };
        const webhook = await call(
          url,
          api.POST('/api/webhooks', { body: body as Schemas['CreateWebhookDto'] }),
        );
        showWebhook(cmd, webhook, opts.secret ? undefined : secret);
      },
    );

  const patch = async (cmd: Command, id: string, body: Record<string, unknown>) => {
    const { api, url } = client(cmd);
    return call(
      url,
      api.PATCH('/api/webhooks/{id}', {
        params: { path: { id } },
        body: body as Schemas['UpdateWebhookDto'],
      }),
    );
  };

  webhooks
    .command('update <id>')
    .description('change a webhook')
    .option('--target <url>', 'the receiver’s new URL')
    .option('--events <list>', 'comma-separated event kinds', list)
    .option('--active <bool>', 'true or false', bool)
    .option('--field <name=value>', 'any other body field (JSON value), repeatable', field)
    .action(
      async (
        id: string,
        opts: {
          target?: string;
          events?: string[];
          active?: boolean;
          field?: Record<string, unknown>;
        },
        cmd: Command,
      ) => {
        const body: Record<string, unknown> = { ...opts.field };
        if (opts.target !== undefined) body.url = opts.target;
        if (opts.events !== undefined) body.events = opts.events;
        if (opts.active !== undefined) body.active = opts.active;
        if (Object.keys(body).length === 0) {
          throw new CliError(
            'nothing to change: give --target, --events, --active or --field',
            EXIT.usage,
          );
        }
        showWebhook(cmd, await patch(cmd, id, body));
      },
    );

  webhooks
    .command('rotate <id>')
    .description('replace the signing secret; the old one signs beside it for the grace period')
    .option('--secret <secret>', 'the new secret (made here when not given)')
    .action(async (id: string, opts: { secret?: string }, cmd: Command) => {
      const secret = opts.secret ?? newSecret();
      const webhook = await patch(cmd, id, { secret });
      showWebhook(cmd, webhook, opts.secret ? undefined : secret);
    });

  for (const [name, active] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    webhooks
      .command(`${name} <id>`)
      .description(
        active ? 'resume deliveries (also after the service disabled it)' : 'pause deliveries',
      )
      .action(async (id: string, _opts, cmd: Command) =>
        showWebhook(cmd, await patch(cmd, id, { active })),
      );
  }

  webhooks
    .command('delete <id>')
    .description('delete a webhook')
    .action(async (id: string, _opts, cmd: Command) => {
      const { api, url } = client(cmd);
      await call(url, api.DELETE('/api/webhooks/{id}', { params: { path: { id } } }));
      show(cmd, { id, deleted: true }, () => `deleted ${id}`);
    });

  webhooks
    .command('test <id>')
    .description('queue a webhook.test delivery to it')
    .action(async (id: string, _opts, cmd: Command) => {
      const { api, url } = client(cmd);
      const delivery = await call(
        url,
        api.POST('/api/webhooks/{id}/test', { params: { path: { id } } }),
      );
      show(cmd, delivery, (d) => fitRecord(d as Record<string, unknown>, DELIVERY_COLUMNS));
    });

  const deliveries = program.command('deliveries').description('what was sent to a webhook');

  deliveries
    .command('list <webhookId>')
    .description('deliveries to a webhook, newest first')
    .addOption(
      new Option('--status <status>', 'only these').choices(['pending', 'succeeded', 'failed']),
    )
    .option('--event <event>', 'only this event kind')
    .option('--limit <n>', 'at most this many (1 to 100)', positiveInt, 20)
    .action(
      async (
        webhookId: string,
        opts: { status?: Delivery['status']; event?: string; limit: number },
        cmd: Command,
      ) => {
        const { api, url } = client(cmd);
        const page = await call(
          url,
          api.GET('/api/webhooks/{id}/deliveries', {
            params: {
              path: { id: webhookId },
              query: { status: opts.status, event: opts.event, limit: opts.limit },
            },
          }),
        );
        show(cmd, page, (p) => fitTable(p.data as Record<string, unknown>[], DELIVERY_COLUMNS));
      },
    );

  deliveries
    .command('get <webhookId> <deliveryId>')
    .description('one delivery with its attempts')
    .action(async (webhookId: string, deliveryId: string, _opts, cmd: Command) => {
      const { api, url } = client(cmd);
      const delivery = await call(
        url,
        api.GET('/api/webhooks/{id}/deliveries/{deliveryId}', {
          params: { path: { id: webhookId, deliveryId } },
        }),
      );
      show(cmd, delivery, (d) => {
        const { attempts, payload, ...rest } = d;
        void payload;
        return `${fitRecord(rest as Record<string, unknown>)}\n${fitTable(
          attempts as unknown as Record<string, unknown>[],
          ['attempt', 'started_at', 'duration_ms', 'status_code', 'error'],
        )}`;
      });
    });

  deliveries
    .command('tail <webhookId>')
    .description('follow deliveries as they are made and change (Ctrl-C stops)')
    .option('--interval <ms>', 'how often to ask', positiveInt, 1000)
    .option('--last <n>', 'first show this many recent ones', positiveInt, 10)
    .option('--max <n>', 'stop after this many lines (0: never)', positiveInt, 0)
    .action(
      async (
        webhookId: string,
        opts: { interval: number; last: number; max: number },
        cmd: Command,
      ) => {
        const { api, url } = client(cmd);
        const json = globals(cmd).json;
        const seen = new Map<string, string>();
        let printed = 0;
        let first = true;
        let stopped = false;
        void ctx.interrupted?.then(() => (stopped = true));
        const line = (d: Delivery) =>
          json
            ? JSON.stringify(d)
            : [
                d.created_at,
                d.id,
                d.event,
                d.status,
                `attempts=${d.attempt_count}`,
                d.last_status_code ?? '-',
                d.last_error ?? '',
              ]
                .join('  ')
                .trimEnd();
        while (!stopped) {
          const page = await call(
            url,
            api.GET('/api/webhooks/{id}/deliveries', {
              params: { path: { id: webhookId }, query: { limit: 100 } },
            }),
          );
          // Oldest first on screen, as a log reads.
          const fresh = [...page.data].reverse().filter((d) => {
            const state = `${d.status}/${d.attempt_count}`;
            const changed = seen.get(d.id) !== state;
            seen.set(d.id, state);
            return changed;
          });
          const shown = first ? fresh.slice(Math.max(0, fresh.length - opts.last)) : fresh;
          first = false;
          for (const d of shown) {
            output.out(line(d));
            printed += 1;
            if (opts.max > 0 && printed >= opts.max) return;
          }
          await Promise.race([
            new Promise((resolve) => setTimeout(resolve, opts.interval)),
            ctx.interrupted,
          ]);
        }
      },
    );

  program
    .command('redeliver <webhookId> <deliveryId>')
    .description('send a failed or succeeded delivery again')
    .action(async (webhookId: string, deliveryId: string, _opts, cmd: Command) => {
      const { api, url } = client(cmd);
      const delivery = await call(
        url,
        api.POST('/api/webhooks/{id}/deliveries/{deliveryId}/redeliver', {
          params: { path: { id: webhookId, deliveryId } },
        }),
      );
      show(cmd, delivery, (d) => fitRecord(d as Record<string, unknown>, DELIVERY_COLUMNS));
    });

  program
    .command('replay <webhookId>')
    .description('send again the deliveries of a time window')
    .requiredOption('--since <time>', 'start (ISO 8601 UTC, e.g. 2026-01-01T09:00:00Z)')
    .option('--until <time>', 'end, excluded (default now)')
    .addOption(new Option('--status <status>', 'which ones').choices(['failed', 'succeeded']))
    .option('--missed', 'also the events it never received (inactive or disabled then)')
    .action(
      async (
        webhookId: string,
        opts: { since: string; until?: string; status?: 'failed' | 'succeeded'; missed?: boolean },
        cmd: Command,
      ) => {
        const { api, url } = client(cmd);
        const result = await call(
          url,
          api.POST('/api/webhooks/{id}/replay', {
            params: { path: { id: webhookId } },
            body: {
              since: opts.since,
              until: opts.until,
              status: opts.status,
              missed: opts.missed,
            },
          }),
        );
        show(cmd, result, (r) => `queued ${r.count} deliveries`);
      },
    );

  program
    .command('event-types')
    .description('the event kinds a webhook can subscribe to')
    .action(async (_opts, cmd: Command) => {
      const { api, url } = client(cmd);
      const types = await call(url, api.GET('/api/event-types'));
      show(cmd, types, (t) =>
        fitTable(t.data as unknown as Record<string, unknown>[], ['name', 'description']),
      );
    });

  program
    .command('templates')
    .description('try webhook templates (docs/templates.md)')
    .command('render')
    .description(
      "what a template makes of an event kind's example body (or of --body), as a webhook of " +
        "--type would send it; with no template, a chat type's built-in message",
    )
    .option('--template <expression>', 'the JSONata expression; @file reads it from a file')
    .option('--type <type>', 'http (the default), slack, teams or discord', 'http')
    .option('--event <kind>', 'an event kind of meb event-types: its example body', 'job.started')
    .option('--body <file>', 'a notification body of your own, a JSON file (- for stdin)')
    .action(
      async (
        opts: { template?: string; type: string; event: string; body?: string },
        cmd: Command,
      ) => {
        const { api, url } = client(cmd);
        const template =
          opts.template === undefined
            ? null
            : opts.template.startsWith('@')
              ? readFileSync(opts.template.slice(1), 'utf8')
              : opts.template;
        const body =
          opts.body === undefined
            ? { event: opts.event }
            : {
                body: JSON.parse(readFileSync(opts.body === '-' ? 0 : opts.body, 'utf8')) as Record<
                  string,
                  unknown
                >,
              };
        const result = await call(
          url,
          api.POST('/api/templates/render', {
            body: { template, type: opts.type, ...body } as Schemas['RenderTemplateDto'],
          }),
        );
        show(cmd, result, (r) =>
          [
            JSON.stringify(r.output, null, 2),
            `(${r.bytes} bytes)`,
            ...r.warnings.map((w) => `warning: ${w}`),
          ].join('\n'),
        );
      },
    );

  const events = program.command('events').description('look events up (docs/operations.md)');

  const EVENT_COLUMNS = ['id', 'event', 'created_at', 'deliveries'];
  const eventRow = (e: EventSummary) => ({
    ...e,
    deliveries: e.deliveries?.map(
      (d) => `${d.status}${d.last_status_code ? ` ${d.last_status_code}` : ''}`,
    ),
  });

  events
    .command('find')
    .description('your events, newest first, by tracking id, kind or time')
    .option('--tracking-id <id>', 'the platform’s x-zm-trackingid')
    .option('--event <event>', 'event kind')
    .option('--since <time>', 'from (ISO 8601 UTC)')
    .option('--until <time>', 'to, excluded')
    .option('--limit <n>', 'at most this many', positiveInt, 20)
    .action(
      async (
        opts: {
          trackingId?: string;
          event?: string;
          since?: string;
          until?: string;
          limit: number;
        },
        cmd: Command,
      ) => {
        const { api, url } = client(cmd);
        // Read as text and parsed keeping every number's own text (the platform's 1.50, 1e400).
        const text = await call(
          url,
          api.GET('/api/events', {
            parseAs: 'text',
            params: {
              query: {
                tracking_id: opts.trackingId,
                event: opts.event,
                since: opts.since,
                until: opts.until,
                limit: opts.limit,
              },
            },
          }),
        );
        const page = parsePrecise(text) as { data: EventSummary[] };
        show(cmd, page, (p) => fitTable(p.data.map(eventRow), EVENT_COLUMNS));
      },
    );

  events
    .command('get <id>')
    .description('one event with its deliveries to your webhooks')
    .action(async (id: string, _opts, cmd: Command) => {
      const { api, url } = client(cmd);
      const event = parsePrecise(
        await call(url, api.GET('/api/events/{id}', { params: { path: { id } }, parseAs: 'text' })),
      ) as EventSummary;
      show(cmd, event, (e) => {
        const { deliveries: sent, ...rest } = e;
        return `${fitRecord(rest as unknown as Record<string, unknown>, ['id', 'event', 'created_at', 'source'])}\n${fitTable(
          (sent ?? []) as Record<string, unknown>[],
          ['id', 'webhook_id', 'status', 'attempt_count', 'last_status_code', 'completed_at'],
        )}`;
      });
    });

  const RUN_COLUMNS = [
    'id',
    'trigger',
    'account_id',
    'since',
    'until',
    'dry_run',
    'status',
    'checked',
    'missing',
    'created',
    'errors',
    'started_at',
    'finished_at',
  ];

  const showRun = (cmd: Command, run: object) =>
    show(cmd, run, (r) => record(r as Record<string, unknown>, RUN_COLUMNS));

  program
    .command('reconcile')
    .description(
      'ask the platform what happened in a window and create what never came (docs/reconciliation.md)',
    )
    .requiredOption('--since <time>', 'start (ISO 8601 UTC, e.g. 2026-01-01T09:00:00Z)')
    .option('--until <time>', 'end, excluded (default now)')
    .option('--dry-run', 'only count what is missing; create nothing')
    .option(
      '--account <account_id>',
      'an installed platform account you hold, read with its own token (docs/accounts.md)',
    )
    .option('--wait', 'wait for the run to end; exit 1 unless it succeeded')
    .option('--interval <ms>', 'with --wait: how often to ask', positiveInt, 1000)
    .action(
      async (
        opts: {
          since: string;
          until?: string;
          dryRun?: boolean;
          account?: string;
          wait?: boolean;
          interval: number;
        },
        cmd: Command,
      ) => {
        const { api, url } = client(cmd);
        let run = await call(
          url,
          api.POST('/api/reconciliations', {
            body: {
              since: opts.since,
              until: opts.until,
              dry_run: opts.dryRun ?? false,
              account_id: opts.account,
            },
          }),
        );
        while (opts.wait && run.finished_at === null) {
          await new Promise((resolve) => setTimeout(resolve, opts.interval));
          run = await call(
            url,
            api.GET('/api/reconciliations/{id}', { params: { path: { id: run.id } } }),
          );
        }
        showRun(cmd, run);
        if (opts.wait && run.status !== 'succeeded') {
          throw new CliError(`reconciliation ${run.id} ended ${run.status}`, EXIT.failed);
        }
      },
    );

  const reconciliations = program
    .command('reconciliations')
    .description('reconciliation runs (bridge:admin; start one with `meb reconcile`)');

  reconciliations
    .command('get <id>')
    .description('one run: its status, what it checked, found missing and created, its errors')
    .action(async (id: string, _opts, cmd: Command) => {
      const { api, url } = client(cmd);
      showRun(
        cmd,
        await call(url, api.GET('/api/reconciliations/{id}', { params: { path: { id } } })),
      );
    });

  reconciliations
    .command('cancel <id>')
    .description('cancel a queued or running run: it ends failed, its errors saying so')
    .action(async (id: string, _opts, cmd: Command) => {
      const { api, url } = client(cmd);
      showRun(
        cmd,
        await call(url, api.DELETE('/api/reconciliations/{id}', { params: { path: { id } } })),
      );
    });

  const attendance = program
    .command('attendance')
    .description('who attended ended meetings, computed by the service (docs/attendance.md)');

  attendance
    .command('list')
    .description('occurrences whose attendance is computed, newest end first')
    .option('--since <time>', 'ended at or after (ISO 8601 UTC)')
    .option('--until <time>', 'ended before')
    .option('--limit <n>', 'at most this many', positiveInt, 20)
    .option('--cursor <cursor>', 'next_cursor of the previous page')
    .action(
      async (
        opts: { since?: string; until?: string; limit: number; cursor?: string },
        cmd: Command,
      ) => {
        const { api, url } = client(cmd);
        const page = await call(
          url,
          api.GET('/api/attendance', {
            params: {
              query: {
                since: opts.since,
                until: opts.until,
                limit: opts.limit,
                cursor: opts.cursor,
              },
            },
          }),
        );
        show(cmd, page, (p) =>
          fitTable(p.data as unknown as Record<string, unknown>[], [
            'uuid',
            'topic',
            'end_time',
            'participants_count',
            'revision',
          ]),
        );
      },
    );

  attendance
    .command('get <uuid>')
    .description('the latest attendance of one occurrence (its uuid as the platform writes it)')
    .action(async (uuid: string, _opts, cmd: Command) => {
      const { api, url } = client(cmd);
      // The client encodes the path parameter once: a uuid's "/", "+" and "=" arrive intact.
      const found = await call(
        url,
        api.GET('/api/attendance/{uuid}', { params: { path: { uuid } } }),
      );
      show(cmd, found, (a) => {
        const { participants, ...occurrence } = a;
        const rows = (participants as Record<string, unknown>[]).map((p) => ({
          ...p,
          sessions: (p.sessions as { open?: boolean }[]).length,
          open: (p.sessions as { open?: boolean }[]).some((s) => s.open === true),
        }));
        return `${fitRecord(occurrence as unknown as Record<string, unknown>, [
          'uuid',
          'id',
          'topic',
          'start_time',
          'end_time',
          'duration_seconds',
          'participants_count',
          'revision',
          'computed_at',
        ])}\n${fitTable(rows, ['user_name', 'email', 'first_join', 'last_leave', 'duration_seconds', 'sessions', 'open'])}`;
      });
    });

  const inbound = program
    .command('inbound')
    .description("how the platform's events come in (bridge:admin)");

  inbound
    .command('status')
    .description('webhook and WebSocket: the socket state and its latest gaps')
    .action(async (_opts, cmd: Command) => {
      const { api, url } = client(cmd);
      const status = await call(url, api.GET('/api/inbound/status'));
      // Each source's part under its name, as the service lists them: a new way in shows
      // without a change here. The socket's gaps are its one list.
      show(cmd, status, (s) =>
        Object.entries(s as unknown as Record<string, Record<string, unknown>>)
          .flatMap(([via, part]) => {
            const { gaps, ...fields } = part;
            return [
              via,
              record(fields, Object.keys(fields)),
              ...(Array.isArray(gaps)
                ? [
                    'gaps, newest first',
                    table(
                      (gaps as Record<string, unknown>[]).map((g) => ({
                        ...g,
                        until: g.until ?? 'open',
                      })),
                      ['from', 'until', 'reconciliation_id'],
                    ),
                  ]
                : []),
            ];
          })
          .join('\n'),
      );
    });

  const accounts = program
    .command('accounts')
    .description('platform accounts that installed the app (docs/accounts.md)');

  accounts
    .command('list')
    .description('the installed accounts you hold (every one with bridge:admin); never a token')
    .action(async (_opts, cmd: Command) => {
      const { api, url } = client(cmd);
      const list = await call(url, api.GET('/api/platform/accounts'));
      show(cmd, list, (l) =>
        fitTable(l.data as unknown as Record<string, unknown>[], [
          'account_id',
          'status',
          'installed_by',
          'installed_at',
        ]),
      );
    });

  accounts
    .command('install')
    .description('an install URL to send the installing person to (single use, 10 minutes)')
    .action(async (_opts, cmd: Command) => {
      const { api, url } = client(cmd);
      const started = await call(url, api.POST('/api/platform/installs'));
      show(cmd, started, (s) => `${s.install_url}\nexpires ${s.expires_at}`);
    });

  accounts
    .command('remove <accountId>')
    .description('revoke an account you installed; its data is deleted within 10 minutes')
    .action(async (accountId: string, _opts, cmd: Command) => {
      const { api, url } = client(cmd);
      await call(
        url,
        api.DELETE('/api/platform/accounts/{accountId}', { params: { path: { accountId } } }),
      );
      show(cmd, { account_id: accountId, removed: true }, () => `removed ${accountId}`);
    });

  return program;
}

/** Runs one command line (without `node meb`); resolves to the exit code, never throws. */
export async function runCli(argv: string[], ctx: CliContext): Promise<ExitCode> {
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are answers, not failures; anything else commander refuses is usage.
      return error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help'
        ? EXIT.ok
        : EXIT.usage;
    }
    if (error instanceof CliError) {
      ctx.output.err(`meb: ${error.message}`);
      return error.code;
    }
    ctx.output.err(`meb: ${(error as Error).stack ?? String(error)}`);
    return EXIT.failed;
  }
}

import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ValidateBy } from 'class-validator';
import { FieldRule, Satisfies, quote } from '../../common/field-rule';
import {
  CONNECTION_HEADERS,
  HEADERS_MAX,
  HEADER_NAME_MAX,
  HEADER_VALUE_MAX,
  headersRule,
} from '../custom-headers';
import {
  FILTER_COMBINATORS,
  FILTER_MAX_BYTES,
  FILTER_MAX_DEPTH,
  FILTER_OPERATORS,
  FilterError,
  compileFilter,
} from '../event-filter';
import { isWellFormed } from '../../common/unicode';
import { destinationRule } from '../../destinations/destination-rules';
import { destinationRequestSchema } from '../../destinations/destination-schema';
import { DESTINATIONS } from '../../destinations/registry';
import {
  ALL_PLATFORM_EVENTS,
  COMPUTED_EVENTS,
  PLATFORM_EVENT_PATTERN,
  OPERATIONAL_EVENTS,
  SUBSCRIPTION_EVENTS,
  isSubscription,
} from '../subscription-events';
import { WEBHOOK_ORDERINGS, WebhookOrdering } from '../webhook.entity';
import { TEMPLATE_MAX_BYTES, templateProblem } from '../template-rules';

export const URL_MAX_LENGTH = 2048;

/**
 * A host name needs DNS to be checked, and the documentation ranges (192.0.2.0/24, 2001:db8::/32
 * and the like) are special-purpose addresses the SSRF check refuses; a public address literal
 * is the one kind of example "Try it out" can create anywhere.
 */
export const WEBHOOK_URL_EXAMPLE = 'https://1.1.1.1/meeting-events';
export const SECRET_MIN_LENGTH = 16;
export const SECRET_MAX_LENGTH = 256;

/** Secrets are measured in characters (code points), as secret_hint is cut. */
export const characters = (value: string): string[] => Array.from(value);

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

/**
 * The last 4 characters of a secret, as `secret_hint` shows them: a control character (which
 * a secret may hold, and PostgreSQL's text refuses as U+0000) shows as U+FFFD.
 */
export const secretHint = (secret: string): string =>
  characters(secret).slice(-4).join('').replace(CONTROL_CHARACTERS, '\uFFFD');

const required =
  (rule: FieldRule): FieldRule =>
  (value, field) =>
    value === undefined ? `${field} is required` : rule(value, field);

const urlRule: FieldRule = (value, field) => {
  if (typeof value !== 'string') return `${field} must be a string`;
  if (value.length > URL_MAX_LENGTH) {
    return `${field} must be at most ${URL_MAX_LENGTH} characters`;
  }
  // The URL parser silently drops tabs and newlines and trims spaces; the stored string must
  // be the one that was checked.
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(value)) {
    return `${field} must be an absolute http or https URL, without spaces or control characters`;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${field} must be an absolute http or https URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `${field} must use http or https, not ${quote(url.protocol.slice(0, -1))}`;
  }
  if (url.username || url.password) return `${field} must not contain credentials`;
  return null;
};

const eventsRule: FieldRule = (value, field) => {
  if (!Array.isArray(value)) return `${field} must be an array of event kinds`;
  if (value.length === 0) return `${field} must list at least one event kind`;
  const unknown = value.filter((event) => !isSubscription(event));
  if (unknown.length > 0) {
    return (
      `${field} has unknown event kind(s) ${unknown.slice(0, 3).map(quote).join(', ')}; ` +
      `allowed: ${[...SUBSCRIPTION_EVENTS, ...COMPUTED_EVENTS, ...OPERATIONAL_EVENTS].join(', ')}, ` +
      `${ALL_PLATFORM_EVENTS}, or zoom.<platform ` +
      `event> matching ${PLATFORM_EVENT_PATTERN.source}`
    );
  }
  const seen = new Set<unknown>();
  const repeated = value.find((event) => seen.size === seen.add(event).size);
  if (repeated !== undefined) return `${field} lists ${quote(repeated)} more than once`;
  return null;
};

// Never quotes the value: this is the signing secret. Control characters are kept whole (the
// key is bytes to HMAC); an unpaired surrogate has no UTF-8 form, so it could not be.
const secretRule: FieldRule = (value, field) => {
  if (typeof value !== 'string') return `${field} must be a string`;
  if (!isWellFormed(value)) {
    return `${field} must be valid Unicode text (it holds an unpaired surrogate)`;
  }
  const length = characters(value).length;
  if (length < SECRET_MIN_LENGTH || length > SECRET_MAX_LENGTH) {
    return `${field} must be ${SECRET_MIN_LENGTH} to ${SECRET_MAX_LENGTH} characters long, got ${length}`;
  }
  return null;
};

const activeRule: FieldRule = (value, field) =>
  typeof value === 'boolean' ? null : `${field} must be a boolean`;

interface FieldOptions {
  required: boolean;
}

const property = (options: FieldOptions) => (options.required ? ApiProperty : ApiPropertyOptional);
const rule = (check: FieldRule, options: FieldOptions) =>
  options.required ? Satisfies(required(check)) : Satisfies(check, { optional: true });

/** The broker type `destination` names, if it names one. */
function brokerTypeOf(body: object): string | null {
  const type = (body as { destination?: { type?: unknown } }).destination?.type;
  return typeof type === 'string' && DESTINATIONS.broker(type) !== undefined ? type : null;
}

/** The url of a new webhook: required for an http destination, refused for a broker. */
const createUrlRule = (value: unknown, field: string, body: object): string | null => {
  const broker = brokerTypeOf(body);
  if (broker !== null) {
    return value === undefined
      ? null
      : `${field} must not be given for a ${broker} destination (it names a broker instead)`;
  }
  if (value === undefined) return `${field} is required (unless destination is a broker)`;
  return urlRule(value, field);
};

/** POST's `url`: whether it is required depends on `destination`, so the rule sees the body. */
export const WebhookCreateUrl = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      description:
        'Receiver of the notifications, for an http destination (the default), where it is ' +
        'required: an absolute http or https URL. Refused when its host does not resolve, or ' +
        'is or resolves to a loopback, private, link-local, CGNAT, multicast, documentation or ' +
        'metadata address (unless the service runs with WEBHOOK_ALLOW_PRIVATE_URLS=true). Refused with a ' +
        "broker destination. Put your receiver's URL here; the example is a public address " +
        'literal only so that it is accepted as it stands, even where DNS is unavailable.',
      example: WEBHOOK_URL_EXAMPLE,
      format: 'uri',
      maxLength: URL_MAX_LENGTH,
    }),
    ValidateBy({
      name: 'satisfies',
      validator: {
        validate: (value: unknown, args) =>
          createUrlRule(value, args?.property ?? '', args?.object ?? {}) === null,
        defaultMessage: (args) =>
          (args ? createUrlRule(args.value, args.property, args.object) : null) ?? 'is invalid',
      },
    }),
  );

export const WebhookUrl = (options: FieldOptions): PropertyDecorator =>
  applyDecorators(
    property(options)({
      description:
        'Receiver of the notifications: an absolute http or https URL. Refused when its host ' +
        'does not resolve, or is or resolves to a loopback, private, link-local, CGNAT, multicast, documentation ' +
        'or metadata address (unless the service runs with WEBHOOK_ALLOW_PRIVATE_URLS=true). ' +
        "Put your receiver's URL here; the example is a public address literal only so that " +
        'it is accepted as it stands, even where DNS is unavailable.',
      example: WEBHOOK_URL_EXAMPLE,
      format: 'uri',
      maxLength: URL_MAX_LENGTH,
    }),
    rule(urlRule, options),
  );

/** The `events` array: the six kinds, meeting.attendance, the operational events, `zoom.*`, or a `zoom.<platform event>` name. */
export const WEBHOOK_EVENTS_SCHEMA: Pick<SchemaObject, 'items'> & { type: 'array' } = {
  type: 'array',
  items: {
    type: 'string',
    anyOf: [
      {
        enum: [
          ...SUBSCRIPTION_EVENTS,
          ...COMPUTED_EVENTS,
          ...OPERATIONAL_EVENTS,
          ALL_PLATFORM_EVENTS,
        ],
      },
      { pattern: PLATFORM_EVENT_PATTERN.source },
    ],
  },
};

export const WebhookEvents = (options: FieldOptions): PropertyDecorator =>
  applyDecorators(
    property(options)({
      description:
        'Event kinds to receive: at least one, each at most once. One of the six kinds, the ' +
        'operational events `bridge.webhook.disabled` and `bridge.delivery.failed` (about the ' +
        "client's other webhooks), " +
        '`zoom.*` (every platform event as the platform sent it), or `zoom.<platform event>` ' +
        '(`zoom.meeting.created`, `zoom.recording.trashed`, …). A webhook that lists both ' +
        '`zoom.*` and `zoom.<event>` gets one delivery per event.',
      ...WEBHOOK_EVENTS_SCHEMA,
      uniqueItems: true,
      minItems: 1,
      example: ['job.started', 'job.completed'],
    }),
    rule(eventsRule, options),
  );

export const WebhookSecret = (options: FieldOptions): PropertyDecorator =>
  applyDecorators(
    property(options)({
      description:
        'Signing secret: the key of the HMAC-SHA256 in `x-service-signature`. Stored ' +
        'encrypted; never returned (only its last 4 characters, as `secret_hint`).',
      minLength: SECRET_MIN_LENGTH,
      maxLength: SECRET_MAX_LENGTH,
      example: 'whsec_3q2+7w8X9yZ0a1b2',
      writeOnly: true,
    }),
    rule(secretRule, options),
  );

export const WebhookActive = (options: FieldOptions): PropertyDecorator =>
  applyDecorators(
    property(options)({
      description: 'false pauses deliveries to this webhook; true resumes them',
      example: false,
    }),
    rule(activeRule, options),
  );

/** `destination` (docs/destinations.md): refused as null; which brokers exist is checked by the service. */
export const WebhookDestination = (options: FieldOptions): PropertyDecorator =>
  applyDecorators(property(options)(destinationRequestSchema()), rule(destinationRule, options));

// Null is a value here: no filter (PATCH: remove it).
const filterRule: FieldRule = (value, field) => {
  if (value === null) return null;
  try {
    compileFilter(value);
    return null;
  } catch (error) {
    if (error instanceof FilterError) return error.message.replace(/^filter/, field);
    throw error;
  }
};

export const WebhookFilter = (options: FieldOptions): PropertyDecorator =>
  applyDecorators(
    property(options)({
      type: 'object',
      additionalProperties: true,
      nullable: true,
      description:
        'Only events whose notification body matches are delivered; the others create no ' +
        'delivery (nor count as missed for a replay). Keys are dotted paths into the body ' +
        '(`data.topic`, `source.event`), each matched by a literal (equality) or an object of ' +
        `operators: ${FILTER_OPERATORS.join(', ')}; ${FILTER_COMBINATORS.join(', ')} ` +
        'combine filters, and several keys must all match. A path through an array looks at ' +
        'each element, and an operator matches when any value reached satisfies it; a value of ' +
        'another type never matches. At most ' +
        `${FILTER_MAX_BYTES} bytes of JSON and ${FILTER_MAX_DEPTH} levels deep. null: no ` +
        'filter (on PATCH, removes it; a PATCH with a filter replaces the whole filter).',
      example: { 'source.event': { $prefix: 'meeting.' }, 'data.topic': { $contains: 'Sales' } },
    }),
    rule(filterRule, options),
  );

const nullableHeadersRule: FieldRule = (value, field) =>
  value === null ? null : headersRule(value, field);

export const WebhookHeaders = (options: FieldOptions): PropertyDecorator =>
  applyDecorators(
    property(options)({
      type: 'object',
      nullable: true,
      maxProperties: HEADERS_MAX,
      additionalProperties: {
        type: 'string',
        maxLength: HEADER_VALUE_MAX,
        pattern: '^[\\x20-\\x7e]*$',
      },
      description:
        `Static headers sent with every attempt (message headers for a broker): at most ` +
        `${HEADERS_MAX}, names HTTP tokens of at most ${HEADER_NAME_MAX} characters ` +
        '(case-insensitive, each once; none named like a JavaScript object member, such as ' +
        '`constructor` or `toString`) other than host, content-type, content-length, ' +
        'connection, transfer-encoding, user-agent, traceparent, any beginning x-service- or ' +
        `webhook-, and the connection and framing headers ${CONNECTION_HEADERS.join(', ')}; ` +
        'values printable ASCII of at ' +
        `most ${HEADER_VALUE_MAX} characters. Stored encrypted; answers show each value ` +
        'masked. null (or {}) removes them; a PATCH with headers replaces them all.',
      example: { Authorization: 'Bearer receiver-token-0123456789' },
      writeOnly: true,
    }),
    rule(nullableHeadersRule, options),
  );

/** Range of `max_in_flight` (docs/api.md#receiver-health). */
export const MAX_IN_FLIGHT_MIN = 1;
export const MAX_IN_FLIGHT_MAX = 100;
/** Range of `rate_limit`: attempts started per second. */
export const RATE_LIMIT_MIN = 1;
export const RATE_LIMIT_MAX = 10000;

const integerIn =
  (min: number, max: number, nullable: boolean): FieldRule =>
  (value, field) =>
    (nullable && value === null) ||
    (Number.isInteger(value) && (value as number) >= min && (value as number) <= max)
      ? null
      : `${field} must be an integer from ${min} to ${max}${nullable ? ', or null' : ''}`;

export const WebhookMaxInFlight = (options: FieldOptions): PropertyDecorator =>
  applyDecorators(
    property(options)({
      type: 'integer',
      minimum: MAX_IN_FLIGHT_MIN,
      maximum: MAX_IN_FLIGHT_MAX,
      description:
        'Most attempts in flight to this webhook at once, across every worker process. When ' +
        'never set, the service default (DELIVERY_CONCURRENCY_PER_WEBHOOK, 10 unless ' +
        'configured) applies.',
      example: 10,
    }),
    rule(integerIn(MAX_IN_FLIGHT_MIN, MAX_IN_FLIGHT_MAX, false), options),
  );

export const WebhookRateLimit = (options: FieldOptions): PropertyDecorator =>
  applyDecorators(
    property(options)({
      type: 'integer',
      minimum: RATE_LIMIT_MIN,
      maximum: RATE_LIMIT_MAX,
      nullable: true,
      description:
        'Most attempts started to this webhook in any second, across every worker process; ' +
        'null (the default) for no rate limit.',
      example: null,
    }),
    rule(integerIn(RATE_LIMIT_MIN, RATE_LIMIT_MAX, true), options),
  );

const templateRule: FieldRule = (value, field) =>
  value === null ? null : templateProblem(value, field);

/** What `template` does, on the request bodies and on the webhook alike (docs/templates.md). */
export const TEMPLATE_DESCRIPTION =
  'A JSONata expression (https://jsonata.org) evaluated on the notification body; its result, ' +
  'a JSON object or array, is what is sent, signed and shown in the delivery log instead of ' +
  `the body. At most ${TEMPLATE_MAX_BYTES} bytes; a syntax error is a 400 naming \`template\` ` +
  "and the position. For a chat destination, without one the tool's built-in message is sent. " +
  'A delivery whose template fails, runs too long or yields no object or array fails at once ' +
  '(`last_error` begins `template:`), without retries. null: none (on PATCH, removes it).';

export const WebhookTemplate = (options: FieldOptions): PropertyDecorator =>
  applyDecorators(
    property(options)({
      type: 'string',
      nullable: true,
      maxLength: TEMPLATE_MAX_BYTES,
      // Not a JSON Schema format: it tells tools (and the contract tester) the text is JSONata.
      format: 'jsonata',
      description: TEMPLATE_DESCRIPTION,
      example: '{"text": "Meeting started: " & data.topic}',
    }),
    rule(templateRule, options),
  );

const orderingRule: FieldRule = (value, field) =>
  WEBHOOK_ORDERINGS.includes(value as WebhookOrdering)
    ? null
    : `${field} must be one of ${WEBHOOK_ORDERINGS.map(quote).join(', ')}`;

/** What `ordering` means, shown on the request bodies and on the webhook alike. */
export const ORDERING_DESCRIPTION =
  '`none` (the default): each delivery is sent as soon as a slot allows, so two events of one ' +
  'meeting may arrive out of order (a retry of the first after the second). `meeting`: the ' +
  "deliveries of one meeting or webinar (the platform object's `uuid`) are sent one at a " +
  "time, in the order of the platform's `event_ts`: the next starts only once the one before " +
  'it succeeded or failed after its retries; other meetings go on meanwhile. A delivery whose ' +
  'event is older than one of its meeting already delivered is still sent, with the header ' +
  '`x-service-ordering: late`. Events without a platform object `uuid` are not ordered. ' +
  'Applies to deliveries created after it is set.';

export const WebhookOrderingField = (options: FieldOptions): PropertyDecorator =>
  applyDecorators(
    property(options)({
      enum: WEBHOOK_ORDERINGS,
      default: 'none',
      description: ORDERING_DESCRIPTION,
      example: 'meeting',
    }),
    rule(orderingRule, options),
  );

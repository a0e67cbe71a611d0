import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Satisfies } from '../common/field-rule';
import { SchemaRules } from '../common/openapi-exact';
import { DESTINATIONS } from '../destinations/registry';
import { EVENT_TYPES } from '../webhooks/event-catalog';
import { TEMPLATE_MAX_BYTES, templateProblem } from '../webhooks/template-rules';

/** The types a render names: those without a broker (a broker's output is the template's alone). */
const RENDER_TYPES = ['http', ...DESTINATIONS.chatTypes];
const KINDS = EVENT_TYPES.map((t) => t.name);
/** The catalog's kinds and every `zoom.<platform event>`, as one ECMA-262 pattern. */
const KIND_PATTERN = new RegExp(
  `^(?:${KINDS.map((k) => k.replace(/[.*]/g, (c) => `\\${c}`)).join('|')}|zoom\\.[a-z0-9_]+\\.[a-z0-9_]+)$`,
);

/** Body of POST /api/templates/render (docs/templates.md#trying-a-template). */
// The document states the rule the handler enforces: an example body of `event`, or `body`.
@SchemaRules({ anyOf: [{ required: ['event'] }, { required: ['body'] }] })
export class RenderTemplateDto {
  @ApiProperty({
    type: String,
    nullable: true,
    minLength: 1,
    maxLength: TEMPLATE_MAX_BYTES,
    format: 'jsonata',
    description:
      "The JSONata expression to try; null: none (a chat type's built-in message, or the body " +
      'itself for http)',
    example: '{"text": "Meeting started: " & data.topic}',
  })
  @Satisfies((value, field) =>
    value === null
      ? null
      : value === undefined
        ? `${field} is required (null for none)`
        : templateProblem(value, field),
  )
  template: string | null;

  @ApiPropertyOptional({
    enum: RENDER_TYPES,
    description: 'The destination type whose output to show (and check, for a chat tool)',
    example: 'slack',
    default: 'http',
  })
  @Satisfies(
    (value, field) =>
      RENDER_TYPES.includes(value as string)
        ? null
        : `${field} must be one of ${RENDER_TYPES.join(', ')}`,
    { optional: true },
  )
  type?: string;

  @ApiPropertyOptional({
    description:
      'An event kind of the catalog (GET /api/event-types), or a `zoom.<platform event>`: its ' +
      'example body is used, unless `body` is given. One of the two is required.',
    example: 'job.started',
    pattern: KIND_PATTERN.source,
  })
  @Satisfies(
    (value, field) =>
      typeof value === 'string' && KIND_PATTERN.test(value)
        ? null
        : `${field} must be an event kind of GET /api/event-types (${KINDS.join(', ')}) or zoom.<platform event>`,
    { optional: true },
  )
  event?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'A notification body of your own to evaluate the template on, instead of an example',
  })
  @Satisfies(
    (value, field) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? null
        : `${field} must be a JSON object (a notification body)`,
    { optional: true },
  )
  body?: Record<string, unknown>;
}

export class RenderTemplateResponse {
  @ApiProperty({
    oneOf: [
      { type: 'object', additionalProperties: true },
      { type: 'array', items: {} },
    ],
    description:
      'What would be sent: the JSON object or array the template yields (or the built-in message)',
    example: { text: 'Meeting started: Quarterly all-hands' },
  })
  output: unknown;

  @ApiProperty({ type: 'integer', description: 'Its size as sent, in bytes of JSON', example: 42 })
  bytes: number;

  @ApiProperty({
    type: [String],
    description:
      'What may not go as meant: for a chat type, texts that would notify people (`<!channel>`, ' +
      '`@everyone`, …) and left unescaped',
    example: [],
  })
  warnings: string[];
}

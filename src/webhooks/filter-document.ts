import type { OpenAPIObject } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { UpdateWebhookDto } from './dto/update-webhook.dto';
import { FILTER_OPERATORS } from './event-filter';

/** A string of a filter: jsonb holds no U+0000. */
const TEXT: SchemaObject = { type: 'string', pattern: '^[^\\x00]*$' };
const NUMBER: SchemaObject = { type: 'number' };

/** A literal a path is compared with: a string, number, boolean or null (never a list). */
const SCALAR: SchemaObject = {
  oneOf: [TEXT, NUMBER, { type: 'boolean' }, { type: 'string', nullable: true, enum: [null] }],
};

const OPERAND: Record<(typeof FILTER_OPERATORS)[number], SchemaObject> = {
  $eq: SCALAR,
  $neq: SCALAR,
  $in: { type: 'array', minItems: 1, items: SCALAR },
  $nin: { type: 'array', minItems: 1, items: SCALAR },
  $gt: { oneOf: [TEXT, NUMBER] },
  $gte: { oneOf: [TEXT, NUMBER] },
  $lt: { oneOf: [TEXT, NUMBER] },
  $lte: { oneOf: [TEXT, NUMBER] },
  $exists: { type: 'boolean' },
  $prefix: TEXT,
  $suffix: TEXT,
  $contains: SCALAR,
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * docs/destinations.md#filters: the filter language written into the document as far as
 * OpenAPI 3.0 can say it, so a contract tester draws filters the service takes: `$and`, `$or`
 * and `$not` over non-empty filters, and each path compared with a literal or an object of the
 * known operators with operands of their types. What 3.0 cannot say (no propertyNames) the
 * description does: a path has no empty segment and does not begin with `$`.
 */
export function stateFilterLanguage(document: OpenAPIObject): void {
  const schemas = (document.components ??= {}).schemas ?? {};
  schemas.EventFilterCondition = {
    description: 'What a path is matched by: a literal (equality) or an object of operators',
    oneOf: [
      SCALAR,
      { type: 'object', minProperties: 1, additionalProperties: false, properties: OPERAND },
    ],
  };
  schemas.EventFilterPart = {
    description: 'A filter inside $and, $or or $not: not empty',
    allOf: [ref('EventFilter')],
    minProperties: 1,
  };
  schemas.EventFilter = {
    type: 'object',
    description:
      'Keys are dotted paths into the notification body (no empty segment, not beginning with ' +
      'a dollar sign, no key named like a JavaScript object member such as `constructor` or ' +
      '`toString`), ' +
      'or `$and`, `$or`, `$not`',
    properties: {
      $and: { type: 'array', minItems: 1, items: ref('EventFilterPart') },
      $or: { type: 'array', minItems: 1, items: ref('EventFilterPart') },
      $not: ref('EventFilterPart'),
    },
    additionalProperties: ref('EventFilterCondition'),
  };
  for (const name of [CreateWebhookDto.name, UpdateWebhookDto.name]) {
    const properties = (schemas[name] as SchemaObject | undefined)?.properties as
      Record<string, SchemaObject> | undefined;
    const filter = properties?.filter;
    if (!filter) continue;
    const { description, example } = filter;
    // A $ref takes no siblings in 3.0: the nullable filter is an allOf of the one schema.
    properties.filter = {
      type: 'object',
      nullable: true,
      allOf: [ref('EventFilter')],
      description,
      example,
    };
  }
}

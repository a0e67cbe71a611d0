import { RequestMapping, RequestMethod, applyDecorators } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { RequireScopes } from '../auth/scopes.decorator';
import { ApiUpstreamErrors } from '../common/upstream';
import { PathRules } from './path-rules';
import { PlatformOperation, expressPath, scopeOf } from './platform-operations';
import {
  documentedBodySchema,
  isBodyRequired,
  lenientPathSchema,
  lenientSchema,
} from './schema-leniency';

const asSchema = (schema: object): SchemaObject => schema as SchemaObject;

/**
 * The route of one platform operation at `/api` + its platform path: its scope, and its
 * Swagger entry with the parameters and body schema of the platform's document (path ids as
 * this service accepts them: digits or a UUID). A path parameter whose rule in `pathRules`
 * (the mounting module's) states it otherwise is documented as that rule says.
 */
export function PlatformRoute(op: PlatformOperation, pathRules: PathRules): MethodDecorator {
  return applyDecorators(
    RequestMapping({ path: expressPath(op), method: RequestMethod[op.method] }),
    RequireScopes(scopeOf(op)),
    ApiTags(op.domain),
    ApiOperation({
      operationId: op.id,
      summary: op.summary,
      description:
        `Platform call: \`${op.method} ${op.path}\` (${op.group}), passed on with every ` +
        'parameter and body field as sent. Checked first against the platform’s published ' +
        'schema for this operation (400 names each bad field); fields the schema does not ' +
        'describe are forwarded unchanged.',
    }),
    ...op.parameters.map((p) => {
      if (p.in === 'query') {
        return ApiQuery({
          name: p.name,
          required: p.required,
          description: p.description,
          // As validated: what the service refuses, no more (docs/api.md#platform-passthrough's leniencies).
          schema: asSchema(lenientSchema(p.schema)),
        });
      }
      const documented = pathRules[p.name]?.document;
      if (documented) {
        return ApiParam({
          name: p.name,
          required: true,
          description: documented.description,
          schema: documented.schema,
        });
      }
      const { 'x-message': rule, ...schema } = lenientPathSchema(p);
      return ApiParam({
        name: p.name,
        required: true,
        description: [p.description, typeof rule === 'string' ? `Value ${rule}.` : '']
          .filter(Boolean)
          .join(' '),
        schema: asSchema(schema),
      });
    }),
    ...(op.body
      ? [
          ApiConsumes(op.body.contentType),
          ApiBody({
            required: isBodyRequired(op.body),
            schema: asSchema(documentedBodySchema(op.body.schema)),
          }),
        ]
      : []),
    ...Object.entries(op.responses).map(([status, answer]) =>
      ApiResponse({
        status: Number(status),
        description: `${answer.description} The platform's answer, passed on as it sent it.`.trim(),
        // The platform's own content type and schema (none where its answer is empty), read
        // as its requests are where the document contradicts itself (docs/api.md#platform-passthrough).
        ...(answer.contentType
          ? {
              content: {
                [answer.contentType]: {
                  schema: asSchema(lenientSchema(answer.schema ?? {}, 'answer')),
                },
              },
            }
          : {}),
      }),
    ),
    ApiUpstreamErrors(),
  );
}

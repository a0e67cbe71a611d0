import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScopes } from '../auth/scopes.decorator';
import { ApiError } from '../common/api-error';
import { ApiErrorResponse } from '../common/error-response';
import { DESTINATIONS } from '../destinations/registry';
import { exampleOf } from '../webhooks/event-examples';
import { RenderTemplateDto, RenderTemplateResponse } from './render-template.dto';
import { ShapingService } from './shaping.service';

@ApiTags('webhooks')
@Controller('api/templates')
export class TemplatesController {
  constructor(private readonly shaping: ShapingService) {}

  @Post('render')
  @HttpCode(200)
  @RequireScopes('webhooks:read')
  @ApiOperation({
    summary: 'Try a template on an example body',
    description:
      "Evaluates `template` as a delivery would (docs/templates.md): on the event catalog's " +
      'example body of `event`, or on `body`, for a destination of `type`. With no template, ' +
      "shows a chat type's built-in message. Nothing is stored or sent.",
  })
  @ApiOkResponse({ description: 'What would be sent', type: RenderTemplateResponse })
  @ApiErrorResponse(400, {
    description: 'A bad field, or a template that fails on this body; `details` names `template`',
    example: {
      message: 'template: it yielded nothing for this body',
      details: [{ field: 'template', message: 'template: it yielded nothing for this body' }],
    },
  })
  async render(@Body() dto: RenderTemplateDto): Promise<RenderTemplateResponse> {
    const type = dto.type ?? 'http';
    if (dto.event === undefined && dto.body === undefined) {
      throw ApiError.validation([
        { field: 'event', message: 'event is required without a body (an example body of it)' },
      ]);
    }
    // A body given is what the template is tried on; event then only names the kind.
    const body = dto.body ?? exampleOf(dto.event!)!;
    const rules = { destinationType: type, template: dto.template };
    const output = await this.shaping.output(rules, JSON.stringify(body));
    if (!output.ok) throw ApiError.validation([{ field: 'template', message: output.error }]);
    const value: unknown = JSON.parse(output.json);
    const chat = DESTINATIONS.chat(type);
    const warnings =
      chat === undefined || dto.template === null
        ? []
        : chat
            .mentions(value)
            .map(
              (m) =>
                `${JSON.stringify(m)} would notify people in ${DESTINATIONS.get(type)!.label}; escape it`,
            );
    return { output: value, bytes: Buffer.byteLength(output.json, 'utf8'), warnings };
  }
}

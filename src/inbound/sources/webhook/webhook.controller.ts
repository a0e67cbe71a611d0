import {
  Controller,
  HttpCode,
  HttpException,
  HttpStatus,
  Optional,
  Post,
  RawBodyRequest,
  Req,
} from '@nestjs/common';
import {
  ApiBody,
  ApiExtraModels,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request } from 'express';
import type { IncomingMessage } from 'node:http';
import { ApiErrorResponse } from '../../../common/error-response';
import { recordSpan } from '../../../telemetry/request-record';
import { Tracing } from '../../../telemetry/tracing';
import { ApiNotificationCallbacks } from '../../../webhooks/notification-callbacks';
import { ALL_PLATFORM_EVENTS, SUBSCRIPTION_EVENTS } from '../../../webhooks/subscription-events';
import {
  ZOOM_SIGNATURE_HEADER,
  ZOOM_TIMESTAMP_HEADER,
  signZoomRequest,
} from '../../../zoom/webhook-signature';
import { InboundAckDto, UrlValidationAnswerDto, ZoomEventDto } from '../../dto/zoom-event.dto';
import { PLATFORM_EVENT_EXAMPLES } from '../../dto/zoom-event.examples';
import { EVENT_MAPPING } from '../../event-mapping';
import type { InboundAck } from '../../inbound.service';
import type { CrcAnswer } from './crc-challenge';
import { WebhookReceiver } from './webhook-receiver';

/** The platform's event endpoint: served by this controller and by the fast path alike. */
export const ZOOM_EVENTS_PATH = 'zoom/events';
const ZOOM_EVENTS_URL = /^\/zoom\/events\/?(?:\?|$)/i;

const EXAMPLE_TIMESTAMP = '1735725605';
// A real signature (secret token `your_secret_token`) of the first example body as Swagger UI
// sends it, so the example has the signature's true form.
const EXAMPLE_SIGNATURE = signZoomRequest(
  'your_secret_token',
  EXAMPLE_TIMESTAMP,
  Buffer.from(
    JSON.stringify(
      (Object.values(PLATFORM_EVENT_EXAMPLES)[0] as { value?: unknown }).value,
      null,
      2,
    ),
  ),
);

/** The body parser for this route keeps raw bytes (src/bootstrap.ts); matched as Express routes. */
export const isZoomEventsRequest = (req: IncomingMessage): boolean =>
  req.method === 'POST' && ZOOM_EVENTS_URL.test(req.url ?? '');

const MAPPING_TABLE = Object.entries(EVENT_MAPPING)
  .map(
    ([event, route]) =>
      `| \`${event}\` | ${'kind' in route ? `\`${route.kind}\`${route.approval ? ' (approval rules)' : ''}` : 'recording automation → `operation.complete` / `operation.failed`'} |`,
  )
  .join('\n');

@ApiTags('inbound')
@Controller()
export class WebhookController {
  constructor(
    private readonly receiver: WebhookReceiver,
    @Optional() private readonly tracing: Tracing = Tracing.off,
  ) {}

  @Post(ZOOM_EVENTS_PATH)
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Event notification endpoint of the platform (Zoom) app',
    description:
      'Verified before anything else: `x-zm-signature` must be `v0=` + hex HMAC-SHA256(secret ' +
      'token, `v0:{x-zm-request-timestamp}:{raw body}`) and the timestamp within ' +
      '`ZOOM_WEBHOOK_TOLERANCE_SECONDS` of now; otherwise 401 and nothing is stored. ' +
      '`endpoint.url_validation` is answered with `plainToken` and `encryptedToken`. Any other ' +
      'event is stored (de-duplicated on its identity: a redelivery is acknowledged as ' +
      '`duplicate` and not notified again) and answered at once; a mapped event is stored ' +
      'with its notification in the same statement, and delivery runs from the queue. The ' +
      'notifications that subscribers then receive are listed as ' +
      'callbacks, one per subscription event.\n\n| platform event | subscription event |\n|---|---|\n' +
      MAPPING_TABLE +
      '\n\nApproval rules: a registration publishes `follower.gained` when approved (at once, or ' +
      'by a later `registration_approved`), once per registrant and meeting (and occurrence); ' +
      '`registration_denied` and `registration_cancelled` publish `follower.lost` only for a ' +
      'registrant that had been gained.\n\nEvery stored event (mapped or not) is also delivered ' +
      "as it is, as `zoom.<event>` with the platform's `payload` as `data`, to the webhooks " +
      'subscribed to it or to `zoom.*`. `ZOOM_WEBHOOK_SECRET_TOKEN` may hold several ' +
      'comma-separated secret tokens; the URL validation is answered with the one that ' +
      'verified it. The `x-zm-trackingid` header is kept and sent on as `source.tracking_id`.',
  })
  @ApiHeader({
    name: ZOOM_SIGNATURE_HEADER,
    required: true,
    description: '`v0=` and 64 hex digits; the example signs the first example body',
    example: EXAMPLE_SIGNATURE,
  })
  @ApiHeader({ name: ZOOM_TIMESTAMP_HEADER, required: true, example: EXAMPLE_TIMESTAMP })
  @ApiBody({ type: ZoomEventDto, examples: PLATFORM_EVENT_EXAMPLES })
  @ApiExtraModels(UrlValidationAnswerDto, InboundAckDto)
  @ApiOkResponse({
    description: 'URL validation answer, or the event was stored (or already was)',
    schema: {
      oneOf: [
        { $ref: getSchemaPath(UrlValidationAnswerDto) },
        { $ref: getSchemaPath(InboundAckDto) },
      ],
    },
  })
  @ApiErrorResponse(400, {
    description:
      'correctly signed, but not JSON, not an event envelope (no `event`), or a URL ' +
      'validation without an object `payload`',
    examples: {
      'not JSON': { message: 'Request body is not valid JSON' },
      'not an envelope': {
        message: 'event must be a string of 1 to 200 characters',
        details: [{ field: 'event', message: 'event must be a string of 1 to 200 characters' }],
      },
    },
  })
  @ApiErrorResponse(401, {
    description: 'signature or timestamp missing, malformed, stale or wrong',
    example: { message: `${ZOOM_SIGNATURE_HEADER} does not match the request` },
  })
  @ApiErrorResponse(413, {
    description: 'body over 1 MiB',
    example: { message: 'Request body is larger than 1 MiB' },
  })
  @ApiErrorResponse(503, {
    description: 'ZOOM_WEBHOOK_SECRET_TOKEN unset, or the database is down: the platform retries',
    examples: {
      'not configured': {
        message: 'Inbound events are refused until ZOOM_WEBHOOK_SECRET_TOKEN is configured',
      },
      'database down': { message: 'Events cannot be stored right now; the platform will retry' },
    },
  })
  // What a webhook subscribed to them then receives; bridge.* and webhook.test are documented
  // on the routes that cause them.
  @ApiNotificationCallbacks(...SUBSCRIPTION_EVENTS, ALL_PLATFORM_EVENTS)
  async receive(@Req() req: RawBodyRequest<Request>): Promise<CrcAnswer | InboundAck> {
    const raw = Buffer.isBuffer(req.body) ? req.body : (req.rawBody ?? Buffer.alloc(0));
    // Compressed bodies come this way (src/inbound/sources/webhook/zoom-events.route.ts): the same root span.
    const span = this.tracing.startInbound();
    recordSpan(req, span);
    try {
      const answer = await this.receiver.receive(req.headers, raw, span);
      this.tracing.endServer(span, HttpStatus.OK);
      return answer;
    } catch (error) {
      this.tracing.endServer(
        span,
        error instanceof HttpException ? error.getStatus() : HttpStatus.INTERNAL_SERVER_ERROR,
      );
      throw error;
    }
  }
}

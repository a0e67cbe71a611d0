import { HttpStatus, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError } from '../common/api-error';
import { ZoomCall, ZoomClient, ZoomRawResult, ZoomTokenSource } from '../zoom/zoom.client';
import { AccountTokens } from '../accounts/account-tokens.service';
import { AccountsService } from '../accounts/accounts.service';
import { AuthenticatedClient } from '../auth/auth.types';
import { queryWithout } from '../zoom/zoom-operations';
import { ZoomResult } from '../zoom/zoom.types';
import { multipartFields } from './multipart-fields';
import { PathRules } from './path-rules';
import { PlatformOperation } from './platform-operations';
import { PlatformRequestValidator } from './request-validator';

/** The header that names an installed platform account (docs/accounts.md#passthrough). */
export const PLATFORM_ACCOUNT_HEADER = 'x-platform-account';

type RawBodyRequest = Request & { rawBody?: Buffer };

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The JSON bytes without a leading UTF-8 byte order mark: the body parser reads past one (and
 * so does validation), but the platform refuses such a body with a 500 of its own.
 */
const withoutBom = (bytes: Buffer): Buffer =>
  bytes.subarray(0, 3).equals(UTF8_BOM) ? bytes.subarray(3) : bytes;

const rawQueryOf = (req: Request): string => {
  const at = req.originalUrl.indexOf('?');
  return at < 0 ? '' : req.originalUrl.slice(at + 1);
};

const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/** The same limit as the JSON parser (docs/api.md#errors: bodies over 1 MiB → 413). */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The bytes of a body no parser took (the multipart uploads), read here with the same limit: an
 * oversized upload is refused as soon as it passes it, without reading the rest.
 */
async function readRaw(req: Request): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      throw new ApiError(HttpStatus.PAYLOAD_TOO_LARGE, 'Request body is larger than 1 MiB');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const mediaType = (value: string | undefined): string =>
  (value ?? '').split(';')[0].trim().toLowerCase();

/**
 * Passes a request on to a platform operation (docs/api.md#platform-passthrough): validated first against the
 * operation's own schemas, then sent with every query parameter and body field as the caller
 * wrote them (`localQuery` excepted: parameters this service answers itself). `pathRules` are
 * those of the module that mounts the operation, applied to its path parameters.
 */
@Injectable()
export class PlatformPassthrough {
  constructor(
    private readonly zoom: ZoomClient,
    private readonly validator: PlatformRequestValidator,
    private readonly accounts: AccountsService,
    private readonly accountTokens: AccountTokens,
  ) {}

  /**
   * `x-platform-account` (docs/accounts.md#passthrough): that installed account's tokens, for a
   * caller that holds the account (else 403); without it, the server-to-server credentials.
   */
  private async tokensFor(req: Request): Promise<ZoomTokenSource | undefined> {
    const header = req.headers[PLATFORM_ACCOUNT_HEADER];
    if (header === undefined) return undefined;
    const accountId = Array.isArray(header) ? header[0] : header;
    if (!/^[A-Za-z0-9._-]{1,128}$/.test(accountId)) {
      throw ApiError.validation([
        {
          field: PLATFORM_ACCOUNT_HEADER,
          message: `${PLATFORM_ACCOUNT_HEADER} is not an account id`,
        },
      ]);
    }
    const client = (req as Request & { client?: AuthenticatedClient }).client;
    if (!client || !(await this.accounts.holds(client.clientId, accountId))) {
      throw new ApiError(
        HttpStatus.FORBIDDEN,
        `This client does not hold platform account ${accountId}`,
      );
    }
    return {
      get: () => this.accountTokens.get(accountId),
      invalidate: (token) => this.accountTokens.invalidate(accountId, token),
    };
  }

  /** The platform's answer as bytes. */
  async forward(op: PlatformOperation, req: Request, pathRules: PathRules): Promise<ZoomRawResult> {
    return this.zoom.forward(op, await this.prepare(op, req, pathRules, []));
  }

  /** The platform's answer parsed, for routes that work on it before answering. */
  async call<T>(
    op: PlatformOperation,
    req: Request,
    pathRules: PathRules,
    localQuery: readonly string[],
  ): Promise<ZoomResult<T>> {
    return this.zoom.call<T>(op, await this.prepare(op, req, pathRules, localQuery));
  }

  private async prepare(
    op: PlatformOperation,
    req: Request,
    pathRules: PathRules,
    localQuery: readonly string[],
  ): Promise<ZoomCall> {
    const rawQuery = rawQueryOf(req);
    const params = Object.fromEntries(
      op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, String(req.params[p.name])]),
    );
    const body = await this.bodyOf(op, req as RawBodyRequest);
    this.validator.validate(
      op,
      { params, query: new URLSearchParams(rawQuery), body: body?.parsed },
      pathRules,
      localQuery,
    );
    return {
      tokens: await this.tokensFor(req),
      params,
      pathRules,
      query: queryWithout(rawQuery, localQuery),
      body: body && { contentType: body.contentType, bytes: body.bytes },
    };
  }

  /**
   * The body to validate and to send: JSON as its exact bytes (numbers beyond 2^53 and key
   * order survive), multipart as received (validated by its parts). Operations without a body
   * send none.
   */
  private async bodyOf(
    op: PlatformOperation,
    req: RawBodyRequest,
  ): Promise<{ parsed: unknown; contentType: string; bytes: Buffer | string } | undefined> {
    if (!op.body || !hasBody(req)) return undefined;
    const expected = op.body.contentType;
    const given = req.headers['content-type'];
    if (mediaType(given) !== expected) {
      throw new ApiError(
        HttpStatus.UNSUPPORTED_MEDIA_TYPE,
        `Content-Type must be ${expected} for ${op.method} ${op.path}`,
      );
    }
    if (expected === 'application/json') {
      return {
        parsed: req.body as unknown,
        contentType: 'application/json',
        bytes: req.rawBody ? withoutBom(req.rawBody) : JSON.stringify(req.body),
      };
    }
    const bytes = await readRaw(req);
    const parsed = await multipartFields(given as string, bytes).catch((error: Error) => {
      throw ApiError.validation([
        { field: 'body', message: `body is not multipart/form-data (${error.message})` },
      ]);
    });
    return { parsed, contentType: given as string, bytes };
  }
}

/** Answers with the platform's status, tracking and rate-limit headers, and its bytes. */
export function sendPlatformAnswer(res: Response, result: ZoomRawResult): void {
  res.status(result.status);
  for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
  if (result.body.length === 0 || result.status === HttpStatus.NO_CONTENT) {
    res.end();
    return;
  }
  res.setHeader('content-type', result.contentType ?? 'application/json');
  res.send(result.body);
}

/** Answers with the platform's status, tracking and rate-limit headers, and `body` as JSON. */
export function sendPlatformJson(res: Response, result: ZoomResult): void {
  res.status(result.status);
  for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
  if (result.body === undefined) res.end();
  else res.json(result.body);
}

import { HttpStatus, Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../common/api-error';
import { decodeCursor, toPage } from '../common/cursor';
import { DEFAULT_PAGE_LIMIT } from '../common/page-query';
import { UUID_PATTERN } from '../common/uuid-param';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { CustomHeaders, maskHeaders } from './custom-headers';
import { brokerHeaderProblem, brokerProblem } from '../destinations/destination-rules';
import { DESTINATIONS, Destination, HTTP_DESTINATION } from '../destinations/registry';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { UpdateWebhookDto } from './dto/update-webhook.dto';
import { secretHint } from './dto/webhook-fields';
import { WebhookListResponse, WebhookResponse } from './dto/webhook.response';
import { FilterError, compileFilter } from './event-filter';
import { SecretCipherService } from './secret-cipher.service';
import { UrlPolicyError, checkWebhookUrl } from '../destinations/http/ssrf-policy';
import { WebhookEntity } from './webhook.entity';
import type { ChatTool } from '../destinations/chat/chat-tool';
import {
  DestinationFields,
  SecretReplacement,
  WebhookChanges,
  WebhookStore,
} from './webhook.store';

/**
 * A chat webhook's address as answers and logs show it: scheme, host and the last four
 * characters; the rest (the tool's token) never leaves the service.
 */
export function maskChatUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}/****${url.slice(-4)}`;
}

const UPDATABLE = [
  'template',
  'url',
  'events',
  'secret',
  'active',
  'max_in_flight',
  'rate_limit',
  'destination',
  'filter',
  'headers',
  'ordering',
] as const;

const notFound = () => new ApiError(HttpStatus.NOT_FOUND, 'Webhook not found');

/** Constant-time equality of two secrets, whatever their lengths. */
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * The subscriptions of API clients. Every read and write is scoped to the calling client:
 * another client's webhook is indistinguishable from an absent one. URLs and secrets are
 * not logged (a URL may carry a token of its own).
 */
@Injectable()
export class WebhooksService {
  private readonly logger = new Logger(WebhooksService.name);

  constructor(
    private readonly webhooks: WebhookStore,
    private readonly cipher: SecretCipherService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(ownerClientId: string, dto: CreateWebhookDto): Promise<WebhookEntity> {
    const destination = dto.destination ?? HTTP_DESTINATION;
    const url = await this.checkDestination(ownerClientId, destination, dto.url, undefined);
    this.checkBrokerHeaders(destination, dto.headers ?? null);
    const limit = this.config.webhooks.perClient;
    const webhook = await this.webhooks.create(
      {
        ownerClientId,
        ...this.urlColumns(destination, url),
        template: dto.template ?? null,
        events: dto.events,
        ...this.sealSecret(dto.secret),
        active: true,
        destination,
        ...this.filterColumns(dto.filter ?? null),
        ...this.headerColumns(dto.headers ?? null),
        maxInFlight: dto.max_in_flight ?? null,
        rateLimit: dto.rate_limit ?? null,
        ordering: dto.ordering ?? 'none',
      },
      limit,
    );
    if (!webhook) {
      throw new ApiError(
        HttpStatus.CONFLICT,
        `A client may hold at most ${limit} webhooks (WEBHOOKS_PER_CLIENT); delete one first`,
      );
    }
    this.logger.log(`webhook ${webhook.id} created by ${ownerClientId}`);
    return this.withDefaults(webhook);
  }

  /** Newest first, by (created_at, id) so that rows of the same millisecond keep one order. */
  async list(
    ownerClientId: string,
    query: { limit?: number; cursor?: string },
  ): Promise<WebhookListResponse> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const after = decodeCursor(query.cursor);
    const rows = await this.webhooks.page(ownerClientId, after, limit);
    return toPage(rows, limit, (webhook) => WebhookResponse.from(this.withDefaults(webhook)));
  }

  /** The caller's webhook `id`; 404 when it is absent or belongs to another client. */
  async findOwned(ownerClientId: string, id: string): Promise<WebhookEntity> {
    if (!UUID_PATTERN.test(id)) throw notFound();
    const webhook = await this.webhooks.findOwned(ownerClientId, id);
    if (!webhook) throw notFound();
    return this.withDefaults(webhook);
  }

  async update(ownerClientId: string, id: string, dto: UpdateWebhookDto): Promise<WebhookEntity> {
    const fields = UPDATABLE.filter((field) => dto[field] !== undefined);
    if (fields.length === 0) {
      throw ApiError.validation([
        { field: 'body', message: `body must set at least one of ${UPDATABLE.join(', ')}` },
      ]);
    }
    let url: Pick<WebhookEntity, 'url' | 'urlEncrypted'> | undefined;
    if (dto.url !== undefined || dto.destination !== undefined || dto.headers !== undefined) {
      // Whether a url or a header fits depends on the destination, given here or stored.
      const current = await this.findOwned(ownerClientId, id);
      const destination = dto.destination ?? current.destination;
      if (dto.url !== undefined || dto.destination !== undefined) {
        const keptUrl = dto.destination === undefined ? undefined : this.storedUrl(current);
        url = this.urlColumns(
          destination,
          await this.checkDestination(ownerClientId, destination, dto.url, keptUrl, current),
        );
      }
      this.checkBrokerHeaders(
        destination,
        dto.headers !== undefined ? dto.headers : this.storedHeaders(current),
      );
    }
    const secret =
      dto.secret === undefined ? undefined : await this.replacement(ownerClientId, id, dto.secret);
    const changes: WebhookChanges = {
      ...url,
      ...(dto.destination !== undefined && { destination: dto.destination }),
      ...(dto.filter !== undefined && this.filterColumns(dto.filter)),
      ...(dto.headers !== undefined && this.headerColumns(dto.headers)),
      ...(dto.events !== undefined && { events: dto.events }),
      ...(secret && { secret }),
      ...(dto.active !== undefined && { active: dto.active }),
      ...(dto.max_in_flight !== undefined && { maxInFlight: dto.max_in_flight }),
      ...(dto.rate_limit !== undefined && { rateLimit: dto.rate_limit }),
      ...(dto.ordering !== undefined && { ordering: dto.ordering }),
      ...(dto.template !== undefined && { template: dto.template }),
      // Enabling clears why the service disabled it and starts the failure count afresh.
      ...(dto.active === true && {
        disabledReason: null,
        disabledAt: null,
        consecutiveFailures: 0,
      }),
    };
    // One statement both checks ownership and writes, so a foreign id changes nothing.
    if (Object.keys(changes).length > 0) {
      if (!(await this.webhooks.update(ownerClientId, id, changes))) throw notFound();
    }
    const rotation = secret?.previousUntil
      ? `; the replaced secret signs too until ${secret.previousUntil.toISOString()}`
      : '';
    this.logger.log(`webhook ${id} updated by ${ownerClientId}: ${fields.join(', ')}${rotation}`);
    return this.findOwned(ownerClientId, id);
  }

  async remove(ownerClientId: string, id: string): Promise<void> {
    if (!(await this.webhooks.remove(ownerClientId, id))) throw notFound();
    this.logger.log(`webhook ${id} deleted by ${ownerClientId}`);
  }

  /**
   * The change a PATCHed secret makes (docs/receiving.md): the current secret keeps signing for
   * WEBHOOK_SECRET_GRACE_SECONDS. Undefined when it is the current secret already: sent again
   * (a configuration tool re-applying it), it must not push out the previous one. A current
   * secret that no longer decrypts (SECRETS_ENCRYPTION_KEY changed) is dropped at once.
   */
  private async replacement(
    ownerClientId: string,
    id: string,
    secret: string,
  ): Promise<SecretReplacement | undefined> {
    const current = this.readSecret(await this.findOwned(ownerClientId, id));
    if (current !== null && sameSecret(current, secret)) return undefined;
    const graceMs = this.config.webhookSecretGraceSeconds * 1000;
    return {
      ...this.sealSecret(secret),
      previousUntil: current !== null && graceMs > 0 ? new Date(Date.now() + graceMs) : null,
    };
  }

  /** As shown: a max_in_flight never set is the service default, whatever it is now. */
  private withDefaults(webhook: WebhookEntity): WebhookEntity {
    return {
      ...webhook,
      maxInFlight: webhook.maxInFlight ?? this.config.delivery.concurrencyPerWebhook,
    };
  }

  private readSecret(webhook: WebhookEntity): string | null {
    try {
      return this.cipher.decrypt(webhook.secretEncrypted);
    } catch (error) {
      this.logger.warn(
        `webhook ${webhook.id}: the current secret cannot be decrypted (${(error as Error).message}); ` +
          'it is replaced without a grace',
      );
      return null;
    }
  }

  private sealSecret(secret: string): Pick<WebhookEntity, 'secretEncrypted' | 'secretHint'> {
    return {
      secretEncrypted: this.cipher.encrypt(secret),
      secretHint: secretHint(secret),
    };
  }

  /**
   * The url a webhook with `destination` stores: the one given (or, when only the destination
   * changes, the one it had) for http, checked by the URL policy; none for a broker, whose
   * name must be configured with its type.
   */
  private async checkDestination(
    ownerClientId: string,
    destination: Destination,
    given: string | undefined,
    kept: string | undefined,
    /** The webhook a PATCH changes: a body that does not fit what it stores is a conflict. */
    current?: WebhookEntity,
  ): Promise<string | null> {
    // docs/api.md: a body valid by the document but not for this webhook's stored destination
    // (a url for a broker webhook, an http destination for one without a url) is 409; the
    // document states the 400s a body alone causes.
    const refuse = (message: string) =>
      current
        ? new ApiError(HttpStatus.CONFLICT, message, { details: [{ field: 'url', message }] })
        : ApiError.validation([{ field: 'url', message }]);
    if (DESTINATIONS.broker(destination.type) === undefined) {
      const url = given ?? kept;
      if (url === undefined) {
        throw refuse(
          `url is required for an ${destination.type} destination` +
            (current ? ' (this webhook has none: give one)' : ''),
        );
      }
      const chat = DESTINATIONS.chat(destination.type);
      if (chat !== undefined) this.assertChatUrl(url, chat, refuse);
      else await this.assertUrlAllowed(url);
      return url;
    }
    if (given !== undefined) {
      // The destination is the stored one (the body gave none): the body itself is fine.
      const stored = current !== undefined && destination === current.destination;
      const message = `url must not be given for a ${destination.type} destination (it names a broker instead)`;
      throw stored
        ? refuse(`${message}: this webhook's destination is ${destination.type}`)
        : ApiError.validation([{ field: 'url', message }]);
    }
    const problem = brokerProblem(destination, this.config.destinationBrokers, ownerClientId);
    if (problem !== null) throw ApiError.validation([problem]);
    return null;
  }

  /** A broker destination's custom headers: none that its broker acts on (docs/destinations.md). */
  private checkBrokerHeaders(destination: Destination, headers: CustomHeaders | null): void {
    const problem = brokerHeaderProblem(destination.type, Object.keys(headers ?? {}));
    if (problem !== null) throw ApiError.validation([problem]);
  }

  /**
   * The headers a webhook has, for a PATCH that moves it to a broker without giving them.
   * Headers that no longer decrypt (SECRETS_ENCRYPTION_KEY changed) are never sent: none.
   */
  private storedHeaders(webhook: WebhookEntity): CustomHeaders | null {
    if (webhook.headersEncrypted === null) return null;
    try {
      return JSON.parse(
        this.cipher.decrypt(webhook.headersEncrypted, 'webhook-headers'),
      ) as CustomHeaders;
    } catch {
      return null;
    }
  }

  /**
   * The stored forms of a filter the DTO rule has already checked, with its numbers as sent
   * (filterAsSent): one that JavaScript could not hold may still be refused here.
   * Null removes it.
   */
  private filterColumns(
    filter: Record<string, unknown> | null,
  ): Pick<WebhookEntity, 'filter' | 'filterPath' | 'filterVars'> {
    if (filter === null) return { filter: null, filterPath: null, filterVars: null };
    let compiled;
    try {
      compiled = compileFilter(filter);
    } catch (error) {
      if (error instanceof FilterError) {
        throw ApiError.validation([{ field: 'filter', message: error.message }]);
      }
      throw error;
    }
    return { filter, filterPath: compiled.jsonpath, filterVars: compiled.vars };
  }

  /** Custom headers sealed, and masked for answers; null or {} removes them. */
  private headerColumns(
    headers: CustomHeaders | null,
  ): Pick<WebhookEntity, Extract<DestinationFields, 'headersEncrypted' | 'headersMasked'>> {
    if (headers === null || Object.keys(headers).length === 0) {
      return { headersEncrypted: null, headersMasked: null };
    }
    return {
      headersEncrypted: this.cipher.encrypt(JSON.stringify(headers), 'webhook-headers'),
      headersMasked: maskHeaders(headers),
    };
  }

  /**
   * A chat webhook's address: the tool's own host (or one of CHAT_EXTRA_HOSTS). Not resolved
   * here: the tools' hosts are public names, and every attempt checks the address again as for
   * http (the URL policy).
   */
  private assertChatUrl(url: string, chat: ChatTool, refuse: (message: string) => Error): void {
    const parsed = new URL(url);
    // `host:port` takes that port only; a bare `host` any port of it.
    const extra = this.config.chat.extraHosts;
    if (extra.includes(parsed.host.toLowerCase()) || extra.includes(parsed.hostname.toLowerCase()))
      return;
    const problem = chat.urlProblem(parsed);
    if (problem !== null) throw refuse(problem);
  }

  /** What a webhook stores of its url: a chat address sealed and masked, any other as it is. */
  private urlColumns(
    destination: Destination,
    url: string | null,
  ): Pick<WebhookEntity, 'url' | 'urlEncrypted'> {
    if (url === null || DESTINATIONS.chat(destination.type) === undefined) {
      return { url, urlEncrypted: null };
    }
    return { url: maskChatUrl(url), urlEncrypted: this.cipher.encrypt(url, 'webhook-url') };
  }

  /** The address a webhook has, unmasked; undefined when it has none or it no longer decrypts. */
  private storedUrl(webhook: WebhookEntity): string | undefined {
    if (webhook.urlEncrypted === null) return webhook.url ?? undefined;
    try {
      return this.cipher.decrypt(webhook.urlEncrypted, 'webhook-url');
    } catch {
      return undefined;
    }
  }

  private async assertUrlAllowed(url: string): Promise<void> {
    try {
      await checkWebhookUrl(url, { allowPrivate: this.config.webhookAllowPrivateUrls });
    } catch (error) {
      if (error instanceof UrlPolicyError) {
        throw ApiError.validation([{ field: 'url', message: error.message }]);
      }
      throw error;
    }
  }
}

import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { builtInMessage } from '../destinations/chat/chat-tool';
import { DESTINATIONS } from '../destinations/registry';
import { InlineTemplates } from './inline-templates';
import { TemplateRunner } from './template-runner';

/** What a delivery is to send: its shaped bytes (null: the notification body as it is), or why none. */
export type Shaped = { ok: true; body: string | null } | { ok: false; error: string };

/** What shapes a delivery: its destination type and its webhook's template. */
export interface ShapingRules {
  destinationType: string;
  /** The webhook's template (docs/templates.md); null or absent: none. */
  template?: string | null;
}

/** A delivery as shaping sees it: its notification body, and the bytes it was first sent if any. */
export interface DeliveryToShape extends ShapingRules {
  body: string;
  /** What its first shaped attempt sent (null or absent: none yet). */
  sentBody?: string | null;
}

/** The bytes an attempt sends (`stored`: to be kept with its record), or why it sends none. */
export type AttemptBytes =
  { ok: true; body: string; stored: boolean } | { ok: false; error: string };

/**
 * Payload shaping: the one step between a notification body (docs/api.md#notifications) and the
 * bytes that are signed and sent. Today its rules are a webhook's template (docs/templates.md)
 * and, for a chat destination without one, the tool's built-in message
 * (docs/destinations.md#chat-tools); a next rule lives here too, so that every attempt, the
 * signature, the delivery log and a redelivery keep seeing one set of bytes.
 */
@Injectable()
export class ShapingService implements OnApplicationShutdown {
  private readonly runner: TemplateRunner;
  private readonly inline = new InlineTemplates();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.runner = new TemplateRunner(config.templateTimeoutMs);
  }

  /** Whether a delivery under `rules` is shaped at all (else it sends its body as it is). */
  static shapes(rules: ShapingRules): boolean {
    return (
      (rules.template ?? null) !== null || DESTINATIONS.chat(rules.destinationType) !== undefined
    );
  }

  /**
   * The bytes a delivery of notification body `body` (JSON text) sends. A failing template
   * gives an error beginning `template:`; the same body would fail the same way, so it is
   * final (no retries).
   */
  async shape(rules: ShapingRules, body: string): Promise<Shaped> {
    const output = await this.output(rules, body);
    return output.ok ? { ok: true, body: output.json } : output;
  }

  /**
   * The bytes an attempt of `delivery` sends: those it was first sent when it was shaped before
   * (a redelivery sends them again), else its body shaped now, to be kept (`stored`) with the
   * attempt's record; a delivery that is not shaped sends its body.
   */
  async attemptBytes(delivery: DeliveryToShape): Promise<AttemptBytes> {
    if (delivery.sentBody) return { ok: true, body: delivery.sentBody, stored: false };
    if (!ShapingService.shapes(delivery)) return { ok: true, body: delivery.body, stored: false };
    const shaped = await this.shape(delivery, delivery.body);
    if (!shaped.ok) return shaped;
    return { ok: true, body: shaped.body ?? delivery.body, stored: shaped.body !== null };
  }

  /**
   * The output of `rules` for `body`, as JSON text: the template's, the built-in message, or the
   * body itself.
   */
  async output(
    rules: ShapingRules,
    body: string,
  ): Promise<{ ok: true; json: string } | { ok: false; error: string }> {
    const chat = DESTINATIONS.chat(rules.destinationType);
    const template = rules.template ?? null;
    if (template === null) {
      if (chat === undefined) return { ok: true, json: body };
      return { ok: true, json: JSON.stringify(builtInMessage(chat, JSON.parse(body))) };
    }
    // In this process when it can be bounded here, else in the evaluators (docs/templates.md).
    const result =
      (await this.inline.render(template, body)) ?? (await this.runner.render(template, body));
    if (!result.ok) return { ok: false, error: `template: ${result.error}` };
    if (chat !== undefined) {
      const refusal = chat.refusal(JSON.parse(result.json));
      if (refusal !== null) {
        const label = DESTINATIONS.get(rules.destinationType)!.label;
        return { ok: false, error: `template: ${label} would refuse the message: ${refusal}` };
      }
    }
    return result;
  }

  onApplicationShutdown(): Promise<void> {
    return this.runner.close();
  }
}

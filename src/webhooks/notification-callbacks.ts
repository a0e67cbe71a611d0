import { ApiCallbacks, OpenAPIObject } from '@nestjs/swagger';
import type {
  CallbacksObject,
  OperationObject,
  PathItemObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { EVENT_TYPES } from './event-catalog';

const pascal = (name: string) =>
  name
    .split(/[._]/)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');

/** Swagger's name of an event catalog entry's body: JobStartedNotification, ZoomNotification. */
export const notificationSchemaName = (name: string): string =>
  `${pascal(name.replace(/\.\*$/, ''))}Notification`;

/**
 * Documents, as callbacks of the operation it decorates, the notifications of the event catalog
 * entries `names` that a subscribed webhook then receives (their bodies: addNotificationSchemas).
 */
export function ApiNotificationCallbacks(...names: string[]): MethodDecorator {
  return ApiCallbacks(
    ...names.map((name) => ({
      name,
      callbackUrl: '{subscribed webhook url}',
      method: 'post',
      requestBody: { type: notificationSchemaName(name) },
      expectedResponse: {
        status: 200,
        description: 'any 2xx within DELIVERY_TIMEOUT_MS: delivered',
      },
    })),
  );
}

/**
 * What @nestjs/swagger cannot say of a callback: its summary, that it carries no bearer token
 * (the receiver checks the signature headers), and how its answers are read (docs/api.md,
 * "Receiver health").
 */
function describeCallback(name: string, operation: OperationObject): void {
  const type = EVENT_TYPES.find((t) => t.name === name);
  operation.summary = `The ${name} notification, sent to each subscribed webhook`;
  if (type) operation.description = type.description;
  operation.security = [];
  operation.responses['410'] = {
    description: 'Gone: the webhook is disabled at once, and nothing more is sent to it',
  };
  operation.responses.default = {
    description:
      'Any other answer, or none within DELIVERY_TIMEOUT_MS: retried with backoff (a ' +
      'Retry-After on 429 or 503 is honoured)',
  };
}

/** Adds to every callback in the built document what describeCallback says. */
export function describeCallbacks(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, OperationObject>)) {
      const callbacks = (operation.callbacks ?? {}) as CallbacksObject;
      for (const [name, callback] of Object.entries(callbacks)) {
        for (const target of Object.values(callback as Record<string, PathItemObject>)) {
          if (target.post) describeCallback(name, target.post);
        }
      }
    }
  }
}

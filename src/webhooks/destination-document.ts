import type { OpenAPIObject } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { BrokerConfig } from '../config/config.types';
import { DESTINATIONS } from '../destinations/registry';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { UpdateWebhookDto } from './dto/update-webhook.dto';

type Properties = Record<string, SchemaObject>;

/** The destination type a oneOf branch stands for (`properties.type.enum[0]`), if it names one. */
const typeOf = (branch: SchemaObject): unknown =>
  (branch.properties as Properties | undefined)?.type?.enum?.[0];

/**
 * docs/destinations.md: which brokers a destination may name is this deployment's
 * DESTINATION_BROKERS, so the document is written per deployment: each broker destination's
 * `broker` is an enum of the configured brokers of its type, and a broker type with none is no
 * branch of the request bodies' oneOf. A request valid by the document then names a broker the
 * service has. Answers keep every type: a webhook outlives a change of configuration.
 */
export function stateConfiguredBrokers(document: OpenAPIObject, brokers: BrokerConfig[]): void {
  const namesOf = (type: unknown): string[] =>
    brokers.filter((b) => b.type === type).map((b) => b.name);
  const needsBroker = (type: unknown): boolean =>
    typeof type === 'string' && DESTINATIONS.broker(type) !== undefined;
  const offered = (type: unknown): boolean => !needsBroker(type) || namesOf(type).length > 0;
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaObject>;
  for (const name of [CreateWebhookDto.name, UpdateWebhookDto.name]) {
    const schema = schemas[name];
    const destination = (schema?.properties as Properties | undefined)?.destination;
    if (!destination?.oneOf) continue;
    destination.oneOf = (destination.oneOf as SchemaObject[])
      .filter((branch) => offered(typeOf(branch)))
      .map((branch) => {
        const type = typeOf(branch);
        if (!needsBroker(type)) return branch;
        const properties = branch.properties as Properties;
        return {
          ...branch,
          properties: { ...properties, broker: { type: 'string', enum: namesOf(type) } },
        };
      });
    // The bodies' own rules of which of url and destination a body needs, by type: POST's
    // oneOf, PATCH's not.
    const offeredIn = (rule: SchemaObject): boolean => {
      const destination = (rule.properties as Properties | undefined)?.destination;
      const type = (destination?.properties as Properties | undefined)?.type;
      if (type?.enum) type.enum = type.enum.filter(offered);
      return type?.enum === undefined || type.enum.length > 0;
    };
    if (schema.oneOf) schema.oneOf = (schema.oneOf as SchemaObject[]).filter(offeredIn);
    if (schema.not && !offeredIn(schema.not as SchemaObject)) delete schema.not;
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import { ApiClientConfig, AppConfig } from '../config/config.types';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** The API clients of AUTH_CLIENTS; secrets are checked in constant time. */
@Injectable()
export class ApiClientsService {
  private readonly clients: Map<string, ApiClientConfig>;
  // Compared against when the client id is unknown, so both paths cost the same.
  private readonly decoy = digest('decoy-secret-for-unknown-clients');

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.clients = new Map(config.auth.clients.map((c) => [c.clientId, c]));
  }

  verify(clientId: string, clientSecret: string): ApiClientConfig | null {
    const client = this.clients.get(clientId);
    const expected = client ? digest(client.clientSecret) : this.decoy;
    const matches = timingSafeEqual(expected, digest(clientSecret));
    return client && matches ? client : null;
  }

  /** The first candidate pair (see basicCredentials) that verifies, or null. */
  verifyAny(candidates: [string, string][]): ApiClientConfig | null {
    return candidates.reduce<ApiClientConfig | null>(
      (found, [id, secret]) => found ?? this.verify(id, secret),
      null,
    );
  }
}

import { HttpStatus, Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { ApiError } from '../common/api-error';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { SecretCipherService } from '../webhooks/secret-cipher.service';
import { tokensToStore } from './account-tokens.service';
import { InstallationStore, StoredTokens } from './installation.store';
import { GrantRefused, PlatformOAuthClient, missingAppCredentials } from './platform-oauth.client';

/** How long an install URL's state can be used (docs/accounts.md#installing). */
export const STATE_TTL_MS = 10 * 60_000;

const base64url = (bytes: Buffer): string => bytes.toString('base64url');
/** Only a hash of a state is stored: a read of the table cannot finish someone's install. */
export const stateHash = (state: string): string =>
  createHash('sha256').update(state, 'utf8').digest('hex');
/** RFC 7636 S256: BASE64URL(SHA256(ASCII(code_verifier))). */
export const codeChallenge = (verifier: string): string =>
  base64url(createHash('sha256').update(verifier, 'ascii').digest());

/** A callback that cannot install: the page names `problem`, nothing is stored. */
export class CallbackRefused extends Error {
  constructor(readonly problem: string) {
    super(problem);
  }
}

const STATE_PROBLEMS = {
  unknown: 'The install link is unknown: start the install again.',
  used: 'The install link was already used: start the install again.',
  expired: 'The install link expired (after 10 minutes): start the install again.',
} as const;

/**
 * The install flow (docs/accounts.md#installing): an authorize URL with a single-use state
 * bound to the asking client and a PKCE S256 challenge; then the callback, which takes the
 * state once, exchanges the code with its verifier, learns the account from /users/me and
 * stores the installation. No code, token or state is ever logged.
 */
@Injectable()
export class InstallFlow {
  private readonly logger = new Logger(InstallFlow.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: InstallationStore,
    private readonly cipher: SecretCipherService,
    private readonly oauth: PlatformOAuthClient,
  ) {}

  /** 503 naming the unset variables while the app is not configured. */
  requireConfigured(): void {
    const missing = missingAppCredentials(this.config);
    if (missing.length > 0) {
      throw new ApiError(
        HttpStatus.SERVICE_UNAVAILABLE,
        `Installing platform accounts is not configured: set ${missing.join(', ')}`,
      );
    }
  }

  async start(clientId: string): Promise<{ installUrl: string; expiresAt: Date }> {
    this.requireConfigured();
    const state = base64url(randomBytes(32));
    const verifier = base64url(randomBytes(48));
    const expiresAt = new Date(Date.now() + STATE_TTL_MS);
    await this.store.saveState(
      stateHash(state),
      clientId,
      this.cipher.encrypt(verifier, 'pkce-verifier'),
      expiresAt,
    );
    // Old states go as new ones come: no job of its own for a table this small.
    await this.store.sweepStates();
    const url = new URL(`${this.config.zoom.oauthUrl}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.config.zoom.app.clientId as string,
      redirect_uri: this.config.zoom.app.redirectUrl as string,
      state,
      code_challenge: codeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    return { installUrl: url.href, expiresAt };
  }

  /** The callback's query; the installation stored, or CallbackRefused naming the problem. */
  async complete(params: Record<string, unknown>): Promise<StoredTokens> {
    const text = (name: string): string | null => {
      const value = params[name];
      return typeof value === 'string' && value !== '' ? value : null;
    };
    const missing = missingAppCredentials(this.config);
    if (missing.length > 0) {
      throw new CallbackRefused('Installing platform accounts is not configured on this service.');
    }
    const state = text('state');
    if (state === null) throw new CallbackRefused('The callback has no state.');
    const taken = await this.store.takeState(stateHash(state));
    if ('problem' in taken) throw new CallbackRefused(STATE_PROBLEMS[taken.problem]);
    const error = text('error');
    if (error !== null) {
      throw new CallbackRefused(`The platform did not authorize the install (${error}).`);
    }
    const code = text('code');
    if (code === null) throw new CallbackRefused('The callback has no code.');
    const verifier = this.cipher.decrypt(taken.verifierEncrypted, 'pkce-verifier');
    let tokens;
    try {
      tokens = await this.oauth.exchangeCode(code, verifier);
    } catch (err) {
      if (err instanceof GrantRefused) {
        throw new CallbackRefused(`The platform refused the authorization code (${err.reason}).`);
      }
      this.logger.warn(`install: the code exchange failed: ${(err as Error).message}`);
      throw new CallbackRefused('The platform could not be reached to finish the install.');
    }
    let accountId: string;
    try {
      accountId = await this.oauth.accountOf(tokens);
    } catch (err) {
      this.logger.warn(`install: reading /users/me failed: ${(err as Error).message}`);
      throw new CallbackRefused('The platform did not say which account was installed.');
    }
    const stored = await this.store.install(
      accountId,
      taken.clientId,
      tokensToStore(this.cipher, tokens),
    );
    this.logger.log(`platform account ${accountId} installed by client ${taken.clientId}`);
    return stored;
  }
}

import { Module } from '@nestjs/common';
import {
  OperationalEventStore,
  PgOperationalEventStore,
} from '../delivery-record/operational-events.store';
import { DispatcherModule } from '../dispatcher/publish/dispatcher.module';
import { OperationalEventsService } from '../dispatcher/operational-events/operational-events.service';
import { ZoomModule } from '../zoom/zoom.module';
import { AccountTokens } from './account-tokens.service';
import { AccountsService } from './accounts.service';
import { InstallationStore } from './installation.store';
import { PlatformOAuthClient } from './platform-oauth.client';

/**
 * Installed platform accounts (docs/accounts.md) for every role: the store, their tokens and
 * who holds them. No routes: AccountsModule serves them, passthrough and the workers import
 * this. Nest keeps one instance per process, so every importer shares one token cache.
 */
@Module({
  imports: [ZoomModule, DispatcherModule],
  providers: [
    InstallationStore,
    PlatformOAuthClient,
    AccountTokens,
    AccountsService,
    OperationalEventsService,
    { provide: OperationalEventStore, useClass: PgOperationalEventStore },
  ],
  exports: [InstallationStore, PlatformOAuthClient, AccountTokens, AccountsService],
})
export class AccountsCoreModule {}

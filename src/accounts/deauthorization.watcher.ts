import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { AccountsService } from './accounts.service';
import { InstallationStore } from './installation.store';

/** How often the worker looks for app_deauthorized events of installed accounts. */
export const DEAUTHORIZATION_POLL_MS = 1_000;

/**
 * The platform's app_deauthorized (docs/accounts.md#leaving) is received like every other
 * event, through every inbound source, and stored; this worker finds those of installed
 * accounts and lets them leave. Reading the stored events rather than hooking one source
 * means no source can miss it, and a worker that was down catches up when it starts.
 */
@Injectable()
export class DeauthorizationWatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DeauthorizationWatcher.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: InstallationStore,
    private readonly accounts: AccountsService,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One look; the accounts that left. */
  async check(): Promise<string[]> {
    const left: string[] = [];
    for (const { accountId, at } of await this.store.deauthorizedAccounts(
      this.config.zoom.app.clientId,
    )) {
      if (await this.accounts.deauthorized(accountId, at)) left.push(accountId);
    }
    return left;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.check()
        .then(
          () => undefined,
          (error: Error) => this.logger.error(`app_deauthorized check failed: ${error.message}`),
        )
        .finally(() => {
          this.running = undefined;
          this.schedule();
        });
    }, DEAUTHORIZATION_POLL_MS);
  }
}

import { Module } from '@nestjs/common';
import { AccountsCoreModule } from './accounts-core.module';
import { DeauthorizationWatcher } from './deauthorization.watcher';

/** Worker role: installed accounts leave when the platform's app_deauthorized arrives. */
@Module({
  imports: [AccountsCoreModule],
  providers: [DeauthorizationWatcher],
})
export class AccountsWorkerModule {}

import { Module } from '@nestjs/common';
import { AccountsCoreModule } from './accounts-core.module';
import { AccountsController } from './accounts.controller';
import { InstallFlow } from './install-flow.service';
import { OAuthCallbackController } from './oauth-callback.controller';

/** API role: /api/platform and the install callback (docs/accounts.md). */
@Module({
  imports: [AccountsCoreModule],
  controllers: [AccountsController, OAuthCallbackController],
  providers: [InstallFlow],
})
export class AccountsModule {}

import { Global, Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { ApiClientsService } from './api-clients.service';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { AuthController } from './auth.controller';
import { BearerGuard } from './bearer.guard';
import { ClientCredentialsService } from './client-credentials.service';
import { TokenService } from './token.service';

/**
 * Global so that any controller can use @RequireScopes() without importing this module; the
 * queue dashboard authenticates clients through the token endpoint's ClientCredentialsService.
 */
@Global()
@Module({
  imports: [JwtModule.register({})],
  controllers: [AuthController],
  providers: [
    ApiClientsService,
    AuthFailureLimiter,
    ClientCredentialsService,
    TokenService,
    BearerGuard,
  ],
  exports: [TokenService, BearerGuard, ClientCredentialsService],
})
export class AuthModule {}

import { Global, Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { ApiClientsService } from './api-clients.service';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { AuthController } from './auth.controller';
import { BearerGuard } from './bearer.guard';
import { TokenService } from './token.service';

/**
 * Global so that any controller can use @RequireScopes() without importing this module; the
 * queue dashboard authenticates with the same clients and failure limit as the token endpoint.
 */
@Global()
@Module({
  imports: [JwtModule.register({})],
  controllers: [AuthController],
  providers: [ApiClientsService, AuthFailureLimiter, TokenService, BearerGuard],
  exports: [TokenService, BearerGuard, ApiClientsService, AuthFailureLimiter],
})
export class AuthModule {}

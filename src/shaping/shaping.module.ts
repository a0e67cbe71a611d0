import { Module } from '@nestjs/common';
import { ShapingService } from './shaping.service';

/** Payload shaping (shaping.service.ts): one per process, its template workers with it. */
@Module({ providers: [ShapingService], exports: [ShapingService] })
export class ShapingModule {}

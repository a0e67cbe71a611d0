import { Module } from '@nestjs/common';
import { ShapingModule } from './shaping.module';
import { TemplatesController } from './templates.controller';

/** POST /api/templates/render (docs/templates.md#trying-a-template). */
@Module({ imports: [ShapingModule], controllers: [TemplatesController] })
export class TemplatesModule {}

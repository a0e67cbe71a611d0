import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { ToInt } from './validators';

/** The platform's paging: `page_size` 1-300 and the opaque `next_page_token` it returned. */
export class PageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 300, default: 30, example: 30 })
  @IsOptional()
  @ToInt()
  @IsInt()
  @Min(1)
  @Max(300)
  page_size?: number;

  // No example: Swagger UI's "Try it out" would send it, and a made-up token fails upstream.
  @ApiPropertyOptional({
    description:
      '`next_page_token` of the previous page (e.g. `IAfJX3jsOLW7w3dokmFl84zOa0MAVGyMEB2`); ' +
      'omit for the first page. The platform expires it after 15 minutes',
  })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  @Matches(/^[A-Za-z0-9._~+/=-]*$/, { message: 'next_page_token is not a page token' })
  next_page_token?: string;
}

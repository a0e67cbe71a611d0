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

  @ApiPropertyOptional({
    description: 'From the previous page; the platform expires it after 15 minutes',
    example: 'IAfJX3jsOLW7w3dokmFl84zOa0MAVGyMEB2',
  })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  @Matches(/^[A-Za-z0-9._~+/=-]*$/, { message: 'next_page_token is not a page token' })
  next_page_token?: string;
}

import { ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsIn, IsOptional } from 'class-validator';
import { PageQuery } from '../../meetings/dto/page.query';
import { IsCalendarDate, IsNotBefore } from '../../meetings/dto/validators';
import { RECORDING_FILE_TYPES } from '../../zoom/zoom-recordings';

/** `file_type=MP4,TRANSCRIPT` (or repeated): upper-cased and split, then checked one by one. */
const toFileTypes = ({ value }: { value: unknown }): unknown => {
  const parts = Array.isArray(value) ? value : [value];
  if (!parts.every((p) => typeof p === 'string')) return value;
  return (parts as string[])
    .flatMap((p) => p.split(','))
    .map((t) => t.trim().toUpperCase())
    .filter(Boolean);
};

export class FileTypeQuery {
  @ApiPropertyOptional({
    description:
      `Keep only files of these types, comma-separated, from ${RECORDING_FILE_TYPES.join(', ')}. ` +
      "Filtered by this service: the platform's totals are left as it sent them.",
    example: 'MP4,TRANSCRIPT',
    type: String,
  })
  @IsOptional()
  @Transform(toFileTypes)
  @IsArray({ message: 'file_type must be a comma-separated list of file types' })
  @ArrayNotEmpty({ message: 'file_type must name at least one file type' })
  @ArrayMaxSize(RECORDING_FILE_TYPES.length)
  @IsIn(RECORDING_FILE_TYPES, {
    each: true,
    message: `file_type must list only ${RECORDING_FILE_TYPES.join(', ')}`,
  })
  file_type?: string[];
}

export class ListUserRecordingsQuery extends IntersectionType(PageQuery, FileTypeQuery) {
  @ApiPropertyOptional({
    example: '2025-01-01',
    description: 'yyyy-mm-dd; the platform allows at most a month between from and to',
  })
  @IsOptional()
  @IsCalendarDate()
  from?: string;

  @ApiPropertyOptional({ example: '2025-01-31', description: 'yyyy-mm-dd, not before from' })
  @IsOptional()
  @IsCalendarDate()
  @IsNotBefore('from')
  to?: string;
}

export const DELETE_ACTIONS = ['trash', 'delete'] as const;

export class DeleteRecordingsQuery {
  @ApiPropertyOptional({
    enum: DELETE_ACTIONS,
    default: 'trash',
    description: '`trash` moves the files to the trash; `delete` removes them for good',
  })
  @IsOptional()
  @IsIn(DELETE_ACTIONS)
  action?: (typeof DELETE_ACTIONS)[number];
}

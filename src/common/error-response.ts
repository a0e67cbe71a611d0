import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class ErrorDetail {
  @ApiProperty({ example: 'url' })
  field: string;

  @ApiProperty({ example: 'url must be an http or https URL' })
  message: string;
}

export class UpstreamError {
  @ApiProperty({ example: 404 })
  status: number;

  @ApiPropertyOptional({ example: 3001, nullable: true })
  code: number | string | null;

  @ApiPropertyOptional({ example: 'Meeting does not exist: 123.', nullable: true })
  message: string | null;
}

/** The one error shape of SPEC §7. */
export class ErrorResponse {
  @ApiProperty({ example: 400 })
  statusCode: number;

  @ApiProperty({ example: 'Bad Request' })
  error: string;

  @ApiProperty({ example: 'Validation failed' })
  message: string;

  @ApiPropertyOptional({ type: [ErrorDetail] })
  details?: ErrorDetail[];

  @ApiPropertyOptional({ type: UpstreamError })
  upstream?: UpstreamError;

  @ApiPropertyOptional({ description: 'RFC 6749 error description (token endpoint only)' })
  error_description?: string;
}

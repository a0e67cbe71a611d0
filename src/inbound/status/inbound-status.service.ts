import { Inject, Injectable } from '@nestjs/common';
import type { SourceStatusReader } from '../sources/inbound-source';
import { STATUS_SOURCES } from '../sources/registry';
import { InboundStatusResponse } from './inbound-status.response';

/** The readers of the sources' parts, in STATUS_SOURCES' order. */
export const STATUS_READERS = Symbol('STATUS_READERS');

/** The deployment's inbound status: each registered source's part, read together. */
@Injectable()
export class InboundStatusService {
  constructor(@Inject(STATUS_READERS) private readonly readers: SourceStatusReader[]) {}

  async status(): Promise<InboundStatusResponse> {
    const parts = await Promise.all(this.readers.map((reader) => reader.read()));
    return Object.fromEntries(STATUS_SOURCES.map((source, i) => [source.via, parts[i]]));
  }
}

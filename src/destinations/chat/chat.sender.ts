import type { DestinationSender, SenderSettings, SendTarget } from '../destination-provider';
import { HttpSender } from '../http/http.sender';
import type { Deadline, OutgoingMessage, TransportResult } from '../transport';
import type { ChatTool } from './chat-tool';

/**
 * A chat tool's incoming webhook (docs/destinations.md#chat-tools): a POST as for http (the URL
 * policy, the pool, the deadline), read the tool's way: Slack's 404 `no_service` is gone like a
 * 410, the attempt's error then saying what the tool said (not a bare `HTTP 404`), and
 * Discord's `retry_after` stands in for a Retry-After header it lacks.
 */
export class ChatSender implements DestinationSender {
  private readonly http: HttpSender;

  constructor(
    settings: SenderSettings,
    private readonly tool: ChatTool,
  ) {
    this.http = new HttpSender(settings);
  }

  open(): void {}

  async send(
    _destination: unknown,
    target: SendTarget,
    message: OutgoingMessage,
    deadline: Deadline,
  ): Promise<TransportResult> {
    const result = await this.http.send({ type: 'http' }, target, message, deadline);
    if (result.statusCode === null) return result;
    const answer = this.tool.answer(result.statusCode, result.responseBody ?? '');
    return {
      ...result,
      retryAfter: result.retryAfter ?? answer.retryAfter,
      ...(answer.gone !== null && { gone: true, error: answer.gone }),
    };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

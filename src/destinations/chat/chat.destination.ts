import type { DestinationProvider } from '../destination-provider';
import type { ChatTool } from './chat-tool';

/** A chat destination object: the type alone; the address is the webhook's `url`. */
export interface ChatDestinationObject<T extends string> {
  type: T;
}

/** The provider of a chat tool's type (docs/destinations.md#chat-tools). */
export function chatDestination<T extends string>(
  type: T,
  label: string,
  tool: ChatTool,
): DestinationProvider<ChatDestinationObject<T>> {
  return {
    type,
    label,
    properties: {},
    required: [],
    summary:
      `posts them to the ${label} incoming webhook at \`url\`, as a ${label} message (a ` +
      "built-in one, or the template's output); the address is stored encrypted and shown masked",
    check: () => null,
    chat: tool,
    async sender(settings) {
      // Loaded here: the registry is read by the config loader and the CLI, which never send.
      const { ChatSender } = await import('./chat.sender');
      return new ChatSender(settings, tool);
    },
  };
}

import { chatDestination } from '../chat/chat.destination';
import { slackTool } from './slack.message';

/** docs/destination-slack.md */
export const slackDestination = chatDestination('slack', 'Slack', slackTool);

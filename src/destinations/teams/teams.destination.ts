import { chatDestination } from '../chat/chat.destination';
import { teamsTool } from './teams.message';

/** docs/destination-teams.md */
export const teamsDestination = chatDestination('teams', 'Teams', teamsTool);

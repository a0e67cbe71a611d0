import { chatDestination } from '../chat/chat.destination';
import { discordTool } from './discord.message';

/** docs/destination-discord.md */
export const discordDestination = chatDestination('discord', 'Discord', discordTool);

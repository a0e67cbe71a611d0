import { Injectable } from '@nestjs/common';
import { ZoomClient } from '../zoom/zoom.client';
import { ZoomResult } from '../zoom/zoom.types';
import { ListMeetingsQuery } from './dto/list-meetings.query';
import { ListUsersQuery } from './dto/list-users.query';
import { MeetingStatusDto } from './dto/meeting-status.dto';
import { CreateMeetingDto, UpdateMeetingDto } from './dto/meeting.dto';

/** Meeting and user calls, passed to the platform once the request has been validated. */
@Injectable()
export class MeetingsService {
  constructor(private readonly zoom: ZoomClient) {}

  create(userId: string, body: CreateMeetingDto): Promise<ZoomResult> {
    return this.zoom.call('createMeeting', { params: { userId }, body });
  }

  list(userId: string, query: ListMeetingsQuery): Promise<ZoomResult> {
    return this.zoom.call('listUserMeetings', { params: { userId }, query: { ...query } });
  }

  get(meetingId: string): Promise<ZoomResult> {
    return this.zoom.call('getMeeting', { params: { meetingId } });
  }

  update(meetingId: string, body: UpdateMeetingDto): Promise<ZoomResult> {
    return this.zoom.call('updateMeeting', { params: { meetingId }, body });
  }

  remove(meetingId: string): Promise<ZoomResult> {
    return this.zoom.call('deleteMeeting', { params: { meetingId } });
  }

  setStatus(meetingId: string, body: MeetingStatusDto): Promise<ZoomResult> {
    return this.zoom.call('updateMeetingStatus', { params: { meetingId }, body });
  }

  listUsers(query: ListUsersQuery): Promise<ZoomResult> {
    return this.zoom.call('listUsers', { query: { ...query } });
  }
}

import { Test } from '@nestjs/testing';
import { ConfigModule } from '../config/config.module';
import { loadConfig } from '../config/load-config';
import { ZoomClient } from './zoom.client';
import { ZoomModule } from './zoom.module';

/** Worker-role modules import ZoomModule with nothing but the configuration around it. */
describe('ZoomModule', () => {
  it.each([
    [{}, false, ['ZOOM_ACCOUNT_ID', 'ZOOM_CLIENT_ID', 'ZOOM_CLIENT_SECRET']],
    [{ ZOOM_ACCOUNT_ID: 'a', ZOOM_CLIENT_ID: 'b', ZOOM_CLIENT_SECRET: 'c' }, true, []],
  ])('builds from the configuration alone (%j)', async (env, configured, missing) => {
    const module = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadConfig(env)), ZoomModule],
    }).compile();
    const client = module.get(ZoomClient);
    expect(client.configured).toBe(configured);
    expect(client.missingCredentials).toEqual(missing);
    if (!configured) {
      await expect(client.getMeetingRecordings('123', {})).rejects.toMatchObject({
        failure: 'not_configured',
      });
    }
    await module.close();
  });
});

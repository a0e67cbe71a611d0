import { describeContract } from '../support/store-backends';

describeContract('RecordingDownloadStore', (backend) => {
  const inAnHour = () => new Date(Date.now() + 3_600_000);

  it('keeps a file’s download URL and token, a fresher token replacing it, an older not', async () => {
    const { downloads } = backend().stores;
    const meeting = `meeting-${Math.random()}`;
    const expiresAt = inAnHour();
    await downloads.save(
      meeting,
      [{ fileRef: 'f1', downloadUrl: 'https://dl/1' }],
      'tok-1',
      expiresAt,
    );
    expect(await downloads.find(meeting, 'f1')).toEqual({
      downloadUrl: 'https://dl/1',
      downloadTokenEncrypted: 'tok-1',
      expiresAt,
    });
    const later = new Date(expiresAt.getTime() + 60_000);
    await downloads.save(meeting, [{ fileRef: 'f1', downloadUrl: 'https://dl/2' }], 'tok-2', later);
    const older = new Date(expiresAt.getTime() - 60_000);
    await downloads.save(meeting, [{ fileRef: 'f1', downloadUrl: 'https://dl/3' }], 'tok-3', older);
    expect(await downloads.find(meeting, 'f1')).toEqual({
      downloadUrl: 'https://dl/2',
      downloadTokenEncrypted: 'tok-2',
      expiresAt: later,
    });
    expect(await downloads.find(meeting, 'f2')).toBeNull();
  });

  it('drops expired entries when saving', async () => {
    const { downloads } = backend().stores;
    const meeting = `meeting-${Math.random()}`;
    await downloads.save(
      meeting,
      [{ fileRef: 'old', downloadUrl: 'https://dl/o' }],
      't',
      new Date(Date.now() - 1000),
    );
    await downloads.save(
      meeting,
      [{ fileRef: 'new', downloadUrl: 'https://dl/n' }],
      't',
      inAnHour(),
    );
    expect(await downloads.find(meeting, 'old')).toBeNull();
    expect(await downloads.find(meeting, 'new')).not.toBeNull();
  });
});

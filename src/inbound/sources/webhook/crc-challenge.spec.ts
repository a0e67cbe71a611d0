import { answerCrcChallenge } from './crc-challenge';

describe('answerCrcChallenge', () => {
  it('answers the platform documentation vector', () => {
    expect(answerCrcChallenge('test_secret_token', 'qgg8vlvZRS6UYooatFL8Aw')).toEqual({
      plainToken: 'qgg8vlvZRS6UYooatFL8Aw',
      encryptedToken: '4efea922935c335d972476de138d2208a0d46ab28c79ee592d497a1b216419b8',
    });
  });
});

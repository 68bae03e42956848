import { describe, expect, test } from 'bun:test';
import { newEndpointSecret, signatureHeader, signPayload } from './signature.ts';

describe('Standard Webhooks signing', () => {
  test('matches the published test vector', () => {
    const signature = signPayload(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  test('a different body, id or timestamp changes the signature', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const base = signPayload(secret, 'msg_1', 1, '{}');
    expect(signPayload(secret, 'msg_2', 1, '{}')).not.toBe(base);
    expect(signPayload(secret, 'msg_1', 2, '{}')).not.toBe(base);
    expect(signPayload(secret, 'msg_1', 1, '{ }')).not.toBe(base);
  });

  test('the header lists one signature per secret, space-separated', () => {
    const [a, b] = [newEndpointSecret(), newEndpointSecret()];
    const header = signatureHeader([a, b], 'msg_1', 1, '{}');
    expect(header.split(' ')).toEqual([signPayload(a, 'msg_1', 1, '{}'), signPayload(b, 'msg_1', 1, '{}')]);
  });

  test('secrets are whsec_ + base64 of 32 bytes', () => {
    const secret = newEndpointSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
  });
});

import { describe, expect, test } from 'bun:test';
import { ConfigError, commonServiceEnv, loadConfig, natsServers, Port, Type } from './index.ts';

const Schema = Type.Object({ PORT: Port(8080), TOKEN: Type.String({ minLength: 4 }), DEBUG: Type.Boolean({ default: false }) });

describe('loadConfig', () => {
  test('applies defaults and converts strings', () => {
    expect(loadConfig(Schema, { TOKEN: 'abcd', DEBUG: 'true' })).toEqual({ PORT: 8080, TOKEN: 'abcd', DEBUG: true });
    expect(loadConfig(Schema, { TOKEN: 'abcd', PORT: '9000' }).PORT).toBe(9000);
  });
  test('names every missing or bad variable', () => {
    try {
      loadConfig(Schema, { PORT: 'eighty' });
      throw new Error('should have thrown');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      // The wording of a schema failure comes from TypeBox's error function, which libs/http sets when loaded.
      const problems = [...(error as ConfigError).problems].sort();
      expect(problems).toHaveLength(2);
      expect(problems[0]).toMatch(/^PORT is invalid: (expected|must be an) integer$/);
      expect(problems[1]).toBe('TOKEN is required');
    }
  });
});

describe('common service variables', () => {
  const Common = Type.Object(commonServiceEnv);
  const base = { INTERNAL_TOKEN: 'internal-token-123456' };

  test('NATS_URL takes one server or a comma-separated cluster list', () => {
    expect(loadConfig(Common, base).NATS_URL).toBe('nats://127.0.0.1:4222');
    const list = 'nats://10.0.0.1:4222, nats://10.0.0.2:4222 ,nats://10.0.0.3:4222';
    expect(natsServers(loadConfig(Common, { ...base, NATS_URL: list }).NATS_URL)).toEqual([
      'nats://10.0.0.1:4222',
      'nats://10.0.0.2:4222',
      'nats://10.0.0.3:4222',
    ]);
    expect(natsServers('nats://a:4222')).toEqual(['nats://a:4222']);
    for (const bad of ['nats://a:4222,,nats://b:4222', 'nats://a:4222,', 'nats://a b:4222']) {
      expect(() => loadConfig(Common, { ...base, NATS_URL: bad })).toThrow(/NATS_URL is invalid/);
    }
  });

  test('stream replicas (1..5, default 1) and the pool size (default 5) are bounded integers', () => {
    const config = loadConfig(Common, base);
    expect(config.NATS_STREAM_REPLICAS).toBe(1);
    expect(config.DB_POOL_MAX).toBe(5);
    expect(loadConfig(Common, { ...base, NATS_STREAM_REPLICAS: '3', DB_POOL_MAX: '12' })).toMatchObject({
      NATS_STREAM_REPLICAS: 3,
      DB_POOL_MAX: 12,
    });
    expect(() => loadConfig(Common, { ...base, NATS_STREAM_REPLICAS: '6' })).toThrow(/NATS_STREAM_REPLICAS is invalid/);
    expect(() => loadConfig(Common, { ...base, DB_POOL_MAX: '0' })).toThrow(/DB_POOL_MAX is invalid/);
  });
});

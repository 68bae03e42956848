import { describe, expect, test } from 'bun:test';
import { ConfigError, loadConfig, Port, Type } from './index.ts';

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
      expect([...(error as ConfigError).problems].sort()).toEqual(['PORT is invalid: expected integer', 'TOKEN is required']);
    }
  });
});

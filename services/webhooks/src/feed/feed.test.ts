import { describe, expect, test } from 'bun:test';
import { AppError, type Logger } from '@crm/http';
import { eventQueryErrors, parseTypeFilter } from './model.ts';
import { cachedWatermark } from './watermark.ts';

const quiet = { debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;

describe('watermark cache', () => {
  test('reuses a value for refreshMs, shares one read between concurrent callers, then reads again', async () => {
    let clock = 0;
    let reads = 0;
    let floor = 10;
    const watermark = cachedWatermark({
      read: async () => {
        reads++;
        await new Promise((r) => setTimeout(r, 5));
        return floor;
      },
      refreshMs: 150,
      logger: quiet,
      now: () => clock,
    });
    expect(await Promise.all([watermark.current(), watermark.current(), watermark.current()])).toEqual([10, 10, 10]);
    expect(reads).toBe(1);
    floor = 12;
    clock = 149;
    expect(await watermark.current()).toBe(10);
    clock = 150;
    expect(await watermark.current()).toBe(12);
    expect(reads).toBe(2);
  });

  test('keeps the last value while the floor cannot be read; 503 before any value was read', async () => {
    let clock = 0;
    let failing = true;
    const watermark = cachedWatermark({
      read: async () => {
        if (failing) throw new Error('no responders');
        return 7;
      },
      refreshMs: 100,
      logger: quiet,
      now: () => clock,
    });
    const refused = await watermark.current().catch((e) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).type).toBe('service_unavailable');
    failing = false;
    expect(await watermark.current()).toBe(7);
    failing = true;
    clock = 1000;
    expect(await watermark.current()).toBe(7);
  });
});

describe('feed query rules', () => {
  test('type: known event types, distinct and sorted; never webhook.test, empty entries or unknown types', () => {
    expect(parseTypeFilter('contact.updated, contact.created,contact.updated')).toEqual({ types: ['contact.created', 'contact.updated'] });
    for (const bad of ['contact.nope', 'contact.created,', ',', 'webhook.test', 'CONTACT.CREATED', 'contact.created,,order.created'])
      expect(parseTypeFilter(bad)).toHaveProperty('problem');
  });
  test('sort is refused, whatever its value; a bad type is named', () => {
    expect(eventQueryErrors({ sort: 'id' }).map((d) => d.field)).toEqual(['sort']);
    expect(eventQueryErrors({ sort: '-id', type: 'x.y' }).map((d) => d.field)).toEqual(['sort', 'type']);
    expect(eventQueryErrors({ type: ['x.y', 'contact.created'] })).toEqual([]);
    expect(eventQueryErrors({ per_page: '5' })).toEqual([]);
  });
});

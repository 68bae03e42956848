// Runs with libs/contracts alone (no libs/http, no Elysia): the strict formats come with the contracts.
import { describe, expect, test } from 'bun:test';
import { eventPayloadErrors } from './events.ts';
import { isDate, isDateTime } from './formats.ts';
import { Contact } from './resources/contact.ts';

const contact = { ...(Contact.examples as Record<string, unknown>[])[0] };

describe('event payloads check date-time strictly without libs/http', () => {
  test('a payload with a real instant conforms', () => {
    expect(eventPayloadErrors('contact.created', { ...contact, updated_at: '2024-02-29T23:59:59.123+01:00' })).toEqual([]);
  });

  test('a day that does not exist in the calendar is an error on its field', () => {
    const errors = eventPayloadErrors('contact.created', { ...contact, created_at: '2026-02-30T10:00:00Z' });
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => e.startsWith('/created_at'))).toBe(true);
  });

  test('an hour past 23 and a string new Date() accepts are errors too', () => {
    expect(eventPayloadErrors('contact.updated', { ...contact, updated_at: '2026-01-01T24:00:00Z' })).not.toEqual([]);
    expect(eventPayloadErrors('contact.updated', { ...contact, updated_at: 'January 1, 2026' })).not.toEqual([]);
  });
});

describe('the formats', () => {
  test('leap years follow the Gregorian rule', () => {
    expect(isDate('2024-02-29')).toBe(true);
    expect(isDate('2000-02-29')).toBe(true);
    expect(isDate('1900-02-29')).toBe(false);
    expect(isDate('2026-04-31')).toBe(false);
    expect(isDate('0000-01-01')).toBe(false);
  });

  test('date-time needs a zone and valid clock fields', () => {
    expect(isDateTime('2026-11-23T20:00:00Z')).toBe(true);
    expect(isDateTime('2026-11-23t20:00:00.123456789-05:30')).toBe(true);
    expect(isDateTime('2026-11-23T20:00:00')).toBe(false);
    expect(isDateTime('2026-11-23T20:60:00Z')).toBe(false);
    expect(isDateTime('2026-11-23T20:00:00+24:00')).toBe(false);
  });
});

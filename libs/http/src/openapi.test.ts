import { describe, expect, test } from 'bun:test';
import { Type } from '@sinclair/typebox';
import { t } from 'elysia';
import { describeRoutes, describeSchema } from './openapi.ts';

describe('describeSchema', () => {
  test('keeps JSON Schema keywords only, walking by keyword (a property named like a keyword stays)', () => {
    const schema = Type.Object({
      nullable: Type.String({ pattern: '\\S', patternMessage: 'must not be empty' } as object),
      examples: Type.Unsafe({ type: 'object', maxBytes: 16, errorMessage: 'too big', 'x-note': 'kept' }),
    });
    expect(describeSchema({ ...schema, nullable: true, examples: [{ nullable: 'a', examples: {} }] })).toEqual({
      type: 'object',
      required: ['nullable', 'examples'],
      properties: { nullable: { type: 'string', pattern: '\\S' }, examples: { type: 'object', 'x-note': 'kept' } },
      examples: [{ nullable: 'a', examples: {} }],
    });
  });

  test("Elysia's coercion union is the integer; a union of literals is an enum", () => {
    expect(describeSchema(t.Integer({ minimum: 1 }))).toMatchObject({ type: 'integer', minimum: 1 });
    expect(describeSchema(t.Integer({ minimum: 1 })).anyOf).toBeUndefined();
    expect(describeSchema(Type.Union([Type.Literal('open'), Type.Literal('won')], { title: 'Status' }))).toEqual({
      type: 'string',
      enum: ['open', 'won'],
      title: 'Status',
    });
    // A nullable literal is not collapsed (null is no literal of the same type).
    expect(describeSchema(Type.Union([Type.Literal('a'), Type.Null()])).anyOf).toHaveLength(2);
  });
});

describe('describeRoutes', () => {
  test('a route may describe answers that are not JSON schemas by hand (`detail.responses`)', () => {
    const paths = describeRoutes([
      {
        method: 'GET',
        path: '/v1/files/:id',
        hooks: {
          params: t.Object({ id: t.Integer({ minimum: 1, description: 'File id' }) }),
          detail: {
            summary: 'Download',
            responses: { 200: { content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } } },
          },
        },
      },
    ]);
    const op = paths['/v1/files/{id}']?.get;
    expect(op?.responses['200']).toEqual({
      description: 'Success',
      content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
    });
    expect(op?.parameters).toEqual([
      { name: 'id', in: 'path', required: true, description: 'File id', schema: { minimum: 1, type: 'integer' } },
    ]);
  });
});

import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_VERSION } from './document.ts';

test("the OpenAPI document's info.version is the newest release of CHANGELOG.md", () => {
  const changelog = readFileSync(join(import.meta.dir, '../../../../CHANGELOG.md'), 'utf8');
  const newest = /^## \[(\d+\.\d+\.\d+)\]/m.exec(changelog)?.[1];
  expect(newest).toBe(API_VERSION);
});

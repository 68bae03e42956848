import { afterAll } from 'bun:test';
import { stopSharedStack } from './stack.ts';

// Registered from bunfig.toml's test preload: runs once after every test file has finished.
afterAll(async () => {
  await stopSharedStack();
});

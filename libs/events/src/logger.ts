/**
 * What libs/events needs of a logger: structured lines. The services' logger (libs/http)
 * satisfies it; declared here so the events library does not depend on the HTTP library.
 */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

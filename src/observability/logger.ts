import type { LoggerService } from '@nestjs/common';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { AppConfig } from '../config/env.schema.js';
import { REDACTED_PATHS, scrubSecrets } from './secrets.js';

export type { DestinationStream, Logger } from 'pino';

/**
 * The service's one JSON logger. Credentials are redacted by path and, inside any message text, by
 * shape (see secrets.ts).
 */
export function createRootLogger(config: Pick<AppConfig, 'LOG_LEVEL'>, destination?: DestinationStream): Logger {
  return pino(
    {
      level: config.LOG_LEVEL,
      base: { service: 'knowledge-query-service' },
      timestamp: pino.stdTimeFunctions.isoTime,
      messageKey: 'message',
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
      hooks: {
        logMethod(args, method) {
          // In place: `args` is this call's own array, and most calls would otherwise copy it for nothing.
          for (let i = 0; i < args.length; i++) {
            const arg: unknown = args[i];
            if (typeof arg === 'string') args[i] = scrubSecrets(arg);
          }
          method.apply(this, args);
        },
      },
      serializers: { err: (error: unknown) => serializeError(error) },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: scrubSecrets(String(error)) };
  return { type: error.name, message: scrubSecrets(error.message), stack: scrubSecrets(error.stack ?? '') };
}

/**
 * Nest's own start-up narration (each module initialized, each of about 100 routes mapped): debug, so
 * that a boot prints the few lines main.ts writes. `LOG_LEVEL=debug` shows it again.
 */
const FRAMEWORK_CHATTER = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/** Nest's framework and `new Logger(context)` messages, written through the same pino logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly root: Logger) {}

  log(message: unknown, ...rest: unknown[]) {
    const context = rest.at(-1);
    this.write(typeof context === 'string' && FRAMEWORK_CHATTER.has(context) ? 'debug' : 'info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]) {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]) {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]) {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]) {
    this.write('fatal', message, rest);
  }

  /** Nest passes `(message, [stack,] context)`: the last string is the context. */
  private write(level: pino.Level, message: unknown, rest: unknown[]) {
    if (!this.root.isLevelEnabled(level)) return;
    const strings = rest.filter((item): item is string => typeof item === 'string');
    const context = strings.length > 0 ? strings[strings.length - 1] : undefined;
    const stack = level === 'error' && strings.length > 1 ? strings[0] : undefined;
    const fields = { context, ...(stack ? { stack: scrubSecrets(stack) } : {}) };
    if (message instanceof Error) this.root[level]({ ...fields, err: message }, message.message);
    else if (typeof message === 'object' && message !== null) this.root[level]({ ...fields, ...message });
    else this.root[level](fields, String(message));
  }
}

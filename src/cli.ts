import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { parseArgs } from 'node:util';
import { RegisterDto } from './auth/dto/auth.dto.js';
import { toFieldErrors } from './common/validation.js';
import { ConfigError, loadConfig } from './config/env.schema.js';

const USAGE = `Usage: npm run cli -- create-admin --email <address> (--password <password> | --password-stdin) [--promote-existing]

Commands:
  create-admin   Create a platform administrator, or set the password of an existing one.
                 Uses DATABASE_URL, or the embedded store under DATA_DIR; runs pending migrations first.
                 --password-stdin reads the password from the first line of standard input, which keeps
                 it out of the process list (e.g. printf '%s' "$PASSWORD" | npm run cli -- create-admin ...).
                 --promote-existing is needed to make an existing ordinary account an administrator
                 (anyone can sign up with an address first): the given password replaces its own, and
                 every session of the account is ended. A new password for an administrator ends its
                 sessions too.`;

/** Exit codes: 0 done, 1 the work failed (configuration, database), 2 bad command line. */
class UsageError extends Error {}

async function readFirstLine(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text.split(/\r?\n/)[0];
}

interface CreateAdminArgs {
  email: string;
  password: string;
  promoteExisting: boolean;
}

async function parseCommandLine(argv: string[]): Promise<CreateAdminArgs> {
  const command = argv.at(0);
  const rest = argv.slice(1);
  if (command === undefined) throw new UsageError('no command given');
  if (command !== 'create-admin') throw new UsageError(`unknown command "${command}"`);
  let values: { email?: string; password?: string; 'password-stdin'?: boolean; 'promote-existing'?: boolean };
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        email: { type: 'string' },
        password: { type: 'string' },
        'password-stdin': { type: 'boolean' },
        'promote-existing': { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    // Node's message may quote the offending argument, which could be the password: say it in our words.
    const code = (error as { code?: string }).code;
    throw new UsageError(
      code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
        ? 'unknown option'
        : code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'
          ? 'unexpected argument'
          : 'an option is missing its value (write --password=-value for a value that starts with a dash)',
    );
  }
  if (!values.email) throw new UsageError('--email is required');
  if (values.password !== undefined && values['password-stdin'])
    throw new UsageError('give --password or --password-stdin, not both');
  if (values['password-stdin']) values.password = await readFirstLine(process.stdin);
  if (!values.password) throw new UsageError('--password (or --password-stdin) is required');
  // The same rules as sign-up: a valid address, a password of 8+ characters that is not all digits.
  const dto = plainToInstance(RegisterDto, { email: values.email, password: values.password });
  const problems = toFieldErrors(validateSync(dto, { stopAtFirstError: true }));
  const [field, messages] = Object.entries(problems)[0] ?? [];
  if (field) throw new UsageError(`--${field}: ${messages[0]}`);
  return { email: dto.email, password: dto.password, promoteExisting: values['promote-existing'] === true };
}

async function createAdmin({ email, password, promoteExisting }: CreateAdminArgs): Promise<void> {
  const config = { ...loadConfig(), MIGRATIONS_RUN: true };
  // Loaded only now, so that a usage error answers without loading the whole application.
  const [{ NestFactory }, { AppModule }, { UsersService }, { openDatabaseTarget }] = await Promise.all([
    import('@nestjs/core'),
    import('./app.module.js'),
    import('./auth/users.service.js'),
    import('./database/database.js'),
  ]);
  const target = await openDatabaseTarget(config);
  try {
    // The whole application context, without HTTP: the same wiring, migrations and rules as the service.
    const context = await NestFactory.createApplicationContext(AppModule.forRoot(config, target), {
      logger: false,
      abortOnError: false,
    });
    try {
      const { user, outcome } = await context.get(UsersService).ensureAdmin(email, password, { promoteExisting });
      console.log(
        {
          created: `Created administrator ${user.email}.`,
          promoted: `Promoted ${user.email} to administrator and set the given password; its sessions were ended.`,
          password_changed: `Set the given password for administrator ${user.email}; its sessions were ended.`,
          unchanged: `${user.email} is already an administrator with this password; nothing changed.`,
        }[outcome],
      );
    } finally {
      await context.close();
    }
  } finally {
    await target.close();
  }
}

async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = await parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`error: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  try {
    await createAdmin(args);
    return 0;
  } catch (error) {
    // Already loaded by createAdmin: this import costs nothing.
    const { AdminPromotionRefusedError } = await import('./auth/users.service.js');
    if (error instanceof AdminPromotionRefusedError) {
      console.error(
        `create-admin refused: ${(error as Error).message}. If the account is yours, run again with --promote-existing.`,
      );
      return 1;
    }
    const message =
      error instanceof Error
        ? error.message
        : String((error as { message?: unknown } | null | undefined)?.message ?? error);
    console.error(error instanceof ConfigError ? message : `create-admin failed: ${message}`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  // Open handles (pools, timers) must not keep a finished command alive.
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

// `npm start`'s prestart: builds (`npm run build`) only when what the build reads has changed since the
// last build it made, or when the output is missing (a fresh clone) or was rewritten since by another
// build (`npm run build` of other sources). A full build takes 15-20 s; this check a few milliseconds.
// The inputs' digest covers file contents and names, so a checkout, an edit, a new or a deleted file
// all rebuild, whatever their modification times say; the outputs are fingerprinted by name, size and
// modification time.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the build reads: directories (walked) and single files, relative to the project. */
export const BUILD_INPUTS = ['src', 'web', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];
/** Inside the inputs, what the build writes or never reads. */
const SKIPPED = new Set(['web/dist', 'node_modules']);
/** What a start needs. */
export const BUILD_OUTPUTS = ['dist/main.js', 'web/dist/index.html'];
/** Where the build writes: fingerprinted, so a build made by other means is noticed. */
const OUTPUT_DIRECTORIES = ['dist', 'web/dist'];
export const STAMP = 'dist/.build-stamp.json';

function filesUnder(root, path) {
  return readdirSync(join(root, path), { withFileTypes: true }).flatMap((entry) => {
    const child = `${path}/${entry.name}`;
    if (SKIPPED.has(child) || entry.name === 'node_modules') return [];
    if (entry.isDirectory()) return filesUnder(root, child);
    return entry.isFile() ? [child] : [];
  });
}

/** SHA-256 over every input file's path and content, in a stable order. */
export function inputsDigest(root) {
  const hash = createHash('sha256');
  const files = BUILD_INPUTS.flatMap((input) => {
    const full = join(root, input);
    if (!existsSync(full)) return [];
    return statSync(full).isDirectory() ? filesUnder(root, input) : [input];
  }).sort();
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** SHA-256 over the build's output files' names, sizes and modification times (not the stamp). */
export function outputsFingerprint(root) {
  const hash = createHash('sha256');
  const files = OUTPUT_DIRECTORIES.flatMap((directory) =>
    existsSync(join(root, directory)) ? filesUnder(root, directory) : [],
  )
    .filter((file) => file !== STAMP)
    .sort();
  for (const file of files) {
    const { size, mtimeMs } = statSync(join(root, file));
    hash.update(`${file}\0${size}\0${mtimeMs}\0`);
  }
  return hash.digest('hex');
}

function readStamp(root) {
  try {
    return JSON.parse(readFileSync(join(root, STAMP), 'utf8'));
  } catch {
    return null;
  }
}

/** Why a build is needed, or null when the last build's output is current. */
export function buildReason(root) {
  const missing = BUILD_OUTPUTS.find((output) => !existsSync(join(root, output)));
  if (missing) return `${missing} is missing`;
  const stamp = readStamp(root);
  if (!stamp) return 'no record of the last build';
  if (stamp.inputs !== inputsDigest(root)) return 'the sources changed since the last build';
  if (stamp.outputs !== outputsFingerprint(root)) return 'the output was rebuilt by other means since';
  return null;
}

/** Records a successful build of the inputs whose digest is given. */
export function recordBuild(root, inputs = inputsDigest(root)) {
  writeFileSync(join(root, STAMP), `${JSON.stringify({ inputs, outputs: outputsFingerprint(root) })}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = process.cwd();
  const reason = buildReason(root);
  if (reason === null) {
    process.stderr.write(
      `Build is current (${relative(root, join(root, STAMP))} matches the sources): not rebuilding.\n`,
    );
  } else {
    process.stderr.write(`Building: ${reason}.\n`);
    // The digest is taken before the build: an edit made while it runs rebuilds on the next start.
    const digest = inputsDigest(root);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const build = spawnSync(npm, ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) process.exit(build.status ?? 1);
    recordBuild(root, digest);
  }
}

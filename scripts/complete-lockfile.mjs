// Completes package-lock.json with the platform binaries of other systems that npm left out.
//
// Why: `npm ci` refuses a lockfile that lacks any optional dependency a package declares, even one
// for another platform. npm records those entries from the registry's metadata, and the registry
// mirror this project is developed against serves only the Linux builds of some packages (Biome's
// darwin, win32, android and musl binaries answer 404 there), so `npm install` here writes a
// lockfile that `npm ci` rejects everywhere. This script adds the missing entries the way npm would
// write them (exact version, os/cpu/libc taken from the package's platform suffix, dev and licence
// of the package that declares them). They carry no `integrity`: npm then downloads them by exact
// version on the platform that needs them and records nothing to check against. Run it after
// `npm install` changes the lockfile: `node scripts/complete-lockfile.mjs` (`--check` only reports).
import { readFileSync, writeFileSync } from 'node:fs';

const LOCKFILE = new URL('../package-lock.json', import.meta.url);
const PLATFORM =
  /-(android|darwin|freebsd|linux|openbsd|sunos|win32|aix)-(arm|arm64|ia32|loong64|ppc64|riscv64|s390x|x64)(-(musl|gnu|msvc))?$/;

const lock = JSON.parse(readFileSync(LOCKFILE, 'utf8'));
const added = [];
const entries = { ...lock.packages };
for (const [key, pkg] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(pkg.optionalDependencies ?? {})) {
    const nested = `${key}/node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (lock.packages[nested] || entries[hoisted]) continue;
    const match = PLATFORM.exec(name);
    if (!match)
      throw new Error(`${key} declares optional ${name}, which is missing and not a platform build`);
    if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version))
      throw new Error(`${name}: "${version}" is not an exact version`);
    const [, os, cpu, , libc] = match;
    entries[hoisted] = {
      version,
      cpu: [cpu],
      ...(pkg.dev ? { dev: true } : {}),
      ...(os === 'linux' ? { libc: [libc === 'musl' ? 'musl' : 'glibc'] } : {}),
      ...(pkg.license ? { license: pkg.license } : {}),
      optional: true,
      os: [os],
      ...(pkg.engines ? { engines: pkg.engines } : {}),
    };
    added.push(`${name}@${version}`);
  }
}

if (process.argv.includes('--check')) {
  if (added.length > 0) {
    console.error(`package-lock.json lacks ${added.length} platform builds: ${added.join(', ')}`);
    console.error('Run: node scripts/complete-lockfile.mjs');
    process.exit(1);
  }
  console.log('package-lock.json lists every platform build');
} else {
  // npm keeps the root entry first and sorts the rest by path.
  const keys = Object.keys(entries).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1));
  lock.packages = Object.fromEntries(keys.map((k) => [k, entries[k]]));
  writeFileSync(LOCKFILE, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(added.length ? `added ${added.join(', ')}` : 'nothing to add');
}

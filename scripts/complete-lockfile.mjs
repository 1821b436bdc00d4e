#!/usr/bin/env node
// Records in package-lock.json the platform-specific optional packages (native binaries for other
// operating systems and CPUs) that the registry used to write the lock did not serve. npm ci insists
// that every optional dependency has an entry; with os/cpu set, npm skips these on other platforms
// and fetches them by version where they apply. Run after `npm install` changes the lock.
import { readFileSync, writeFileSync } from 'node:fs';

const OSES = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openbsd', 'netbsd', 'sunos', 'aix', 'openharmony'];
const CPUS = ['arm64', 'x64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el', 'wasm32'];
const LIBC = { gnu: 'glibc', gnueabihf: 'glibc', musl: 'musl', musleabihf: 'musl' };

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const added = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const where = `node_modules/${name}`;
    if (lock.packages[where]) continue;
    const parts = name.split('/').pop().split('-');
    const os = parts.find((p) => OSES.includes(p));
    const cpu = parts.find((p) => CPUS.includes(p));
    if (!os && !cpu) continue;
    const libc = parts.map((p) => LIBC[p]).find(Boolean);
    lock.packages[where] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...(os ? { os: [os] } : {}),
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(libc && os === 'linux' ? { libc: [libc] } : {}),
    };
    added.push(`${name}@${version} (for ${path || 'the project'})`);
  }
}
const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
lock.packages = sorted;
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(added.length ? `Recorded ${added.length} platform packages:\n  ${added.join('\n  ')}` : 'The lock file is complete.');

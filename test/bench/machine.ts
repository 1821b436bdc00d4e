import { readFileSync } from 'node:fs';
import * as os from 'node:os';

export interface Machine {
  readonly date: string;
  readonly node: string;
  readonly cpu: string;
  readonly cores: number;
  /** 1-minute load average when the run started and when it ended: other work skews timings. */
  readonly loadAverage: { readonly start: number; readonly end: number };
}

export const loadAverage = (): number => os.loadavg()[0] ?? 0;

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) return line.slice(line.indexOf(':') + 1).trim();
  } catch {
    // Not Linux: fall through to what Node reports.
  }
  return os.cpus()[0]?.model.trim() ?? 'unknown CPU';
}

/** What the figures were measured on; every report names it. */
export function describeMachine(now: Date, loadAtStart: number): Machine {
  return { date: now.toISOString(), node: process.version, cpu: cpuModel(), cores: os.availableParallelism(), loadAverage: { start: loadAtStart, end: loadAverage() } };
}
